"""The ``kiro`` importer (docs/importers.md, "The kiro importer"): Kiro steering files read in place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core.model import Facts, ParseResult, RuleFile
from rules_importers import kiro

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import FIXTURES, by_id, copy_fixture, discover, relative_errors, statuses
from importer_helpers import text_with_front as steering

FIXTURE = FIXTURES / "kiro"
STEERING = Path(".kiro") / "steering"
rules = by_id
errors = relative_errors


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped Kiro repository, as a git repository."""
    return copy_fixture(rule_project, "kiro", git=True)


def write_steering(project, files: dict, *, home: bool = False) -> None:
    root = (project.home if home else project.cwd) / STEERING
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def only_kiro(project, **facts):
    result, evaluation = statuses(project, **facts)
    return {k: v for k, v in result.items() if k in rules(project, plugin="kiro")}, evaluation


def read(project, name: str, **facts):
    engine = project.engine()
    return engine.read_rule(Facts(cwd=str(project.cwd), **facts), name)


# -- the fixture repository ---------------------------------------------------------------


def test_fixture_discovery_order_ids_reference_and_real_paths(repo):
    found = discover(repo)
    assert found.errors == ()
    rows = [(r.id, r.relative_path, r.source, os.path.relpath(r.file.path, repo.cwd)) for r in found.rules]
    assert rows == [(stem, f"{stem}.md", "project", f".kiro/steering/{stem}.md") for stem in (
        "branch-strategy", "kiro-file-access", "product-direction", "tech", "testing", "troubleshooting")]
    assert {r.file.plugin for r in found.rules} == {"kiro"}


def test_inclusion_always_and_no_frontmatter_are_always_rules(repo):
    found = rules(repo)
    assert found["tech"].always_apply and found["tech"].load == "pinned"
    plain = found["kiro-file-access"]  # no frontmatter at all: Kiro's default
    assert plain.always_apply and plain.body == (FIXTURE / STEERING / "kiro-file-access.md").read_text()
    assert plain.description == ".kiro ディレクトリのファイル操作"
    result, _ = only_kiro(repo)
    assert result["tech"] == ("active", ()) and result["kiro-file-access"] == ("active", ())


def test_filematch_with_a_pattern_list_is_touched_globs(repo):
    rule = rules(repo)["testing"]
    assert rule.globs == ("**/*.test.*", "**/*.spec.*", "**/playwright.config.*", "**/vitest.config.*")
    assert rule.match == "touched" and rule.load == "pinned" and not rule.always_apply
    assert only_kiro(repo, touched=["src/add.test.ts"])[0]["testing"] == ("active", ("touched src/add.test.ts",))
    assert only_kiro(repo)[0]["testing"][0] == "inactive"  # src/add.test.ts exists: touched only


@pytest.mark.parametrize("pattern, globs", [
    ('"components/**/*.tsx"', ("components/**/*.tsx",)),
    ("'src/**/*.{ts,tsx}, docs/**'", ("src/**/*.{ts,tsx}", "docs/**")),
    ('\n  - "app/api/**/*"\n  - "!app/api/legacy/**"', ("app/api/**/*", "!app/api/legacy/**")),
])
def test_filematch_pattern_as_a_string_a_comma_string_or_a_yaml_list(rule_project, pattern, globs):
    write_steering(rule_project, {"x.md": steering(f"inclusion: fileMatch\nfileMatchPattern: {pattern}\n")})
    assert rules(rule_project)["x"].globs == globs


def test_auto_with_a_description_is_on_demand_and_listed_with_it(repo):
    rule = rules(repo)["branch-strategy"]
    assert rule.load == "on-demand" and not rule.always_apply and rule.globs == ()
    assert rule.description.startswith("ブランチ戦略、PR運用、マージルール。")
    result, evaluation = only_kiro(repo)
    assert result["branch-strategy"][0] == "on-demand"
    assert f"- branch-strategy.md — {rule.description} (fetch with the read_rule tool)" in evaluation.section


# -- manual steering ----------------------------------------------------------------------


