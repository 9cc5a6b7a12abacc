"""The ``agents-md`` importer (docs/importers.md, "The agents-md importer"): AGENTS.md files read in place,
always for cwd and its ancestors up to the git root, per folder below cwd."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rules_core.model import Facts
from rules_hosts.cli import main

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import FIXTURES, by_id, copy_fixture, discover, evaluate, git_init, relative_errors, statuses

FIXTURE = FIXTURES / "agents-md"
PLUGIN = "agents-md"


def rules(project, cwd: Path | None = None, **kwargs) -> dict:
    return by_id(project, cwd, plugin=PLUGIN, **kwargs)


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped monorepo (root, packages/web, packages/api with an override,
    a legacy docs/AGENT.md), as a git repository."""
    return copy_fixture(rule_project, "agents-md", git=True)


@pytest.fixture
def git_project(rule_project):
    git_init(rule_project.cwd)
    return rule_project


def section(project, cwd: Path | None = None, **facts) -> str:
    return evaluate(project, cwd, **facts).section


# -- the fixture repository ------------------------------------------------------------------


def test_fixture_ids_reference_paths_real_paths_and_order(repo):
    found = discover(repo)
    assert found.errors == ()
    rows = [(r.id, r.relative_path, r.file.plugin, r.source, os.path.relpath(r.file.path, repo.cwd))
            for r in found.rules]
    assert rows == [
        ("project/AGENTS", "AGENTS.md", PLUGIN, "project", "AGENTS.md"),
        ("project/docs/AGENT", "docs/AGENT.md", PLUGIN, "project", "docs/AGENT.md"),
        ("project/packages/api/AGENTS.override", "packages/api/AGENTS.override.md", PLUGIN, "project",
         "packages/api/AGENTS.override.md"),
        ("project/packages/web/AGENTS", "packages/web/AGENTS.md", PLUGIN, "project", "packages/web/AGENTS.md"),
    ]


def test_root_file_is_an_always_rule_with_the_whole_text_verbatim(repo):
    rule = rules(repo)["project/AGENTS"]
    assert rule.always_apply and rule.load == "pinned" and rule.globs == () and rule.match == "touched"
    assert (rule.enforcement, rule.priority) == ("inform", 0)
    assert rule.body == (FIXTURE / "AGENTS.md").read_text(encoding="utf-8")
    assert rule.description == "HyperDX Development Guide"  # the first heading
    assert statuses(repo)[0]["project/AGENTS"] == ("active", ())


def test_nested_file_applies_to_its_folder_only(repo):
    rule = rules(repo)["project/packages/web/AGENTS"]
    assert not rule.always_apply and rule.globs == ("**",) and rule.file.base == str(repo.cwd / "packages/web")
    assert statuses(repo, touched=["packages/web/src/App.tsx"])[0]["project/packages/web/AGENTS"] == (
        "active", ("touched packages/web/src/App.tsx",))
    assert statuses(repo, touched=["packages/api/src/server.ts"])[0]["project/packages/web/AGENTS"][0] == "inactive"
    assert statuses(repo)[0]["project/packages/web/AGENTS"][0] == "inactive"
    # Every path under the folder, dot-folders included (a config file is the package's too).
    assert statuses(repo, touched=["packages/web/.storybook/main.ts"])[0]["project/packages/web/AGENTS"][0] == "active"


def test_override_replaces_agents_md_in_its_folder(repo):
    found = rules(repo)
    assert "project/packages/api/AGENTS" not in found
    text = section(repo, touched=["packages/api/src/server.ts"])
    assert "Use the py311 conda environment" in text and "Multi-tenancy invariant" not in text


def test_legacy_agent_md_is_read_where_a_folder_has_nothing_newer(repo):
    rule = rules(repo)["project/docs/AGENT"]
    assert rule.body == (FIXTURE / "docs/AGENT.md").read_text(encoding="utf-8") and rule.globs == ("**",)


