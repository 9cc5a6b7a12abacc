"""The ``windsurf`` importer (docs/importers.md (the windsurf importer)): Windsurf/Devin rules in place."""

from __future__ import annotations

from rules_core.model import Facts

import json
import os
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import FIXTURES, by_id, copy_fixture, discover, relative_errors, statuses
from importer_helpers import text_with_front as ws_rule

FIXTURE = FIXTURES / "windsurf"
GLOBAL = Path(".codeium") / "windsurf" / "memories" / "global_rules.md"
rules = by_id
errors = relative_errors
outcomes = statuses


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped Windsurf repository, as a git repository."""
    return copy_fixture(rule_project, "windsurf", git=True)


def write_global(project, content: str | bytes) -> Path:
    path = project.home / GLOBAL
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


# -- the fixture repository ---------------------------------------------------------------


def test_fixture_discovery_order_ids_reference_and_real_paths(repo):
    found = discover(repo)
    assert found.errors == ()
    rows = [(r.id, r.relative_path, r.file.plugin, r.source, os.path.relpath(r.file.path, repo.cwd))
            for r in found.rules]
    assert rows == [
        ("api-design", "api-design.md", "windsurf", "project", ".windsurf/rules/api-design.md"),
        ("coding-style", "coding-style.md", "windsurf", "project", ".windsurf/rules/coding-style.md"),
        ("deploy", "deploy.md", "windsurf", "project", ".windsurf/rules/deploy.md"),
        ("glossary", "glossary.md", "windsurf", "project", ".windsurf/rules/glossary.md"),
        ("python", "python.md", "windsurf", "project", ".windsurf/rules/python.md"),
        ("tests", "tests.md", "windsurf", "project", ".windsurf/rules/tests.md"),
        ("security", "security.md", "windsurf", "project", ".devin/rules/security.md"),
        ("windsurfrules", ".windsurfrules", "windsurf", "project", ".windsurfrules"),
    ]


def test_rules_folders_are_read_flat_like_windsurf_does(repo):
    assert "old" not in rules(repo)  # .windsurf/rules/archive/old.md


def test_trigger_always_on_is_an_always_rule(repo):
    rule = rules(repo)["coding-style"]
    assert rule.always_apply and rule.load == "pinned" and rule.globs == ()
    assert outcomes(repo)[0]["coding-style"] == ("active", ())


def test_trigger_glob_with_an_unquoted_glob_as_windsurf_documents_it(repo):
    rule = rules(repo)["tests"]  # `globs: **/*.test.ts` is not valid YAML
    assert rule.globs == ("**/*.test.ts",) and rule.match == "touched" and rule.load == "pinned"
    assert outcomes(repo, touched=["src/a.test.ts"])[0]["tests"] == ("active", ("touched src/a.test.ts",))
    assert outcomes(repo, touched=["src/a.ts"])[0]["tests"][0] == "inactive"


def test_trigger_glob_comma_string_splits_outside_braces(repo):
    rule = rules(repo)["python"]
    assert rule.globs == ("src/**/*.py", "scripts/*.{py,sh}") and rule.description == "Python modules"
    assert outcomes(repo, touched=["scripts/run.sh"])[0]["python"] == ("active", ("touched scripts/run.sh",))
    assert outcomes(repo)[0]["python"][0] == "inactive"  # src/app.py exists: touched only


def test_trigger_glob_takes_a_yaml_list_too(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule('trigger: glob\nglobs:\n  - "src/**"\n  - "!src/gen/**"\n')})
    assert rules(rule_project)["x"].globs == ("src/**", "!src/gen/**")


def test_trigger_model_decision_is_on_demand_with_its_description(repo):
    result, evaluation = outcomes(repo)
    assert result["api-design"][0] == "on-demand"
    assert ("- api-design.md — Apply when designing or changing an HTTP API "
            "(fetch with the read_rule tool)") in evaluation.section
    engine = repo.engine()
    assert engine.read_rule(Facts(cwd="."), rules=engine.discover(str(repo.cwd)).rules, name="api-design.md").body == (
        "Every endpoint is versioned under `/v1`.\n")


def test_trigger_manual_is_on_demand_described_by_its_heading(repo):
    rule = rules(repo)["deploy"]
    assert rule.load == "on-demand" and rule.description == "Deploying"
    assert outcomes(repo)[0]["deploy"][0] == "on-demand"


def test_no_trigger_and_no_frontmatter_is_manual_so_on_demand_never_dropped(repo):
    rule = rules(repo)["glossary"]
    assert rule.load == "on-demand" and not rule.always_apply and rule.description == "Glossary"
    assert rule.body == (FIXTURE / ".windsurf/rules/glossary.md").read_text()


def test_no_trigger_honours_the_peers_always_apply_and_globs(rule_project):
    rule_project.write({".windsurf/rules/a.md": ws_rule("alwaysApply: true\n"),
                        ".windsurf/rules/g.md": ws_rule("globs: src/**, docs/**\n"),
                        ".windsurf/rules/d.md": ws_rule("description: only a description\n")})
    found = rules(rule_project)
    assert found["a"].always_apply and found["g"].globs == ("src/**", "docs/**") and found["g"].load == "pinned"
    assert found["d"].load == "on-demand" and found["d"].description == "only a description"


def test_a_trigger_wins_over_the_peers_keys(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: manual\nalwaysApply: true\nglobs: src/**\n")})
    rule = rules(rule_project)["x"]
    assert rule.load == "on-demand" and not rule.always_apply and rule.globs == ()


def test_trigger_is_read_case_insensitively_and_trimmed(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: ' Always_On '\n")})
    assert rules(rule_project)["x"].always_apply


def test_trigger_agent_from_devins_docs_is_read_as_model_decision(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: agent\ndescription: d\n")})
    assert rules(rule_project)["x"].load == "on-demand"


def test_devin_rules_folder_is_read_after_windsurf_rules(repo):
    rule = rules(repo)["security"]
    assert rule.always_apply and rule.file.rules_root == str(repo.cwd / ".devin" / "rules")


def test_legacy_windsurfrules_is_one_always_rule_with_its_text_verbatim(repo):
    rule = rules(repo)["windsurfrules"]
    assert rule.always_apply and rule.relative_path == ".windsurfrules"
    assert rule.body == (FIXTURE / ".windsurfrules").read_text() and rule.description == "Project: payments-api"


def test_imported_bodies_are_kept_verbatim_blank_edges_included(repo):
    assert rules(repo)["coding-style"].body.startswith("\n<coding_guidelines>\n")


def test_peer_stream_keys_are_validated(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule(
        "trigger: always_on\ncondition: ['eval\\(']\nastCondition: 'console.log($A)'\nttsr_trigger: x\n")})
    assert dict(rules(rule_project)["x"].extra) == {
        "condition": ("eval\\(",), "astCondition": ("console.log($A)",), "ttsr_trigger": ("x",)}


def test_one_id_namespace_with_native_rules(rule_project):
    rule_project.write({".pi/rules/style.md": rule_text(globs=["x"]),
                        ".windsurf/rules/style.md": ws_rule("trigger: always_on\n"),
                        ".devin/rules/style.md": ws_rule("trigger: always_on\n")})
    assert [(r.id, r.file.plugin) for r in discover(rule_project).rules] == [
        ("style", "native"), ("style-2", "windsurf"), ("style-3", "windsurf")]


def test_an_uncompilable_glob_loads_the_rule_and_is_reported(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: glob\nglobs: ./, src/**\n")})
    assert rules(rule_project)["x"].globs == ("./", "src/**")
    assert [(k, p) for k, p, *_ in errors(rule_project)] == [("invalid-value", ".windsurf/rules/x.md")]


# -- the user-level global rules file -----------------------------------------------------


def test_global_rules_file_is_a_global_always_rule_after_native_global_rules(rule_project):
    rule_project.write_global({"mine.md": rule_text(globs=["x"])})
    path = write_global(rule_project, "# Mine\n\nAnswer in English.\n")
    found = discover(rule_project).rules
    assert [(r.id, r.file.plugin, r.source) for r in found] == [
        ("mine", "global", "global"), ("global_rules", "windsurf", "global")]
    rule = found[1]
    assert rule.always_apply and rule.relative_path == "global_rules.md" and rule.file.path == str(path)
    assert rule.body == "# Mine\n\nAnswer in English.\n" and rule.file.base == str(rule_project.cwd)


def test_global_rules_file_loads_for_an_untrusted_project(repo):
    write_global(repo, "Be brief.\n")
    assert [(r.id, r.source) for r in discover(repo, trusted=False).rules] == [("global_rules", "global")]


def test_global_rules_file_is_not_read_when_the_importer_is_off(repo):
    write_global(repo, "Be brief.\n")
    repo.env["PI_RULES_IMPORT"] = "cursor"
    assert rules(repo) == {}


# -- errors -------------------------------------------------------------------------------


def test_unknown_trigger_is_invalid_value_listing_the_allowed_ones(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: sometimes\n")})
    assert rules(rule_project) == {}
    assert errors(rule_project) == [("invalid-value", ".windsurf/rules/x.md",
                                     "unknown trigger 'sometimes'; use one of always_on, glob, model_decision, manual",
                                     "windsurf")]


@pytest.mark.parametrize("written, meant", [
    ("always", "always_on"), ("Always-On", "always_on"), ("globs", "glob"), ("model-decision", "model_decision"),
    ("modelDecision", "model_decision"), ("manually", "manual"),
])
def test_a_near_miss_trigger_names_the_mode_it_is_closest_to(rule_project, written, meant):
    rule_project.write({".windsurf/rules/x.md": ws_rule(f"trigger: {written}\n")})
    assert rules(rule_project) == {}
    assert [m for _, _, m, _ in errors(rule_project)] == [
        f"unknown trigger {written!r} — did you mean {meant!r}?; use one of always_on, glob, model_decision, manual"]


def test_cli_check_shows_the_suggestion_for_trigger_always(rule_project, cli):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: always\n")})
    code, out = cli(rule_project, "check")
    assert code == 1 and "invalid-value .windsurf/rules/x.md: unknown trigger 'always'" in out
    assert "did you mean 'always_on'?" in out


def test_a_non_text_trigger_is_invalid_value(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: true\n")})
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "invalid-value" and message.startswith("trigger must be one of always_on, glob, model_decision, manual, got the boolean true")


@pytest.mark.parametrize("front", ["trigger: glob\n", "trigger: glob\nglobs: ''\n", "trigger: glob\nglobs: ' , '\n",
                                   "trigger: glob\nglobs: []\n"])
def test_trigger_glob_without_globs_is_invalid_value(rule_project, front):
    rule_project.write({".windsurf/rules/x.md": ws_rule(front)})
    assert rules(rule_project) == {}
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "invalid-value" and message.startswith("trigger: glob needs globs")


@pytest.mark.parametrize("front, needle", [
    ("trigger: glob\nglobs: 7\n", "globs must be a comma-separated string or a list of glob strings, got the number 7"),
    ("trigger: glob\nglobs: [src, {a: b}]\n", "got a list"),
    ("trigger: always_on\ndescription: 12\n", "description must be text, got the number 12"),
    ("alwaysApply: sure\n", "alwaysApply must be true or false, got 'sure'"),
])
def test_a_bad_value_of_a_key_windsurf_reads_is_invalid_value(rule_project, front, needle):
    rule_project.write({".windsurf/rules/x.md": ws_rule(front)})
    assert rules(rule_project) == {}
    [(kind, path, message, _)] = errors(rule_project)
    assert (kind, path) == ("invalid-value", ".windsurf/rules/x.md") and needle in message


def test_broken_yaml_is_yaml_syntax(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: glob\nglobs:\n  a: [\n")})
    assert [k for k, *_ in errors(rule_project)] == ["yaml-syntax"] and rules(rule_project) == {}


def test_unterminated_frontmatter_is_yaml_syntax(rule_project):
    rule_project.write({".windsurf/rules/x.md": "---\ntrigger: always_on\nno closing line\n"})
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "yaml-syntax" and "never closed" in message


def test_non_mapping_frontmatter_is_yaml_syntax(rule_project):
    rule_project.write({".windsurf/rules/x.md": ws_rule("just words\n")})
    assert [k for k, *_ in errors(rule_project)] == ["yaml-syntax"]


# -- hostile files ------------------------------------------------------------------------


def test_binary_and_huge_files_are_read_failures_and_invalid_utf8_loads(rule_project):
    rule_project.write({".windsurf/rules/latin1.md": b"caf\xe9\n", ".devin/rules/blob.md": bytes(range(256)),
                        ".windsurfrules": "x" * (1024 * 1024 + 1)})
    write_global(rule_project, b"\xff\xfe")
    assert sorted((k, p) for k, p, *_ in errors(rule_project)) == sorted([
        ("read-failure", ".devin/rules/blob.md"), ("read-failure", ".windsurfrules"),
    ])
    # Windsurf (a VS Code fork) reads a damaged byte as U+FFFD (docs/importers.md, "Damaged bytes").
    warned = sorted(os.path.relpath(w.path, rule_project.cwd) for w in discover(rule_project).warnings
                    if w.code == "invalid-utf8")
    assert warned == sorted([".windsurf/rules/latin1.md", os.path.relpath(rule_project.home / GLOBAL, rule_project.cwd)])


def test_fifos_named_like_rules_are_read_failures_never_opened(rule_project):
    (rule_project.cwd / ".windsurf/rules").mkdir(parents=True)
    os.mkfifo(rule_project.cwd / ".windsurf/rules/pipe.md")
    os.mkfifo(rule_project.cwd / ".windsurfrules")
    (rule_project.home / GLOBAL).parent.mkdir(parents=True)
    os.mkfifo(rule_project.home / GLOBAL)
    found = errors(rule_project)
    assert len(found) == 3 and all(k == "read-failure" and "not a regular file" in m for k, _, m, _ in found)


def test_a_windsurfrules_directory_is_reported_not_ignored(rule_project):
    (rule_project.cwd / ".windsurfrules").mkdir()
    [(kind, path, message, _)] = errors(rule_project)
    assert (kind, path) == ("read-failure", ".windsurfrules") and "is a directory" in message


# -- switching it off ---------------------------------------------------------------------


def test_import_none_turns_it_off_project_and_global(repo):
    write_global(repo, "Be brief.\n")
    repo.env["PI_RULES_IMPORT"] = "none"
    assert rules(repo) == {}


def test_import_list_without_windsurf_turns_it_off_and_with_it_on(repo):
    repo.env["PI_RULES_IMPORT"] = "cursor,claude"
    assert rules(repo) == {}
    repo.env["PI_RULES_IMPORT"] = "windsurf"
    assert "coding-style" in rules(repo)


def test_blocking_the_plugin_turns_it_off(repo):
    assert rules(repo, blocked=["windsurf"]) == {}


def test_import_none_does_not_even_stat_a_windsurf_path(repo, record):
    write_global(repo, "Be brief.\n")
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    discover(repo)
    assert [p for p in record if any(part in p for part in (".windsurf", ".devin", ".codeium"))] == []


def test_untrusted_project_reads_no_project_file(repo):
    assert discover(repo, trusted=False).rules == ()


# -- the command line ---------------------------------------------------------------------


def test_cli_list_json_names_plugin_real_path_reference_and_load(repo, cli):
    write_global(repo, "Be brief.\n")
    code, out = cli(repo, "--json", "list")
    assert code == 0
    data = json.loads(out)
    by_id = {r["id"]: r for r in data["rules"]}
    assert (by_id["security"]["plugin"], by_id["security"]["relativePath"], by_id["security"]["path"]) == (
        "windsurf", "security.md", str(repo.cwd / ".devin/rules/security.md"))
    assert by_id["deploy"]["load"] == "on-demand" and by_id["global_rules"]["source"] == "global"


def test_cli_check_names_the_file_and_the_fix(rule_project, cli):
    rule_project.write({".windsurf/rules/x.md": ws_rule("trigger: glob\n")})
    code, out = cli(rule_project, "check")
    assert code == 1 and out.startswith(
        "invalid-value .windsurf/rules/x.md: trigger: glob needs globs naming the files it applies to; add globs:")