def test_manual_is_listed_nowhere_without_its_name_in_the_prompt(repo):
    result, evaluation = only_kiro(repo, prompt="the build fails")
    assert result["troubleshooting"] == (
        "inactive", ("manual steering file: name #troubleshooting in the prompt to include it",))
    assert "troubleshooting" not in evaluation.section


def test_manual_is_offered_when_the_prompt_names_hash_stem(repo):
    result, evaluation = only_kiro(repo, prompt="build broke, see #troubleshooting please")
    assert result["troubleshooting"] == ("on-demand", ("the prompt names #troubleshooting",))
    assert "- troubleshooting.md — トラブルシューティングガイド (fetch with the read_rule tool)" in evaluation.section


@pytest.mark.parametrize("prompt, named", [
    ("#troubleshooting", True), ("(#troubleshooting)", True), ("#Troubleshooting.", True),
    ("read #troubleshooting.md", True), ("troubleshooting", False), ("#troubleshooting-guide", False),
    ("##troubleshooting", False), ("issue#troubleshooting", False), ("#troubleshootings", False),
])
def test_manual_needs_hash_stem_as_a_word(repo, prompt, named):
    assert only_kiro(repo, prompt=prompt)[0]["troubleshooting"][0] == ("on-demand" if named else "inactive")


def test_manual_is_readable_by_path_and_by_rule_url_whatever_the_prompt(repo):
    body = (FIXTURE / STEERING / "troubleshooting.md").read_text().split("---\n", 2)[2]
    assert read(repo, "troubleshooting.md").body == body
    assert read(repo, "rule://troubleshooting").body == body


def test_manual_is_readable_and_listed_through_the_cli(repo, cli):
    code, out = cli(repo, "read", "troubleshooting.md")
    assert code == 0 and "# トラブルシューティングガイド" in out
    code, out = cli(repo, "render")
    assert code == 0 and "troubleshooting" not in out
    code, out = cli(repo, "render", "--prompt", "#troubleshooting")
    assert "- troubleshooting.md — トラブルシューティングガイド (fetch with the read_rule tool)" in out
    code, out = cli(repo, "show", "troubleshooting")
    assert "conditions: kiro-manual #troubleshooting" in out and "load: on-demand" in out


def test_manual_is_named_by_its_file_stem_not_its_id(rule_project):
    rule_project.write({".claude/rules/deploy.md": "Claude's deploy rule.\n"})
    write_steering(rule_project, {"deploy.md": steering("inclusion: manual\n")})
    manual = rules(rule_project, plugin="kiro")
    assert list(manual) == ["deploy-2"]
    assert statuses(rule_project, prompt="#deploy")[0]["deploy-2"] == ("on-demand", ("the prompt names #deploy",))


def test_peer_stream_keys_are_kept_next_to_the_manual_condition(rule_project):
    write_steering(rule_project, {"x.md": steering("inclusion: manual\nastCondition: 'console.log($A)'\n")})
    rule = rules(rule_project)["x"]
    assert dict(rule.extra) == {"astCondition": ("console.log($A)",), "kiro-manual": "#x"}
    assert "kiro-manual" in rule.extra_conditions


# -- #[[file:]] references ----------------------------------------------------------------


def test_file_references_are_expanded_in_place(repo):
    rule = rules(repo)["product-direction"]
    referenced = (FIXTURE / ".kiro/specs/paddle-ball-game/requirements.md").read_text()
    assert "#[[file:" not in rule.body
    assert "Current baseline reference:\n\n" + referenced.rstrip("\n") + "\n" in rule.body
    assert rule.description == "Product Direction"  # the steering file's own heading, not the inserted one


def test_a_changed_referenced_file_is_read_again(repo):
    engine = repo.engine()
    assert "simple paddle ball game" in {r.id: r for r in engine.discover(str(repo.cwd)).rules}["product-direction"].body
    target = repo.cwd / ".kiro/specs/paddle-ball-game/requirements.md"
    target.write_text("# Requirements\n\nA brick breaker now.\n")
    os.utime(target, ns=(1, 1))  # a different mtime even on a coarse clock
    body = {r.id: r for r in engine.discover(str(repo.cwd)).rules}["product-direction"].body
    assert "A brick breaker now." in body and "simple paddle ball game" not in body