def test_agents_md_wins_over_agent_md_in_the_same_folder(git_project):
    git_project.write({"AGENTS.md": "# New\n", "AGENT.md": "# Old\n"})
    assert [(i, r.body) for i, r in rules(git_project).items()] == [("project/AGENTS", "# New\n")]


def test_override_wins_at_the_root_too(git_project):
    git_project.write({"AGENTS.override.md": "Local.\n", "AGENTS.md": "Shared.\n", "AGENT.md": "Old.\n"})
    assert [(i, r.body) for i, r in rules(git_project).items()] == [("project/AGENTS.override", "Local.\n")]


def test_a_directory_named_agents_md_is_passed_over_for_the_next_name(git_project):
    (git_project.cwd / "AGENTS.md").mkdir()
    git_project.write({"AGENT.md": "Old.\n"})
    assert list(rules(git_project)) == ["project/AGENT"] and discover(git_project).errors == ()


def test_section_puts_the_root_text_before_the_nested_text(repo):
    text = section(repo, touched=["packages/web/src/App.tsx"])
    assert text.index("HyperDX Development Guide") < text.index("Web Package Guide")
    assert "Agent Overrides" not in text and "Amp Examples" not in text  # untouched folders


def test_nested_rule_appears_only_when_a_file_under_its_folder_is_touched(repo):
    assert "Web Package Guide" not in section(repo)
    assert "Web Package Guide" in section(repo, touched=["packages/web/src/App.tsx"])


def test_started_in_a_sub_directory_the_ancestors_apply_general_first(repo):
    api = repo.cwd / "packages/api"
    repo.write({"packages/AGENTS.md": "# Packages\n"})
    found = discover(repo, api).rules
    assert [(r.id, r.always_apply) for r in found] == [
        ("project/AGENTS", True), ("project/packages/AGENTS", True), ("project/packages/api/AGENTS.override", True)]
    text = section(repo, api)
    assert text.index("HyperDX") < text.index("# Packages") < text.index("Agent Overrides")


def test_a_sibling_folder_is_not_read_from_a_sub_directory(repo):
    ids = list(rules(repo, repo.cwd / "packages/web"))
    assert ids == ["project/AGENTS", "project/packages/web/AGENTS"]


def test_nothing_above_the_git_root_is_read(rule_project):
    rule_project.write({"AGENTS.md": "# Outer\n", "inner/AGENTS.md": "# Inner\n"})
    git_init(rule_project.cwd / "inner")
    assert list(rules(rule_project, rule_project.cwd / "inner")) == ["inner/AGENTS"]


def test_outside_a_git_repository_cwd_and_below_are_read(rule_project):
    rule_project.write({"AGENTS.md": "# Here\n", "lib/AGENTS.md": "# Lib\n"})
    assert list(rules(rule_project)) == ["project/AGENTS", "project/lib/AGENTS"]
    assert list(rules(rule_project, rule_project.cwd / "lib")) == ["lib/AGENTS"]


def test_reference_path_is_relative_to_the_git_root(repo):
    engine = repo.engine()
    found = engine.discover(str(repo.cwd)).rules
    reading = engine.read_rule(Facts(cwd=str(repo.cwd)), rules=found, name="packages/api/AGENTS.override.md")
    assert reading.rule is not None and reading.rule.body.startswith("# Agent Overrides\n")


# -- what a file holds --------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n", "  \t\n"])
def test_an_empty_file_is_listed_inactive_saying_why(git_project, text):
    git_project.write({"AGENTS.md": text})
    rule = rules(git_project)["project/AGENTS"]
    assert rule.inactive_reason == "turned off: the file is empty, and Codex skips empty AGENTS.md files"
    assert rule.description == "AGENTS.md (agents-md)"
    result, evaluation = statuses(git_project)
    assert result["project/AGENTS"] == ("inactive", (rule.inactive_reason,)) and evaluation.section == ""


def test_an_empty_override_silences_its_folder_as_in_codex(git_project):
    git_project.write({"AGENTS.override.md": "", "AGENTS.md": "# Shared\n"})
    assert [(i, r.inactive_reason is not None) for i, r in rules(git_project).items()] == [
        ("project/AGENTS.override", True)]


