"""The cline importer: the nearest .clinerules (file or folder) and .cline/rules, read in place."""

from __future__ import annotations

import json
import os

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import FIXTURES, by_id, copy_fixture, deny_listing, discover, error_rows, git_init, outcomes

RULES = FIXTURES / "cline" / ".clinerules"
errors = error_rows


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped fixture repository, copied and made a git root."""
    return copy_fixture(rule_project, "cline", git=True)


# -- the fixture repository ----------------------------------------------------------


def test_fixture_lists_every_rule_file_directly_in_clinerules_in_path_order(repo):
    discovery = discover(repo)
    root = repo.cwd / ".clinerules"
    assert [(r.id, r.relative_path, r.file.plugin, r.file.path) for r in discovery.rules] == [
        ("01-coding-standards", "01-coding-standards.md", "cline", str(root / "01-coding-standards.md")),
        ("02-react-components", "02-react-components.md", "cline", str(root / "02-react-components.md")),
        ("03-testing", "03-testing.md", "cline", str(root / "03-testing.md")),
        ("04-api-packages", "04-api-packages.md", "cline", str(root / "04-api-packages.md")),
        ("05-legacy-jquery", "05-legacy-jquery.md", "cline", str(root / "05-legacy-jquery.md")),
        ("06-experimental", "06-experimental.md", "cline", str(root / "06-experimental.md")),
        ("07-no-console", "07-no-console.md", "cline", str(root / "07-no-console.md")),
        ("project-context", "project-context.txt", "cline", str(root / "project-context.txt")),
    ]
    assert discovery.errors == ()
    assert {r.source for r in discovery.rules} == {"project"}


def test_workflows_hooks_skills_subfolders_and_hidden_files_are_not_rules(repo):
    paths = {r.file.path for r in discover(repo).rules}
    for skipped in ("workflows/release.md", "hooks/PreToolUse", "skills/db-migrations/SKILL.md",
                    "archive/old-style.md", ".toggles.md"):
        assert str(repo.cwd / ".clinerules" / skipped) not in paths


def test_list_json_names_the_real_file_and_the_reference_path(repo, cli):
    code, out = cli(repo, "--json", "list")
    assert code == 0
    rules = {r["id"]: _without_conditions(r) for r in json.loads(out)["rules"]}
    assert rules["02-react-components"] == {
        "id": "02-react-components", "relativePath": "02-react-components.md",
        "path": str(repo.cwd / ".clinerules" / "02-react-components.md"), "source": "project",
        "plugin": "cline", "description": "React Component Guidelines", "load": "pinned",
        "priority": 0, "enforcement": "inform",
    }


def test_no_frontmatter_means_always_applied_with_the_heading_as_description(repo):
    rule = by_id(repo)["01-coding-standards"]
    assert rule.always_apply and rule.globs == () and rule.load == "pinned"
    assert rule.description == "Coding Standards"
    assert outcomes(repo)["01-coding-standards"].status == "active"


def test_frontmatter_without_paths_is_always_applied_too(repo):
    repo.write({".clinerules/plain.md": "---\ndescription: Plain\n---\nBody.\n"})
    rule = by_id(repo)["plain"]
    assert rule.always_apply and rule.description == "Plain"


def test_a_txt_rule_is_read_like_markdown(repo):
    rule = by_id(repo)["project-context"]
    assert rule.always_apply and rule.description == "project-context"
    assert rule.body == (RULES / "project-context.txt").read_text()


def test_paths_list_becomes_touched_globs_relative_to_the_owning_directory(repo):
    rule = by_id(repo)["02-react-components"]
    assert rule.globs == ("src/components/**", "src/hooks/**")
    assert rule.match == "touched" and not rule.always_apply and rule.file.base == str(repo.cwd)
    active = outcomes(repo, touched=["src/components/Button.tsx"])["02-react-components"]
    assert (active.status, active.reasons) == ("active", ("touched src/components/Button.tsx",))
    # touched, not exists: the file on disk alone does not activate it
    assert outcomes(repo, touched=["README.md"])["02-react-components"].status == "inactive"


def test_paths_comma_string_splits_only_outside_braces(repo):
    rule = by_id(repo)["03-testing"]
    assert rule.globs == ("**/*.test.ts", "**/*.test.{tsx,jsx}")
    assert rule.description == "How we write unit tests"
    assert outcomes(repo, touched=["src/ui/a.test.jsx"])["03-testing"].status == "active"


def test_brace_globs_and_negations_reach_the_matcher_verbatim(repo):
    rule = by_id(repo)["04-api-packages"]
    assert rule.globs == ("packages/{web,api}/**", "!packages/api/generated/**")
    assert outcomes(repo, touched=["packages/api/src/index.ts"])["04-api-packages"].status == "active"
    assert outcomes(repo, touched=["packages/api/generated/x.ts"])["04-api-packages"].status == "inactive"


def test_an_empty_paths_list_is_listed_but_never_activates(repo):
    outcome = outcomes(repo, touched=["src/a.js", "legacy/admin.js"])["05-legacy-jquery"]
    assert outcome.status == "inactive"
    assert outcome.reasons == ("turned off: paths is empty, which Cline reads as 'never apply'",)


def test_disabled_true_is_listed_but_never_activates(repo):
    outcome = outcomes(repo)["06-experimental"]
    assert (outcome.status, outcome.reasons) == ("inactive", ("turned off: disabled: true (turned off in Cline)",))


def test_legacy_enabled_false_is_off_and_disabled_false_wins_over_it(repo):
    repo.write({
        ".clinerules/a.md": "---\nenabled: false\n---\nA.\n",
        ".clinerules/b.md": "---\ndisabled: false\nenabled: false\n---\nB.\n",
    })
    result = outcomes(repo)
    assert result["a"].reasons == ("turned off: enabled: false (turned off in Cline)",)
    assert result["b"].status == "active"


def test_an_empty_rule_file_is_listed_but_never_activates(repo):
    repo.write({".clinerules/default-rules.md": ""})  # what Cline's "new rule" button creates
    outcome = outcomes(repo)["default-rules"]
    assert outcome.status == "inactive"
    assert outcome.reasons == ("turned off: the file is empty, and Cline skips empty rules",)


def test_stream_rule_keys_are_validated_and_shown(repo, cli):
    rule = by_id(repo)["07-no-console"]
    assert dict(rule.extra) == {"condition": ("console\\.log",), "scope": ("tool:edit(*.ts)",), "interruptMode": "always"}
    code, shown = cli(repo, "show", "07-no-console")
    assert code == 0
    assert "condition console\\.log" in shown and "interruptMode: always" in shown


def test_body_is_kept_verbatim(repo):
    assert by_id(repo)["02-react-components"].body == (RULES / "02-react-components.md").read_text().split("---\n", 2)[2]
    repo.write({".clinerules/edges.md": "\n\n  Indented.\n\n\n"})
    assert by_id(repo)["edges"].body == "\n\n  Indented.\n\n\n"


def test_description_falls_back_to_the_stem_without_a_heading(repo):
    repo.write({".clinerules/plain-words.md": "Just words.\n"})
    assert by_id(repo)["plain-words"].description == "plain-words"


def test_ids_share_one_namespace_with_native_rules(repo):
    repo.write({".pi/rules/01-coding-standards.md": rule_text(globs=["x"])})
    rules = discover(repo).rules
    assert [(r.id, r.file.plugin) for r in rules][:2] == [("01-coding-standards", "native"),
                                                         ("01-coding-standards-2", "cline")]


def test_a_glob_that_cannot_compile_is_reported_and_the_rule_still_loads(repo):
    repo.write({".clinerules/bad-glob.md": "---\npaths: ['src/**', './']\n---\nB.\n"})
    assert by_id(repo)["bad-glob"].globs == ("src/**", "./")
    assert [(k, p, m) for k, p, m in errors(repo)] == [
        ("invalid-value", str(repo.cwd / ".clinerules/bad-glob.md"), "glob './' cannot be used: empty pattern")]


# -- the single-file form and the .cline/rules layout ----------------------------------


def test_a_clinerules_file_is_one_rule_named_clinerules(rule_project):
    rule_project.write({".clinerules": "# Team rules\n\nUse pnpm.\n"})
    (rule,) = discover(rule_project).rules
    assert (rule.id, rule.relative_path, rule.file.path) == ("clinerules", ".clinerules",
                                                             str(rule_project.cwd / ".clinerules"))
    assert rule.always_apply and rule.description == "Team rules" and rule.body == "# Team rules\n\nUse pnpm.\n"


def test_a_clinerules_file_may_scope_itself_with_paths(rule_project):
    rule_project.write({".clinerules": "---\npaths: ['docs/**']\n---\nDocs.\n"})
    assert outcomes(rule_project, touched=["docs/a.md"])["clinerules"].status == "active"
    assert outcomes(rule_project, touched=["src/a.ts"])["clinerules"].status == "inactive"


def test_the_cline_rules_folder_is_read_after_clinerules_at_the_same_owner(rule_project):
    rule_project.write({".cline/rules/style.md": "Style.\n", ".clinerules/style.md": "Legacy style.\n",
                        ".cline/skills/x/SKILL.md": "not a rule"})
    rules = discover(rule_project).rules
    assert [(r.id, r.file.path) for r in rules] == [
        ("style", str(rule_project.cwd / ".clinerules/style.md")),
        ("style-2", str(rule_project.cwd / ".cline/rules/style.md")),
    ]


def test_a_cline_folder_without_rules_owns_nothing(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({".clinerules/root.md": "Root.\n", "pkg/.cline/skills/s/SKILL.md": "x"})
    assert list(by_id(rule_project, rule_project.cwd / "pkg")) == ["root"]


# -- which .clinerules: the nearest, bounded by the git root ---------------------------


def test_the_nearest_owner_wins_and_nothing_above_it_is_read(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({".clinerules/root.md": "Root.\n", "packages/web/.clinerules/web.md": "Web.\n",
                        "packages/web/src/x.ts": ""})
    assert list(by_id(rule_project, rule_project.cwd / "packages/web")) == ["web"]
    assert list(by_id(rule_project, rule_project.cwd / "packages/web/src")) == ["web"]
    assert list(by_id(rule_project, rule_project.cwd / "packages")) == ["root"]


def test_an_ancestor_owner_is_the_glob_base(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({".clinerules/web.md": "---\npaths: ['packages/web/src/**']\n---\nWeb.\n"})
    cwd = rule_project.cwd / "packages" / "web"
    cwd.mkdir(parents=True)
    assert by_id(rule_project, cwd)["web"].file.base == str(rule_project.cwd)
    outcome = outcomes(rule_project, cwd, touched=["src/App.tsx"])["web"]
    assert (outcome.status, outcome.reasons) == ("active", ("touched src/App.tsx",))
    assert outcomes(rule_project, cwd, touched=["lib/App.tsx"])["web"].status == "inactive"


def test_the_walk_stops_at_the_git_root(tmp_path, rule_project):
    (tmp_path / ".clinerules").write_text("Above the repository.\n")
    git_init(rule_project.cwd)
    assert discover(rule_project).rules == ()


def test_outside_a_repository_only_cwd_is_looked_at(tmp_path, rule_project):
    (tmp_path / ".clinerules").write_text("Parent.\n")
    cwd = rule_project.cwd / "sub"
    cwd.mkdir()
    assert discover(rule_project, cwd).rules == ()
    rule_project.write({"sub/.clinerules": "Here.\n"})
    assert list(by_id(rule_project, cwd)) == ["clinerules"]


# -- errors: a damaged file loads no rule ----------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("---\npaths: [unclosed\n---\nB.\n", "did not find expected ',' or ']'"),
    ("---\n- a\n- b\n---\nB.\n", "frontmatter must be a mapping"),
    ("---\npaths: ['a']\nB.\n", "never closed"),
    ("---\npaths: **/*.ts\n---\nB.\n", 'quote the value: paths: "**/*.ts"'),
])
def test_broken_frontmatter_is_a_yaml_syntax_error(rule_project, text, message):
    rule_project.write({".clinerules/bad.md": text})
    assert discover(rule_project).rules == ()
    ((kind, path, got),) = errors(rule_project)
    assert (kind, path) == ("yaml-syntax", str(rule_project.cwd / ".clinerules/bad.md")) and message in got


@pytest.mark.parametrize("front, message", [
    ("paths: [src/**, 3]", "paths entries must be glob strings"),
    ("paths: 42", "paths must be a list of glob strings, got a number"),
    ("paths: {src: x}", "paths must be a list of glob strings, got a mapping"),
    ("paths: ' , '", "paths is ' , ', which names no glob"),
    ("paths: ''", "or paths: [] to turn the rule off"),
    ("description: [a, b]", "description must be a string, got a list"),
    ("disabled: 'true'", "disabled must be true or false, got 'true'"),
    ("enabled: no", "enabled must be true or false, got 'no'"),
])
def test_a_bad_value_of_a_key_cline_reads_is_invalid_value(rule_project, front, message):
    rule_project.write({".clinerules/bad.md": f"---\n{front}\n---\nB.\n"})
    assert discover(rule_project).rules == ()
    ((kind, path, got),) = errors(rule_project)
    assert (kind, path) == ("invalid-value", str(rule_project.cwd / ".clinerules/bad.md")) and message in got


def test_unknown_keys_and_other_tools_keys_are_ignored(rule_project):
    rule_project.write({".clinerules/x.md": "---\nglobs: src/**\nalwaysApply: false\ntags: [a]\n---\nX.\n"})
    rule = by_id(rule_project)["x"]
    assert rule.always_apply and errors(rule_project) == []  # Cline reads only `paths`


# -- hostile files: an error or nothing, never a traceback ------------------------------


def test_invalid_utf8_loads_as_cline_reads_it(rule_project):
    """Cline (Node) reads a damaged byte as U+FFFD (docs/importers.md, "Damaged bytes")."""
    rule_project.write({".clinerules/latin1.md": b"caf\xe9\n"})
    assert errors(rule_project) == []
    discovery = discover(rule_project)
    assert [r.body for r in discovery.rules] == ["caf\ufffd\n"]
    assert [(w.code, "byte 3" in w.message) for w in discovery.warnings] == [("invalid-utf8", True)]


def test_a_binary_file_named_like_a_rule_is_a_read_failure(rule_project):
    rule_project.write({".clinerules/logo.md": bytes(range(256))})
    assert [k for k, _, _ in errors(rule_project)] == ["read-failure"] and discover(rule_project).rules == ()


def test_a_huge_file_is_a_read_failure(rule_project):
    rule_project.write({".clinerules/huge.md": "x" * (1024 * 1024 + 1)})
    ((kind, _, message),) = errors(rule_project)
    assert kind == "read-failure" and "over the 1048576-byte limit" in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_rule_is_reported_never_opened(rule_project):
    (rule_project.cwd / ".clinerules").mkdir()
    os.mkfifo(rule_project.cwd / ".clinerules" / "pipe.md")
    assert [(k, p) for k, p, _ in errors(rule_project)] == [("read-failure", str(rule_project.cwd / ".clinerules/pipe.md"))]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_clinerules_is_reported_never_opened(rule_project):
    os.mkfifo(rule_project.cwd / ".clinerules")
    ((kind, path, message),) = errors(rule_project)
    assert (kind, path) == ("read-failure", str(rule_project.cwd / ".clinerules")) and "not a regular file" in message


def test_a_broken_clinerules_symlink_is_reported(rule_project):
    os.symlink(rule_project.cwd / "missing", rule_project.cwd / ".clinerules")
    assert [(k, m) for k, _, m in errors(rule_project)] == [
        ("read-failure", "broken symbolic link; point it at an existing file or delete it")]


def test_an_unlistable_clinerules_folder_is_source_unreadable(rule_project, monkeypatch):
    folder = rule_project.cwd / ".clinerules"
    folder.mkdir()
    deny_listing(monkeypatch, folder)
    ((kind, path, message),) = errors(rule_project)
    assert (kind, path) == ("source-unreadable", str(folder)) and "Permission denied" in message


# -- turning it off ----------------------------------------------------------------------


def test_import_none_reads_nothing_not_even_a_stat(repo, record):
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert discover(repo).rules == ()
    assert [p for p in record if ".clinerules" in p or ".cline" in p] == []


def test_selecting_another_importer_turns_cline_off(repo):
    repo.env["PI_RULES_IMPORT"] = "copilot,claude"
    assert discover(repo).rules == ()
    repo.env["PI_RULES_IMPORT"] = " cline "
    assert len(discover(repo).rules) == 8


def test_blocking_the_plugin_turns_it_off(repo, cli):
    code, out = cli(repo, "-p", "no:cline", "--json", "list")
    assert code == 0 and json.loads(out)["rules"] == []


def test_an_untrusted_project_reads_no_cline_file(repo):
    assert repo.engine().discover(str(repo.cwd), trusted=False).rules == ()


def test_cline_is_an_importer_on_by_default(repo, cli):
    code, out = cli(repo, "plugins")
    assert code == 0
    line = next(l for l in out.splitlines() if l.strip().startswith("cline") and "enabled" in l)
    assert "nearest .clinerules" in line


def _without_conditions(row: dict) -> dict:
    """A ``list --json`` row without ``conditions`` (issue 34 added them; tests/hosts/test_new_user.py)."""
    return {k: v for k, v in row.items() if k != "conditions"}