def test_references_are_relative_to_the_workspace_not_the_steering_folder(rule_project):
    rule_project.write({"api/openapi.yaml": "openapi: 3.1.0\n"})
    write_steering(rule_project, {"api.md": "See #[[file:api/openapi.yaml]] first.\n"})
    assert rules(rule_project)["api"].body == "See openapi: 3.1.0 first.\n"


def test_a_reference_leaving_the_git_root_is_not_read_and_reported(repo, record, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("TOKEN=hunter2\n")
    write_steering(repo, {"leak.md": "Context: #[[file:../secret.md]]\n"})
    record.clear()
    found = rules(repo)
    assert found["leak"].body == "Context: #[[file:../secret.md]]\n"  # loads, reference left as written
    assert str(secret) not in record
    [(kind, path, message, plugin)] = errors(repo)
    assert (kind, path, plugin) == ("invalid-value", ".kiro/steering/leak.md", "kiro")
    assert message == (f"import #[[file:../secret.md]]: {secret} is outside the git root {repo.cwd}; "
                       "not read — move the file inside it")


def test_a_symlink_leading_out_of_the_git_root_is_not_followed(repo, record, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("TOKEN=hunter2\n")
    os.symlink(secret, repo.cwd / "notes.md")
    write_steering(repo, {"leak.md": "Context: #[[file:notes.md]]\n"})
    record.clear()
    assert rules(repo)["leak"].body == "Context: #[[file:notes.md]]\n"
    assert str(secret) not in record
    [(kind, _, message, _)] = errors(repo)
    assert kind == "invalid-value" and "leads outside the git root" in message


def test_a_missing_reference_is_reported_and_left_as_written(rule_project):
    write_steering(rule_project, {"x.md": "Use #[[file:docs/gone.md]].\n"})
    assert rules(rule_project)["x"].body == "Use #[[file:docs/gone.md]].\n"
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "invalid-value" and "no such file docs/gone.md; create it or correct the path" in message


# -- where it reads -----------------------------------------------------------------------


def test_steering_folders_are_read_recursively(rule_project):
    write_steering(rule_project, {"team/api.md": "API rules.\n", "a.md": "A.\n"})
    assert [(r.id, r.relative_path) for r in discover(rule_project).rules] == [("a", "a.md"), ("api", "team/api.md")]


def test_global_steering_is_global_and_loads_for_an_untrusted_project(repo):
    write_steering(repo, {"mine.md": "Answer briefly.\n"}, home=True)
    found = discover(repo, trusted=False).rules
    assert [(r.id, r.source, r.file.plugin) for r in found] == [("mine", "global", "kiro")]
    assert found[0].always_apply and found[0].file.path == str(repo.home / STEERING / "mine.md")


def test_global_filematch_globs_are_cwd_relative(rule_project):
    write_steering(rule_project, {"py.md": steering('inclusion: fileMatch\nfileMatchPattern: "**/*.py"\n')}, home=True)
    assert statuses(rule_project, touched=["src/app.py"])[0]["py"] == ("active", ("touched src/app.py",))


def test_global_references_are_read_in_the_home_folder_only(rule_project, tmp_path):
    (rule_project.home / "notes").mkdir()
    (rule_project.home / "notes/style.md").write_text("Prefer tabs.\n")
    rule_project.write({"local.md": "PROJECT TEXT\n"})
    write_steering(rule_project, {"mine.md": "#[[file:notes/style.md]] and #[[file:../project/local.md]]\n"},
                   home=True)
    assert rules(rule_project)["mine"].body == "Prefer tabs. and #[[file:../project/local.md]]\n"
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "invalid-value" and "outside your home folder" in message


def test_working_in_home_lists_the_shared_folder_once(rule_project):
    write_steering(rule_project, {"mine.md": "Answer briefly.\n"}, home=True)
    engine = rule_project.engine()
    found = engine.discover(str(rule_project.home), True).rules
    assert [(r.id, r.source) for r in found] == [("mine", "project")]
    assert [(r.id, r.source) for r in engine.discover(str(rule_project.home), False).rules] == [("mine", "global")]


def test_from_a_subfolder_the_roots_steering_is_named_not_read(repo, record):
    sub = repo.cwd / "src"
    record.clear()
    found = discover(repo, sub)
    assert found.rules == () and [p for p in record if p.startswith(str(repo.cwd / STEERING) + "/")] == []
    assert [(w.code, w.path, w.plugin) for w in found.warnings] == [("cwd-only", str(repo.cwd / STEERING), "kiro")]


def test_untrusted_project_reads_no_project_file(repo):
    assert discover(repo, trusted=False).rules == ()


def test_import_none_reads_nothing_not_even_a_stat(repo, record):
    write_steering(repo, {"mine.md": "x\n"}, home=True)
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert discover(repo).rules == ()
    assert [p for p in record if ".kiro" in p] == []


def test_import_list_and_plugin_blocking(repo):
    repo.env["PI_RULES_IMPORT"] = "cursor"
    assert rules(repo) == {}
    repo.env["PI_RULES_IMPORT"] = "kiro"
    assert "tech" in rules(repo)
    assert rules(repo, blocked=["kiro"]) == {}


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("value, fix", [("filematch", "fileMatch"), ("always_on", "always"), ("Manual", "manual"),
                                        ("automatic", "auto")])
def test_a_misspelt_inclusion_gets_a_did_you_mean(rule_project, value, fix):
    write_steering(rule_project, {"x.md": steering(f"inclusion: {value}\n")})
    assert rules(rule_project) == {}
    assert errors(rule_project) == [("invalid-value", ".kiro/steering/x.md",
                                     f"unknown inclusion {value!r} — did you mean {fix!r}?; "
                                     "use one of always, fileMatch, auto, manual", "kiro")]


def test_an_unknown_inclusion_lists_the_allowed_ones(rule_project):
    write_steering(rule_project, {"x.md": steering("inclusion: sometimes\n")})
    [(_, _, message, _)] = errors(rule_project)
    assert message == "unknown inclusion 'sometimes'; use one of always, fileMatch, auto, manual"


def test_a_non_text_inclusion_is_invalid_value(rule_project):
    write_steering(rule_project, {"x.md": steering("inclusion: true\n")})
    [(_, _, message, _)] = errors(rule_project)
    assert message == ("inclusion must be one of always, fileMatch, auto, manual, got the boolean true; "
                       "write inclusion: always")


def test_auto_without_a_description_names_the_fix(rule_project):
    write_steering(rule_project, {"x.md": steering("inclusion: auto\nname: x\n"),
                                  "y.md": steering("inclusion: auto\ndescription: '  '\n")})
    assert rules(rule_project) == {}
    message = ('inclusion: auto needs a description saying when the steering applies (Kiro matches requests '
               'against it); add description: "…", or use inclusion: manual')
    assert [m for _, _, m, _ in errors(rule_project)] == [message, message]


@pytest.mark.parametrize("front, hint", [
    ("inclusion: fileMatch\n", ""),
    ("inclusion: fileMatch\nfileMatchPattern: []\n", ""),
    ('inclusion: fileMatch\nglobs:\n  - "src/app/**/*"\n',
     " (this file has globs:, which Kiro does not read — rename it to fileMatchPattern)"),
    ('inclusion: fileMatch\nfilematchpattern: "src/**"\n',
     " (this file has filematchpattern:, which Kiro does not read — rename it to fileMatchPattern)"),
])
def test_filematch_without_a_pattern_names_the_fix(rule_project, front, hint):
    write_steering(rule_project, {"x.md": steering(front)})
    assert rules(rule_project) == {}
    assert [m for _, _, m, _ in errors(rule_project)] == [
        f"inclusion: fileMatch needs fileMatchPattern naming the files it applies to{hint}; "
        'add fileMatchPattern: "src/**/*.ts" (or a list), or choose another inclusion']


def test_a_non_glob_pattern_or_description_is_invalid_value(rule_project):
    write_steering(rule_project, {"p.md": steering("inclusion: fileMatch\nfileMatchPattern: 7\n"),
                                  "d.md": steering("description: [a]\n")})
    assert sorted(m for _, _, m, _ in errors(rule_project)) == [
        'description must be text, got a list; write description: "…" in quotes',
        'fileMatchPattern must be a glob string or a list of glob strings, got the number 7; '
        'write fileMatchPattern: "src/**/*.ts"']


def test_an_unquoted_glob_is_yaml_syntax_naming_the_quoted_line(rule_project):
    write_steering(rule_project, {"x.md": steering("inclusion: fileMatch\nfileMatchPattern: **/*.ts\n")})
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "yaml-syntax" and 'quote the value: fileMatchPattern: "**/*.ts"' in message


def test_file_match_pattern_is_ignored_under_another_inclusion(rule_project):
    write_steering(rule_project, {"x.md": steering('inclusion: always\nfileMatchPattern: "src/**"\n')})
    rule = rules(rule_project)["x"]
    assert rule.always_apply and rule.globs == ()


# -- the command line ---------------------------------------------------------------------


def test_cli_list_json_names_plugin_real_path_and_load(repo, cli):
    code, out = cli(repo, "--json", "list")
    assert code == 0
    by_rule = {r["id"]: r for r in json.loads(out)["rules"]}
    assert (by_rule["testing"]["plugin"], by_rule["testing"]["path"]) == (
        "kiro", str(repo.cwd / ".kiro/steering/testing.md"))
    assert by_rule["troubleshooting"]["load"] == "on-demand" and by_rule["branch-strategy"]["load"] == "on-demand"


def test_cli_check_names_the_file_and_the_fix(rule_project, cli):
    write_steering(rule_project, {"x.md": steering("inclusion: filematch\n")})
    code, out = cli(rule_project, "check")
    assert code == 1 and out == (".kiro/steering/x.md".join(["invalid-value ", ": unknown inclusion 'filematch' — "])
                                 + "did you mean 'fileMatch'?; use one of always, fileMatch, auto, manual\n")


# -- whatever the file says ---------------------------------------------------------------

KEYS = ["inclusion", "fileMatchPattern", "description", "name", "globs", "condition", "x"]
VALUES = ["always", "fileMatch", "auto", "manual", "filematch", "", "~", "true", "7", "[]", "[a, 7]", "{a: b}",
          '"**/*.ts"', "**/*.ts", '["src/**", "!src/x/**"]', "'{a,b'", "&a x", "*a", '"(?<x"', "[" * 40]
BODIES = ["", "Body.\n", "#[[file:a.md]]", "#[[file:../../etc/passwd]]", "#[[file:]]", "`#[[file:a.md]]`",
          "```\n#[[file:a.md]]\n```", "#[[file:/abs]] #[[file:a.md", "\x00", "# H\n" * 50]
LINES = st.one_of(st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(KEYS), st.sampled_from(VALUES)),
                  st.text(max_size=20))
TEXTS = st.one_of(
    st.builds(lambda lines, closed, body: "---\n" + "\n".join(lines) + ("\n---\n" if closed else "\n") + body,
              st.lists(LINES, max_size=6), st.booleans(), st.sampled_from(BODIES) | st.text(max_size=60)),
    st.text(max_size=200),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, source=st.sampled_from(["project", "global"]))
def test_any_steering_text_becomes_a_rule_or_errors_never_an_exception(text, source):
    rule_file = RuleFile("/nowhere/.kiro/steering/x.md", "/nowhere/.kiro/steering", "x.md", "/nowhere", "kiro",
                         "kiro", source, (0, 0, "", "x.md"), bound="/nowhere")  # type: ignore[arg-type]
    result = kiro.pi_rules_parse(rule_file=rule_file, text=text, extra_keys={})
    assert isinstance(result, ParseResult) and (result.rule is not None or result.errors)
    assert all(e.path == rule_file.path and e.message for e in result.errors)
