"""The ``claude-md`` importer: Claude Code's CLAUDE.md memory files read in place — where
they are read, what they become, their ``@path`` imports and what a user is told."""

from __future__ import annotations

import json
import os
import shutil
from functools import partial
from pathlib import Path

import pytest

from importer_helpers import FIXTURES, by_id, copy_fixture, discover, git_init, plugin_errors, status
from importer_helpers import cli, record  # noqa: F401 - pytest fixtures

NAME = "claude-md"
mine = partial(by_id, plugin=NAME)
errors = partial(plugin_errors, plugin=NAME)


def ids(project, cwd: Path | None = None, **kwargs) -> list[str]:
    return [r.id for r in discover(project, cwd, **kwargs).rules if r.file.plugin == NAME]


def messages(project) -> list[str]:
    return [e.message for e in errors(project)]


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped fixture: a git repository and a home folder."""
    copy_fixture(rule_project, "claude-md", git=True)
    shutil.copytree(FIXTURES / "claude-md" / ".home", rule_project.home, dirs_exist_ok=True)
    return rule_project


@pytest.fixture
def project(rule_project):
    """An empty git repository to write memory files into."""
    git_init(rule_project.cwd)
    return rule_project


def body(project, rule_id: str = "project/CLAUDE") -> str:
    return mine(project)[rule_id].body


# -- the fixture repository -------------------------------------------------------------------


def test_fixture_memory_files_load_general_to_specific_then_the_global_one(repo):
    assert ids(repo) == ["project/CLAUDE", "project/CLAUDE.local", "project/packages/api/CLAUDE", "~/.claude/CLAUDE"]
    assert errors(repo) == []


def test_fixture_imports_are_expanded_where_they_are_written(repo):
    text = body(repo)
    # AGENTS.md is a rule of its own (agents-md): pointed to, not copied (test_memory_bridges.py).
    assert "- (AGENTS.md reaches you as a rule of its own)\n- Reference TOC for planning: # Using Cursor" in text
    assert "Include `@AGENTS.md` to reuse" in text  # inline code is not an import
    assert "use @file for" in text  # a bare mention with no such file stays prose, silently
    assert "  @claims.md           # not an import" in text  # nor is a fenced block


def test_fixture_imports_are_copied_when_agents_md_is_not_imported_on_its_own(repo):
    repo.env["PI_RULES_IMPORT"] = "claude-md"
    agents = (repo.cwd / "AGENTS.md").read_text().rstrip("\n")
    assert f"- {agents}\n- Reference TOC for planning: # Using Cursor" in body(repo)


def test_fixture_nested_package_memory_applies_only_under_its_folder(repo):
    assert status(repo, "project/packages/api/CLAUDE", touched=["packages/api/src/index.ts"]) == (
        "active", ("touched packages/api/src/index.ts",))
    assert status(repo, "project/packages/api/CLAUDE", touched=["content/reference-toc.md"])[0] == "inactive"
    assert status(repo, "project/packages/api/CLAUDE")[0] == "inactive"
    assert status(repo, "project/CLAUDE")[0] == "active"


def test_fixture_global_memory_is_a_global_rule_without_its_html_comment(repo):
    rule = mine(repo)["~/.claude/CLAUDE"]
    assert (rule.source, rule.always_apply, rule.description) == ("global", True, "Rules for CLAUDE")
    assert rule.body.startswith("\n# Rules for CLAUDE\n") and "gist.github.com" not in rule.body


def test_fixture_list_json_shows_ids_real_paths_and_descriptions(repo, cli):
    code, out = cli(repo, "--json", "list")
    rows = {r["id"]: r for r in json.loads(out)["rules"] if r["plugin"] == NAME}
    assert code == 0
    assert rows["project/packages/api/CLAUDE"]["path"] == str(repo.cwd / "packages/api/CLAUDE.md")
    assert rows["project/packages/api/CLAUDE"]["relativePath"] == "packages/api/CLAUDE.md"
    assert rows["project/CLAUDE"]["description"] == "CLAUDE.md"
    assert rows["~/.claude/CLAUDE"]["source"] == "global"


# -- where it reads (each mapping row) --------------------------------------------------------


def test_cwd_memory_applies_always(project):
    project.write({"CLAUDE.md": "Use pnpm.\n"})
    rule = mine(project)["project/CLAUDE"]
    assert (rule.always_apply, rule.description) == (True, "CLAUDE.md (claude-md)")
    assert status(project, "project/CLAUDE") == ("active", ())


def test_ancestor_memory_up_to_the_git_root_applies_always_from_a_package(project):
    project.write({"CLAUDE.md": "# Root\n", "packages/api/CLAUDE.md": "# Api\n", "packages/api/src/a.ts": ""})
    cwd = project.cwd / "packages/api"
    assert ids(project, cwd) == ["project/CLAUDE", "project/packages/api/CLAUDE"]
    outcomes = {o.rule.id: o.status for o in project.engine().evaluate(project.facts(cwd=str(cwd))).outcomes}
    assert outcomes == {"project/CLAUDE": "active", "project/packages/api/CLAUDE": "active"}


def test_nothing_above_the_git_root_is_read(rule_project):
    rule_project.write({"CLAUDE.md": "# Above\n", "repo/CLAUDE.md": "# Repo\n"})
    git_init(rule_project.cwd / "repo")
    assert ids(rule_project, rule_project.cwd / "repo") == ["repo/CLAUDE"]


def test_a_folder_reads_claude_md_then_dot_claude_then_local(project):
    project.write({"CLAUDE.local.md": "# Mine\n", ".claude/CLAUDE.md": "# Hidden\n", "CLAUDE.md": "# Team\n"})
    assert ids(project) == ["project/CLAUDE", "project/.claude/CLAUDE", "project/CLAUDE.local"]


def test_nested_dot_claude_memory_is_folder_scoped_too(project):
    project.write({"web/.claude/CLAUDE.md": "# Web\n", "web/app.ts": ""})
    assert ids(project) == ["project/web/.claude/CLAUDE"]
    assert status(project, "project/web/.claude/CLAUDE", touched=["web/app.ts"])[0] == "active"
    assert status(project, "project/web/.claude/CLAUDE", touched=["app.ts"])[0] == "inactive"


def test_global_memory_loads_even_for_an_untrusted_project_which_reads_no_project_file(repo):
    assert ids(repo, trusted=False) == ["~/.claude/CLAUDE"]


def test_import_none_reads_nothing_not_even_the_global_file(repo, record):
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert ids(repo) == []
    assert [p for p in record if p.endswith("CLAUDE.md") or p.endswith("CLAUDE.local.md")] == []


def test_working_in_home_reads_its_dot_claude_memory_once_as_the_global_rule(rule_project):
    home = rule_project.home
    (home / ".claude").mkdir()
    (home / ".claude/CLAUDE.md").write_text("# Me\n")
    assert ids(rule_project, home) == ["~/.claude/CLAUDE"]


def test_a_binary_claude_md_is_a_read_failure(project):
    project.write({"CLAUDE.md": b"\x00\x01PNG"})
    (error,) = errors(project)
    assert error.kind == "read-failure" and "NUL bytes" in error.message
    assert ids(project) == []


# -- HTML comments ----------------------------------------------------------------------------


def test_line_leading_html_comments_are_dropped_code_and_inline_ones_kept(project):
    project.write({"CLAUDE.md": (
        "# Rules\n<!-- maintainer: keep under 50 lines -->\nUse pnpm.\n<!--\nmulti-line\nnote\n-->\n"
        "Text <!-- inline --> stays.\n```\n<!-- in a fence -->\n```\n<!-- note --> Use bun.\n"
    )})
    assert body(project) == (
        "# Rules\nUse pnpm.\nText <!-- inline --> stays.\n```\n<!-- in a fence -->\n```\n Use bun.\n"
    )


def test_an_unclosed_comment_is_kept_so_a_typo_cannot_hide_the_file(project):
    project.write({"CLAUDE.md": "<!-- oops\nUse pnpm.\n"})
    assert body(project) == "<!-- oops\nUse pnpm.\n"


def test_an_import_inside_a_comment_is_neither_read_nor_reported(project):
    project.write({"CLAUDE.md": "<!-- @docs/old.md -->\nText <!-- @gone.md --> end.\n"})
    assert body(project) == "Text <!-- @gone.md --> end.\n" and errors(project) == []


def test_comments_in_imported_files_are_dropped_too(project):
    project.write({"CLAUDE.md": "@style.md\n", "style.md": "<!-- why -->\nTabs.\n"})
    assert body(project) == "Tabs.\n"


# -- imports ----------------------------------------------------------------------------------


def test_import_is_relative_to_the_importing_files_folder(project):
    project.write({"packages/api/CLAUDE.md": "See @docs/api.md now.\n", "packages/api/docs/api.md": "REST only.\n",
                   "docs/api.md": "wrong one\n"})
    assert body(project, "project/packages/api/CLAUDE") == "See REST only. now.\n"


def test_nested_imports_resolve_from_each_imported_file(project):
    project.write({"CLAUDE.md": "@docs/a.md\n", "docs/a.md": "A @b.md\n", "docs/b.md": "B @../c.md\n", "c.md": "C\n"})
    assert body(project) == "A B C\n" and errors(project) == []


def test_absolute_import_inside_the_repository_is_read(project):
    project.write({"CLAUDE.md": f"@{project.cwd}/notes.md\n", "notes.md": "Notes.\n"})
    assert body(project) == "Notes.\n"


def test_home_import_of_the_global_file_is_read(rule_project):
    (rule_project.home / ".claude").mkdir()
    (rule_project.home / ".claude/CLAUDE.md").write_text("Mine: @~/.claude/prefs.md\n")
    (rule_project.home / ".claude/prefs.md").write_text("Short answers.\n")
    assert body(rule_project, "~/.claude/CLAUDE") == "Mine: Short answers.\n"


def test_home_import_of_a_project_file_is_not_read_and_says_why(project, monkeypatch):
    monkeypatch.setenv("HOME", str(project.home))
    (project.home / ".claude").mkdir()
    (project.home / ".claude/prefs.md").write_text("secret prefs\n")
    project.write({"CLAUDE.md": "- @~/.claude/prefs.md\n"})
    assert body(project) == "- @~/.claude/prefs.md\n"
    assert messages(project) == [
        f"import @~/.claude/prefs.md: in your home folder, outside the git root {project.cwd}; not read — "
        "move the file inside it, or import it from your own ~/.claude/CLAUDE.md"
    ]


def test_import_outside_the_git_root_is_not_read_and_reported(project):
    (project.cwd.parent / "shared.md").write_text("outside text\n")
    project.write({"CLAUDE.md": "@../shared.md\n"})
    assert body(project) == "@../shared.md\n"
    assert messages(project) == [
        f"import @../shared.md: {project.cwd.parent}/shared.md is outside the git root {project.cwd}; "
        "not read — move the file inside it"
    ]


def test_a_symlink_leading_out_is_never_followed(project, record):
    secret = project.cwd.parent / "secret.md"
    secret.write_text("TOKEN=hunter2\n")
    project.write({"CLAUDE.md": "@docs/link.md\n"})
    (project.cwd / "docs").mkdir()
    os.symlink(secret, project.cwd / "docs/link.md")
    record.clear()
    assert "hunter2" not in body(project)
    (message,) = messages(project)
    assert message.startswith(f"import @docs/link.md: symbolic link {project.cwd}/docs/link.md -> {secret} "
                              "leads outside the git root")
    assert str(secret) not in record


def test_missing_import_is_reported_against_the_importing_file_and_the_rule_still_loads(project, cli):
    project.write({"CLAUDE.md": "# Rules\nStyle: @docs/style.md\n"})
    (error,) = errors(project)
    assert (error.kind, error.path) == ("invalid-value", str(project.cwd / "CLAUDE.md"))
    assert error.message == "import @docs/style.md: no such file docs/style.md; create it or correct the path"
    assert body(project) == "# Rules\nStyle: @docs/style.md\n"
    code, out = cli(project, "check")
    assert code == 1
    assert out == ("invalid-value CLAUDE.md: import @docs/style.md: no such file docs/style.md; "
                   "create it or correct the path\n")


def test_a_nested_missing_import_names_the_file_it_is_written_in(project):
    project.write({"CLAUDE.md": "@docs/a.md\n", "docs/a.md": "See @gone.md\n"})
    assert messages(project) == [
        "import @gone.md in docs/a.md: no such file docs/gone.md; create it or correct the path"]


def test_imports_stop_after_five_hops(project):
    files = {"CLAUDE.md": "@f1.md\n"} | {f"f{i}.md": f"{i} @f{i + 1}.md\n" for i in range(1, 7)}
    project.write(files)
    assert body(project) == "1 2 3 4 5 @f6.md\n"
    assert messages(project) == [
        "import @f6.md in f5.md: not read — imports nest more than 5 levels deep; "
        "import the file from one nearer CLAUDE.md"]


def test_a_cycle_is_cut_where_it_closes(project):
    project.write({"CLAUDE.md": "@a.md\n", "a.md": "A @b.md\n", "b.md": "B @a.md\n"})
    assert body(project) == "A B @a.md\n"
    assert messages(project) == [
        "import @a.md in b.md: a.md is already being imported (a cycle); not expanded again — "
        "remove one of the imports"]


def test_a_file_importing_itself_is_a_cycle(project):
    project.write({"CLAUDE.md": "Me: @CLAUDE.md\n"})
    assert body(project) == "Me: @CLAUDE.md\n"
    assert "already being imported" in messages(project)[0]


def test_imports_in_code_fences_and_inline_code_are_left_alone(project):
    project.write({"CLAUDE.md": (
        "Run `@x.md` and ``a ` @x.md``.\n```sh\n@x.md\n```\n~~~\n@x.md\n~~~\n  ```\n  @x.md\n  ```\nReal: @x.md\n"
    ), "x.md": "X\n"})
    assert body(project) == (
        "Run `@x.md` and ``a ` @x.md``.\n```sh\n@x.md\n```\n~~~\n@x.md\n~~~\n  ```\n  @x.md\n  ```\nReal: X\n")


def test_prose_mentions_that_are_not_paths_stay_silently(project):
    text = "Ask @alice. Use @tanstack/react-query, the @/components alias, and mail a@b.md.\n"
    project.write({"CLAUDE.md": text})
    assert body(project) == text
    assert errors(project) == []


def test_a_bare_name_is_imported_when_the_file_exists(project):
    project.write({"CLAUDE.md": "See @README for the overview.\n", "README": "Overview.\n"})
    assert body(project) == "See Overview. for the overview.\n"


# -- the next discovery sees changes (ParseResult.depends) ------------------------------------


def test_editing_an_imported_file_is_seen_by_the_next_discovery_on_the_same_engine(project):
    project.write({"CLAUDE.md": "@docs/style.md\n", "docs/style.md": "Tabs.\n"})
    engine = project.engine()
    first = engine.discover(str(project.cwd), True)
    (project.cwd / "docs/style.md").write_text("Spaces, four of them.\n")
    second = engine.discover(str(project.cwd), True)
    assert [r.body for r in first.rules if r.file.plugin == NAME] == ["Tabs.\n"]
    assert [r.body for r in second.rules if r.file.plugin == NAME] == ["Spaces, four of them.\n"]


def test_creating_a_missing_import_is_seen_by_the_next_discovery(project):
    project.write({"CLAUDE.md": "@docs/style.md\n", "docs/README.md": "docs\n"})
    engine = project.engine()
    assert [e.plugin for e in engine.discover(str(project.cwd), True).errors] == [NAME]
    (project.cwd / "docs/style.md").write_text("Tabs.\n")
    again = engine.discover(str(project.cwd), True)
    assert again.errors == () and [r.body for r in again.rules if r.file.plugin == NAME] == ["Tabs.\n"]