def test_a_leading_frontmatter_block_is_kept_verbatim(git_project):
    text = "---\nlayout: default\ntitle: AGENTS.md\n---\n\n# `AGENTS.md`\n\nKeep it short.\n"
    git_project.write({"AGENTS.md": text})
    rule = rules(git_project)["project/AGENTS"]
    assert rule.body == text and rule.description == "`AGENTS.md`" and discover(git_project).errors == ()


def test_broken_yaml_looking_text_is_no_error(git_project):
    git_project.write({"AGENTS.md": "---\nkey: [unclosed\n"})
    assert rules(git_project)["project/AGENTS"].body == "---\nkey: [unclosed\n" and discover(git_project).errors == ()


def test_without_a_heading_the_description_names_the_file(git_project):
    git_project.write({"pkg/AGENTS.md": "Run `make test`.\n"})
    assert rules(git_project)["project/pkg/AGENTS"].description == "pkg/AGENTS.md (agents-md)"


def test_invalid_utf8_loads_as_codex_reads_it_and_a_fifo_is_never_listed(git_project):
    """Codex reads a damaged byte as U+FFFD with a warning (docs/importers.md, "Damaged bytes")."""
    git_project.write({"AGENTS.md": b"caf\xe9\n"})
    (git_project.cwd / "pkg").mkdir()
    os.mkfifo(git_project.cwd / "pkg" / "AGENTS.md")
    discovery = discover(git_project)
    assert discovery.errors == ()
    [rule] = discovery.rules  # the FIFO below cwd is not a real file: the walk never lists it
    assert rule.body == "caf\ufffd\n"
    assert [(w.code, w.path) for w in discovery.warnings] == [("invalid-utf8", str(git_project.cwd / "AGENTS.md"))]


def test_a_huge_file_and_a_broken_link_are_read_failures(git_project):
    git_project.write({"AGENTS.md": "x" * (1024 * 1024 + 1)})
    os.mkdir(git_project.cwd / "sub")
    os.symlink("missing.md", git_project.cwd / "sub" / "AGENTS.override.md")
    rows = sorted((k, p) for k, p, *_ in relative_errors(git_project, git_project.cwd / "sub"))
    assert rows == [("read-failure", "AGENTS.md"), ("read-failure", "sub/AGENTS.override.md")]


def test_a_fifo_in_cwd_is_a_read_failure_never_opened(git_project):
    os.mkfifo(git_project.cwd / "AGENTS.md")
    [(kind, path, message, plugin)] = relative_errors(git_project)
    assert (kind, path, plugin) == ("read-failure", "AGENTS.md", PLUGIN) and "not a regular file" in message


