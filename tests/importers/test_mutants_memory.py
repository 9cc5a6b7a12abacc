"""Memory files (``rules_importers._memory``) and their ``@path`` imports
(``rules_importers._includes``), pinned where mutation testing found them unpinned
(issue 32).

What a user sees: the rules and errors discovery makes of a project's ``CLAUDE.md``,
``GEMINI.md`` and ``AGENTS.md`` (their bodies, ids, order, the text inlined when a pointed-to
rule is not delivered), and what Claude Code is said to read itself. docs/mutation.md
(``_memory.py``, ``_includes.py``) lists the mutants these kill and the ones left, explained.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rules_core.discovery.containment import Containment
from rules_core.discovery.reading import MAX_RULE_BYTES
from rules_core.model import Facts

from importer_helpers import discover

AGENTS = "# AGENTS.md\n\nRun `pnpm test` before every commit.\n"
POINTER = "(AGENTS.md reaches you as a rule of its own)"
IMPORTED = ("Claude Code reads this file through the @import in CLAUDE.md; pi-rules leaves it out so it is not "
            "sent twice")


@pytest.fixture
def project(rule_project):
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    return rule_project


def rules(project, cwd: Path | None = None, **kwargs) -> dict:
    return {r.id: r for r in discover(project, cwd, **kwargs).rules}


def errors(project, cwd: Path | None = None) -> list[tuple[str, str, str]]:
    return [(e.kind, e.plugin, e.message) for e in discover(project, cwd).errors]


# -- where imports are not read ----------------------------------------------------------------


def test_imports_inside_an_inline_comment_holding_code_stay_as_written(project):
    # An inline comment (kept in the body) around a code span, and a code span opened
    # inside a comment that runs on past it: one region each, nothing inside imported.
    project.write({"CLAUDE.md": "See <!-- @a.md `x` @b.md --> then @c.md\nand <!-- `y --> @d.md ` @c.md\n",
                   "a.md": "A\n", "b.md": "B\n", "c.md": "C\n", "d.md": "D\n"})
    assert rules(project)["project/CLAUDE"].body == "See <!-- @a.md `x` @b.md --> then C\nand <!-- `y --> @d.md ` C\n"
    assert errors(project) == []


# -- what Claude Code reads through CLAUDE.md's imports (rules_hosts/claude_code/native.py) -----


def claude_code(project) -> dict:
    facts = Facts(cwd=str(project.cwd), max_tokens=20000, host="claude-code")
    return {o.rule.id: (o.status, o.reasons) for o in project.engine().evaluate(facts).outcomes}


def test_claude_code_reads_agents_md_through_an_import_after_code_and_with_a_fragment(project):
    project.write({"AGENTS.md": AGENTS, "CLAUDE.md": "```\nnpm test\n```\nSee @AGENTS.md#setup first.\n"})
    assert claude_code(project)["project/AGENTS"] == ("inactive", (IMPORTED,))


def test_an_import_inside_an_html_comment_is_not_claude_code_reading_it(project):
    project.write({"AGENTS.md": AGENTS, "CLAUDE.md": "<!-- @AGENTS.md -->\nOur own notes.\n"})
    assert claude_code(project)["project/AGENTS"] == ("active", ())
    project.write({"CLAUDE.md": "<!-- note -->\n@AGENTS.md\n"})  # positive control
    assert claude_code(project)["project/AGENTS"] == ("inactive", (IMPORTED,))


# -- which spellings are imports -----------------------------------------------------------


def test_gemini_imports_paths_starting_with_a_letter_from_a_to_z_only(project):
    project.write({"GEMINI.md": "@_notes.md @api.md @zoo.md @Zed.md\n",
                   "_notes.md": "N\n", "api.md": "A\n", "zoo.md": "Z\n", "Zed.md": "E\n"})
    assert rules(project)["project/GEMINI"].body == "@_notes.md A Z E\n"


@pytest.mark.parametrize(("name", "import_"), [("CLAUDE.md", "@a.md"), ("GEMINI.md", "@./a.md")])
def test_a_lone_at_slash_is_prose_and_costs_no_lookup(project, name, import_):
    # 1,024 lookups are the limit: a "@/" looked up 1,024 times would leave no room for the import.
    project.write({name: "@/ " * 1024 + import_ + "\n", "a.md": "A\n"})
    (rule,) = (r for r in rules(project).values() if r.file.path == str(project.cwd / name))
    assert rule.body == "@/ " * 1024 + "A\n"
    assert errors(project) == []


# -- a memory file pointing to another rule (expanded_memory_rule) --------------------------


def test_a_binary_memory_files_imports_are_never_looked_up(project, monkeypatch):
    looked_up: list[str] = []
    real = Containment.resolve
    monkeypatch.setattr(Containment, "resolve", lambda self, path: looked_up.append(path) or real(self, path))
    project.write({"CLAUDE.md": "@a.md\n", "a.md": "A\n"})
    assert rules(project)["project/CLAUDE"].body == "A\n"
    assert str(project.cwd / "a.md") in looked_up  # positive control
    looked_up.clear()
    project.write({"CLAUDE.md": "@a.md\n\x00\n"})
    assert rules(project) == {}
    assert str(project.cwd / "a.md") not in looked_up


def test_the_inlined_text_of_a_pointing_file_expands_fragments_and_keeps_errors_and_depends(project):
    project.write({"AGENTS.md": AGENTS, "CLAUDE.md": "@AGENTS.md\n@docs/a.md#part\n@./missing.md\n",
                   "docs/a.md": "Tabs.\n"})
    engine = project.engine()
    first = engine.discover(str(project.cwd), True)
    claude = {r.id: r for r in first.rules}["project/CLAUDE"]
    assert claude.body == f"{POINTER}\nTabs.\n@./missing.md\n"
    assert claude.inlined == "# AGENTS.md\n\nRun `pnpm test` before every commit.\nTabs.\n@./missing.md\n"
    assert [(e.kind, e.plugin, e.message) for e in first.errors] == [
        ("invalid-value", "claude-md", "import @./missing.md: no such file missing.md; create it or correct the path")]
    (project.cwd / "docs/a.md").write_text("Spaces, four of them.\n")
    again = {r.id: r for r in engine.discover(str(project.cwd), True).rules}["project/CLAUDE"]
    assert again.body == f"{POINTER}\nSpaces, four of them.\n@./missing.md\n"


def test_working_in_home_the_inlined_text_reads_home_imports(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    home = rule_project.home
    (home / "AGENTS.md").write_text(AGENTS)
    (home / "notes.md").write_text("Short answers.\n")
    (home / "CLAUDE.md").write_text("@AGENTS.md\n@~/notes.md\n")
    claude = rules(rule_project, home)["home/CLAUDE"]
    assert claude.body == "(~/AGENTS.md reaches you as a rule of its own)\nShort answers.\n"
    assert claude.inlined == f"{AGENTS}Short answers.\n"


# -- the rule of a memory file (memory_rule) ------------------------------------------------


def test_a_memory_files_description_is_its_first_heading_without_a_closing_run(project):
    project.write({"CLAUDE.md": "# Build notes ##\n\nText.\n", "GEMINI.md": "Plain text.\n"})
    found = rules(project)
    assert found["project/CLAUDE"].description == "Build notes"
    assert found["project/GEMINI"].description == "GEMINI.md (gemini-md)"


def test_a_binary_memory_files_read_failure_names_its_importer(project):
    project.write({"CLAUDE.md": "# Title\n\x00\n", "GEMINI.md": "# Title\n\x00\n"})
    assert sorted((e.kind, e.plugin) for e in discover(project).errors) == [
        ("read-failure", "claude-md"), ("read-failure", "gemini-md")]


# -- files that change between the check and the read (_Run._read) ------------------------


def swapping_after_resolve(monkeypatch, name: str, swap) -> None:
    """Run ``swap(path)`` right after containment resolved the import ``name``: the race
    between the check and the read, made deterministic."""
    real = Containment.resolve

    def resolve(self, path):
        found = real(self, path)
        if path.endswith(name):
            swap(Path(path))
        return found

    monkeypatch.setattr(Containment, "resolve", resolve)


def test_an_import_replaced_by_a_link_after_the_check_is_not_followed(project, tmp_path, monkeypatch):
    (tmp_path / "secret.md").write_text("outside secret\n")
    project.write({"CLAUDE.md": "@a.md\n", "a.md": "A\n"})

    def to_link(path: Path) -> None:
        path.unlink()
        path.symlink_to(tmp_path / "secret.md")

    swapping_after_resolve(monkeypatch, "a.md", to_link)
    found = discover(project)
    body = {r.id: r.body for r in found.rules}["project/CLAUDE"]
    assert "outside secret" not in body and body == "@a.md\n"
    assert [(e.kind, e.message.split(": ")[0]) for e in found.errors] == [("invalid-value", "import @a.md")]


def test_an_import_deleted_after_the_check_is_said_to_be_missing(project, monkeypatch):
    project.write({"CLAUDE.md": "@gone.md\n", "gone.md": "G\n"})
    swapping_after_resolve(monkeypatch, "gone.md", Path.unlink)
    found = discover(project)
    assert {r.id: r.body for r in found.rules}["project/CLAUDE"] == "@gone.md\n"
    assert [e.message for e in found.errors] == ["import @gone.md: no such file gone.md; create it or correct the path"]


# -- how messages show a path (_Run._shown) -------------------------------------------------


def test_an_import_of_the_project_folder_itself_names_it_dot(project):
    project.write({"CLAUDE.md": "@./\n"})
    assert [e.message for e in discover(project).errors] == [
        "import @./: . is a folder, not a file; import a file inside it"]


@pytest.mark.parametrize("folder", ["notes X", "notes "])
def test_paths_in_messages_are_relative_whatever_the_project_folders_last_character(rule_project, tmp_path, folder):
    repo = tmp_path / folder
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "CLAUDE.md").write_text("@docs/missing.md\n")
    found = rule_project.engine().discover(str(repo), True)
    assert [e.message for e in found.errors] == [
        "import @docs/missing.md: no such file docs/missing.md; create it or correct the path"]


# -- the limits are exact (_Run._import) ----------------------------------------------------


LIMIT = ("import @b.md: not read — this file's imports, nested ones included, pass the limit (256 files inserted, "
         "1024 looked up); import fewer files")


# A bare name that is no file is looked up, then left as prose (unreported): 1,023 of them and
# @a.md make the 1,024th lookup; 256 @a.md make the 256th file inserted. Then @b.md is not read.
@pytest.mark.parametrize(("text", "body"), [("@nothere " * 1023 + "@a.md @b.md\n", "@nothere " * 1023 + "A @b.md\n"),
                                            ("@a.md " * 256 + "@b.md\n", "A " * 256 + "@b.md\n")])
def test_the_last_lookup_and_file_the_limits_allow_are_made_and_the_next_import_is_not(project, text, body):
    project.write({"CLAUDE.md": text, "a.md": "A\n", "b.md": "B\n"})
    found = discover(project)
    assert {r.id: r.body for r in found.rules}["project/CLAUDE"] == body
    assert [e.message for e in found.errors] == [LIMIT]


def test_an_import_filling_the_rule_size_exactly_is_read(project):
    text = "@a.md\n"
    project.write({"CLAUDE.md": text, "a.md": "x" * (MAX_RULE_BYTES - len(text) - 1) + "\n"})
    found = discover(project)
    assert {r.id: len(r.body) for r in found.rules}["project/CLAUDE"] == MAX_RULE_BYTES - len(text)
    assert found.errors == ()


# -- what is at a memory file's name (_folder_files, global_memory) --------------------------

NOT_PLAIN = "not a regular file (FIFO, socket or device); memory files must be plain files"


def test_a_fifo_first_in_its_group_is_a_read_failure_and_the_later_names_are_not_read(project):
    project.write({"AGENTS.md": AGENTS, "GEMINI.md": "G\n"})
    os.mkfifo(project.cwd / "AGENTS.override.md")
    found = discover(project)
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == [
        ("read-failure", str(project.cwd / "AGENTS.override.md"), NOT_PLAIN, "agents-md")]
    assert sorted(found_rules_of(found)) == ["project/GEMINI"]


def test_a_broken_link_first_in_its_group_is_a_read_failure_and_the_later_names_are_not_read(project):
    project.write({"AGENTS.md": AGENTS})
    os.symlink("nowhere.md", project.cwd / "AGENTS.override.md")
    found = discover(project)
    assert [(e.kind, e.path, e.plugin) for e in found.errors] == [
        ("read-failure", str(project.cwd / "AGENTS.override.md"), "agents-md")]
    assert found_rules_of(found) == []


def test_a_folder_named_like_a_memory_file_is_passed_over(project):
    project.write({"AGENTS.override.md/x.txt": "x", "AGENTS.md": AGENTS})
    found = discover(project)
    assert (found_rules_of(found), found.errors) == (["project/AGENTS"], ())


def found_rules_of(found) -> list[str]:
    return [r.id for r in found.rules]


@pytest.mark.parametrize(("relative", "plugin"), [(".claude/CLAUDE.md", "claude-md"), (".gemini/GEMINI.md", "gemini-md")])
def test_a_user_memory_file_that_is_a_folder_or_a_fifo_is_said_to_be_no_plain_file(rule_project, relative, plugin):
    path = rule_project.home / relative
    path.mkdir(parents=True)
    want = [("read-failure", str(path), f"is not a plain file; {plugin} reads {relative} as one rule", plugin)]
    assert [(e.kind, e.path, e.message, e.plugin) for e in discover(rule_project).errors] == want
    path.rmdir()
    os.mkfifo(path)
    assert [(e.kind, e.path, e.message, e.plugin) for e in discover(rule_project).errors] == want
    path.unlink()
    os.symlink("nowhere.md", path)
    assert [(e.kind, e.path, e.plugin) for e in discover(rule_project).errors] == [("read-failure", str(path), plugin)]


# -- what a token is (_tokens) --------------------------------------------------------------


def test_a_bare_fragment_is_prose_and_only_the_first_hash_starts_a_fragment(project):
    project.write({"CLAUDE.md": "See @#setup and @a.md#y#z\n", "a.md": "A\n"})
    found = discover(project)
    assert {r.id: r.body for r in found.rules}["project/CLAUDE"] == "See @#setup and A\n"
    assert found.errors == ()


def test_a_kiro_reference_of_only_spaces_is_left_as_written(project):
    project.write({".kiro/steering/api.md": "#[[file:   ]] #[[file: a.md ]]\n", "a.md": "A\n"})
    found = discover(project)
    assert [r.body for r in found.rules if r.file.plugin == "kiro"] == ["#[[file:   ]] A\n"]
    assert found.errors == ()


def test_gemini_and_kiro_read_imports_inside_html_comments(project):
    # Only Claude Code hides HTML comments; Gemini CLI and Kiro keep them, imports and all.
    project.write({"GEMINI.md": "<!-- @./a.md -->\n", ".kiro/steering/api.md": "<!-- #[[file:a.md]] -->\n",
                   "CLAUDE.md": "Intro <!-- @a.md --> end\n", "a.md": "A\n"})
    found = discover(project)
    bodies = {r.file.plugin: r.body for r in found.rules}
    assert bodies == {"gemini-md": "<!-- A -->\n", "kiro": "<!-- A -->\n", "claude-md": "Intro <!-- @a.md --> end\n"}


def test_an_imported_file_without_a_final_newline_is_inserted_whole(project):
    project.write({"CLAUDE.md": "See @a.md.\n", "a.md": "Alpha"})
    assert rules(project)["project/CLAUDE"].body == "See Alpha.\n"


def test_an_import_grown_past_the_budget_after_the_check_is_not_inserted(project, monkeypatch):
    project.write({"CLAUDE.md": "@big.md\n", "big.md": "small\n"})
    swapping_after_resolve(monkeypatch, "big.md", lambda path: path.write_text("x" * MAX_RULE_BYTES))
    found = discover(project)
    assert {r.id: r.body for r in found.rules}["project/CLAUDE"] == "@big.md\n"
    assert [e.message for e in found.errors] == [
        f"import @big.md: not read — the expanded text would pass {MAX_RULE_BYTES} bytes, the limit for one rule; "
        "import smaller or fewer files"]


def test_kiro_references_are_relative_to_the_workspace_below_the_git_root(project):
    project.write({"app/.kiro/steering/api.md": "#[[file:api.yaml]]\n", "app/api.yaml": "openapi: 3.1.0\n",
                   "api.yaml": "wrong\n"})
    found = discover(project, project.cwd / "app")
    assert [r.body for r in found.rules if r.file.plugin == "kiro"] == ["openapi: 3.1.0\n"]


def test_outside_a_git_repository_messages_name_the_project_directory(rule_project, tmp_path):
    (tmp_path / "out.md").write_text("outside\n")
    rule_project.write({"CLAUDE.md": "@../out.md\n"})
    assert [e.message for e in discover(rule_project).errors] == [
        f"import @../out.md: {tmp_path / 'out.md'} is outside the project directory {rule_project.cwd}; not read — "
        "move the file inside it"]


def test_gemini_reads_backslashes_and_hashes_as_part_of_the_path(project):
    project.write({"GEMINI.md": "@./a\\b.md and @./notes#1.md\n", "a\\b.md": "AB\n", "notes#1.md": "N1\n"})
    found = discover(project)
    assert {r.id: r.body for r in found.rules}["project/GEMINI"] == "AB and N1\n"
    assert found.errors == ()


def test_a_parent_path_without_an_extension_is_plainly_a_path_and_reported(project):
    project.write({"CLAUDE.md": "@../notes\n"})
    assert [e.message for e in discover(project).errors] == [
        f"import @../notes: {project.cwd.parent / 'notes'} is outside the git root {project.cwd}; not read — "
        "move the file inside it"]


def test_a_name_ending_in_an_escaped_space_has_no_extension_so_it_is_prose(project):
    project.write({"CLAUDE.md": "@gone.md\\ \n"})
    found = discover(project)
    assert ({r.id: r.body for r in found.rules}["project/CLAUDE"], found.errors) == ("@gone.md\\ \n", ())


def test_working_in_home_a_missing_home_import_is_reported(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    (rule_project.home / "CLAUDE.md").write_text("@~/notes\n")
    assert [e.message for e in discover(rule_project, rule_project.home).errors] == [
        "import @~/notes: no such file ~/notes; create it or correct the path"]


def test_a_user_memory_file_importing_from_outside_home_names_your_home_folder(rule_project, tmp_path):
    (tmp_path / "out.md").write_text("outside\n")
    (rule_project.home / ".claude").mkdir()
    (rule_project.home / ".claude/CLAUDE.md").write_text("@../../out.md\n")
    assert [e.message for e in discover(rule_project).errors] == [
        f"import @../../out.md: {tmp_path / 'out.md'} is outside your home folder {rule_project.home}; not read — "
        "move the file inside it"]


# -- the budget and the chain of one expansion (_Run.result) --------------------------------


def test_imports_fill_the_rule_size_to_the_byte_and_no_further(project):
    text = "@a.md @b.md\n"
    project.write({"CLAUDE.md": text, "a.md": "x" * (MAX_RULE_BYTES - len(text)), "b.md": "y"})
    found = discover(project)
    body = {r.id: r.body for r in found.rules}["project/CLAUDE"]
    assert (len(body), body.endswith("x @b.md\n")) == (MAX_RULE_BYTES - len("@a.md"), True)
    assert [e.message.split(" — ")[0] for e in found.errors] == ["import @b.md: not read"]


def test_a_memory_file_of_the_full_rule_size_imports_nothing_more(project):
    text = "@b.md\n"
    project.write({"CLAUDE.md": text + "z" * (MAX_RULE_BYTES - len(text)), "b.md": "y"})
    found = discover(project)
    assert {r.id: r.body[:6] for r in found.rules}["project/CLAUDE"] == "@b.md\n"
    assert [e.message.split(" — ")[0] for e in found.errors] == ["import @b.md: not read"]


def test_a_memory_file_that_is_a_link_is_on_its_own_import_chain(project):
    project.write({"notes/main.md": "See @notes/main.md\n"})
    os.symlink("notes/main.md", project.cwd / "CLAUDE.md")
    found = discover(project)
    assert {r.id: r.body for r in found.rules}["project/CLAUDE"] == "See @notes/main.md\n"
    assert [e.message for e in found.errors] == [
        "import @notes/main.md: notes/main.md is already being imported (a cycle); not expanded again — remove one "
        "of the imports"]



# -- a memory file that is a link inside the project (_contained_kind) ----------------------


def test_a_link_to_a_folder_is_passed_over_and_a_link_to_a_fifo_is_no_plain_file(project):
    project.write({"AGENTS.md": AGENTS, "docs/x.txt": "x"})
    os.symlink("docs", project.cwd / "AGENTS.override.md")
    os.mkfifo(project.cwd / "pipe")
    os.symlink("pipe", project.cwd / "CLAUDE.md")
    found = discover(project)
    assert found_rules_of(found) == ["project/AGENTS"]
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == [
        ("read-failure", str(project.cwd / "CLAUDE.md"), NOT_PLAIN, "claude-md")]


def test_ids_name_a_project_folder_whatever_its_name_ends_with(rule_project, tmp_path):
    repo = tmp_path / "XX"
    (repo / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "AGENTS.md").write_text(AGENTS)
    (repo / "pkg/AGENTS.md").write_text(AGENTS)
    assert [r.id for r in rule_project.engine().discover(str(repo), True).rules] == ["XX/AGENTS", "XX/pkg/AGENTS"]


def test_a_home_import_never_names_a_project_folder_called_tilde(project):
    # "@~/AGENTS.md" is the user's home file to Claude Code, not ./~/AGENTS.md.
    project.write({"CLAUDE.md": "@~/AGENTS.md\n", "~/AGENTS.md": AGENTS})
    rule_id = next(r.id for r in rules(project).values() if r.file.path == str(project.cwd / "~/AGENTS.md"))
    assert IMPORTED not in claude_code(project)[rule_id][1]
    project.write({"CLAUDE.md": "@./~/AGENTS.md\n"})  # positive control
    assert claude_code(project)[rule_id][1] == (IMPORTED,)


# -- where memory files are read from (memory_sources, _walked, _folder_files) --------------


def test_from_a_package_imports_are_read_anywhere_inside_the_git_root(project):
    project.write({"CLAUDE.md": "@docs/style.md\n", "docs/style.md": "Tabs.\n",
                   "pkg/CLAUDE.md": "@../docs/style.md\n", "pkg/x.ts": ""})
    found = discover(project, project.cwd / "pkg")
    assert {r.id: r.body for r in found.rules} == {"project/CLAUDE": "Tabs.\n", "project/pkg/CLAUDE": "Tabs.\n"}
    assert found.errors == ()


def test_outside_a_git_repository_a_link_leading_out_names_the_project_directory(rule_project, tmp_path):
    (tmp_path / "secret.md").write_text("outside secret\n")
    rule_project.write({"CLAUDE.md": "@link.md\n"})
    os.symlink(tmp_path / "secret.md", rule_project.cwd / "link.md")
    (message,) = [e.message for e in discover(rule_project).errors]
    assert message.startswith(f"import @link.md: symbolic link {rule_project.cwd}/link.md -> {tmp_path / 'secret.md'} "
                              f"leads outside the project directory {rule_project.cwd}; not read")


def test_every_memory_file_is_budgeted_in_the_memory_pool(project):
    project.write({"AGENTS.md": AGENTS, "CLAUDE.md": "# C\n", "GEMINI.md": "# G\n", "pkg/AGENTS.md": AGENTS})
    assert {r.id: r.pool.name for r in rules(project).values()} == {
        "project/AGENTS": "memory", "project/CLAUDE": "memory", "project/GEMINI": "memory",
        "project/pkg/AGENTS": "memory"}


def test_reference_paths_are_relative_to_the_git_root_from_a_package_and_to_cwd_without_git(rule_project):
    rule_project.write({"AGENTS.md": AGENTS, "pkg/AGENTS.md": AGENTS, "pkg/sub/AGENTS.md": AGENTS})
    assert {r.id: (r.file.relative_path, r.file.rules_root) for r in rules(rule_project).values()} == {
        "project/AGENTS": ("AGENTS.md", str(rule_project.cwd)),
        "project/pkg/AGENTS": ("pkg/AGENTS.md", str(rule_project.cwd)),
        "project/pkg/sub/AGENTS": ("pkg/sub/AGENTS.md", str(rule_project.cwd))}
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    pkg = rule_project.cwd / "pkg"
    assert {r.id: (r.file.relative_path, r.file.rules_root) for r in rules(rule_project, pkg).values()} == {
        "project/AGENTS": ("AGENTS.md", str(rule_project.cwd)),
        "project/pkg/AGENTS": ("pkg/AGENTS.md", str(rule_project.cwd)),
        "project/pkg/sub/AGENTS": ("pkg/sub/AGENTS.md", str(rule_project.cwd))}


def test_in_one_folder_memory_files_come_in_importer_order_not_name_order(project):
    # claude-md ranks before gemini-md, though CLAUDE.local.md is the third of its folder's names.
    project.write({"CLAUDE.local.md": "# Mine\n", "GEMINI.md": "# G\n", ".cursor/rules/a.mdc": "---\nalwaysApply: true\n---\nA\n"})
    assert list(rules(project)) == ["a", "project/CLAUDE.local", "project/GEMINI"]


def test_a_memory_file_linking_to_a_folder_outside_the_project_is_refused_not_passed_over(project, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", project.cwd / "AGENTS.md")
    found = discover(project)
    assert found_rules_of(found) == []
    (error,) = found.errors
    assert (error.kind, error.path, error.plugin) == ("read-failure", str(project.cwd / "AGENTS.md"), "agents-md")
    assert "leads outside the git root" in error.message


def test_user_memory_files_come_after_other_user_rules_in_importer_order(rule_project):
    (rule_project.home / ".augment/rules").mkdir(parents=True)
    (rule_project.home / ".augment/rules/style.md").write_text("---\ntype: always_apply\n---\nA.\n")
    (rule_project.home / ".claude").mkdir()
    (rule_project.home / ".claude/CLAUDE.md").write_text("# C\n")
    (rule_project.home / ".gemini").mkdir()
    (rule_project.home / ".gemini/GEMINI.md").write_text("# G\n")
    found = discover(rule_project)
    assert (found_rules_of(found), found.errors) == (["style", "~/.claude/CLAUDE", "~/.gemini/GEMINI"], ())


def test_a_user_memory_file_without_a_heading_is_described_by_its_name(rule_project):
    (rule_project.home / ".claude").mkdir()
    (rule_project.home / ".claude/CLAUDE.md").write_text("Short answers.\n")
    rule = rules(rule_project)["~/.claude/CLAUDE"]
    assert (rule.description, rule.file.relative_path) == ("CLAUDE.md (claude-md)", "CLAUDE.md")