def test_an_edit_is_seen_and_a_deleted_nested_file_disappears(repo):
    engine = repo.engine()
    assert "project/packages/web/AGENTS" in {r.id for r in engine.discover(str(repo.cwd)).rules}
    (repo.cwd / "packages/web/AGENTS.md").unlink()
    path = repo.cwd / "AGENTS.md"
    path.write_text("# Changed\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    found = {r.id: r for r in engine.discover(str(repo.cwd)).rules}
    assert "project/packages/web/AGENTS" not in found and found["project/AGENTS"].body == "# Changed\n"


# -- what is never read ---------------------------------------------------------------------


def test_a_gitignored_vendored_copy_is_not_read(git_project):
    git_project.write({".gitignore": "vendor/\n", "vendor/lib/AGENTS.md": "# Vendored\n", "src/AGENTS.md": "# Src\n"})
    assert list(rules(git_project)) == ["project/src/AGENTS"]


def test_a_symlinked_directory_is_never_followed(git_project, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("# Elsewhere\n", encoding="utf-8")
    git_project.write({"packages/web/AGENTS.md": "# Web\n"})
    os.symlink(outside, git_project.cwd / "linked")
    os.symlink(git_project.cwd / "packages", git_project.cwd / "alias")
    assert list(rules(git_project)) == ["project/packages/web/AGENTS"]
    assert relative_errors(git_project) == []


def test_a_nested_symlinked_file_inside_the_project_is_read(git_project):
    """Like a walked-up one (docs/format.md, "One file, two names"); one leading out is refused."""
    git_project.write({"docs/guide.md": "# Guide\n"})
    (git_project.cwd / "pkg").mkdir()
    os.symlink("../docs/guide.md", git_project.cwd / "pkg" / "AGENTS.md")
    found = rules(git_project)
    assert list(found) == ["project/pkg/AGENTS"]
    assert found["project/pkg/AGENTS"].body == "# Guide\n"


def test_a_root_file_linking_out_of_the_repository_is_reported_never_read(git_project, tmp_path):
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    os.symlink("../outside.md", git_project.cwd / "AGENTS.md")
    [(kind, path, message, _)] = relative_errors(git_project)
    assert (kind, path) == ("read-failure", "AGENTS.md") and "leads outside the git root" in message


def test_home_is_not_read_as_a_project_folder(rule_project):
    home = rule_project.home
    (home / "AGENTS.md").write_text("# Mine\n", encoding="utf-8")
    project = home / "code" / "app"
    project.mkdir(parents=True)
    git_init(home)
    assert list(rules(rule_project, project)) == []


# -- switching it off -----------------------------------------------------------------------


def test_untrusted_project_reads_none(repo):
    assert rules(repo, trusted=False) == {}


def test_import_none_reads_none_and_stats_no_agents_file(repo, record):
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert rules(repo) == {}
    assert [p for p in record if os.path.basename(p).startswith("AGENT")] == []


def test_import_list_without_it_turns_it_off_and_with_it_on(repo):
    repo.env["PI_RULES_IMPORT"] = "cursor"
    assert rules(repo) == {}
    repo.env["PI_RULES_IMPORT"] = "agents-md"
    assert "project/AGENTS" in rules(repo)


def test_blocking_the_plugin_turns_it_off(repo):
    assert rules(repo, blocked=[PLUGIN]) == {}


# -- the command line -----------------------------------------------------------------------


def test_cli_check_finds_the_one_rule_of_a_repository_with_only_agents_md(git_project, cli):
    git_project.write({"AGENTS.md": "# Project\n\nRun `make test` before committing.\n"})
    assert cli(git_project, "check") == (0, "ok: 1 rule, no errors\n")


def test_cli_list_json_shows_ids_paths_and_plugin(repo, cli):
    code, out = cli(repo, "--json", "list")
    assert code == 0
    rows = [(r["id"], r["relativePath"], r["path"], r["plugin"], r["source"]) for r in json.loads(out)["rules"]]
    assert rows[0] == ("project/AGENTS", "AGENTS.md", str(repo.cwd / "AGENTS.md"), PLUGIN, "project")
    assert ("project/packages/api/AGENTS.override", "packages/api/AGENTS.override.md",
            str(repo.cwd / "packages/api/AGENTS.override.md"), PLUGIN, "project") in rows


def test_cli_render_shows_the_nested_text_for_a_touched_file(repo, cli):
    code, out = cli(repo, "render", "--touched", "packages/api/src/server.ts")
    assert code == 0 and out.index("HyperDX Development Guide") < out.index("Agent Overrides")


def test_cli_block_flag_and_untrusted_flag_read_none(repo, cli):
    assert cli(repo, "-p", f"no:{PLUGIN}", "check") == (0, "ok: 0 rules, no errors\n")
    assert cli(repo, "--untrusted", "check") == (0, "ok: 0 rules, no errors\n")


def test_cli_import_none_reads_none(repo, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(repo.home))
    monkeypatch.setenv("PI_RULES_IMPORT", "none")
    assert main(["--cwd", str(repo.cwd), "check"]) == 0
    assert capsys.readouterr().out == "ok: 0 rules, no errors\n"
