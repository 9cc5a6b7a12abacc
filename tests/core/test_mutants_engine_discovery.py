"""Discovery (rules_core.engine.discovery), pinned where mutation testing found it unpinned
(issue 32).

Each test is a project on disk (a real git repository where the git root matters) and what
``Engine.discover`` answers for it. docs/testing.md lists the mutants these kill and the ones
left.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rules_core.engine import discovery
from rules_core.engine.core import Engine
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text

CLAUDE_RULE = "---\npaths: src/**\n---\nPrefer small functions.\n"


def _engine(home: str | None, **env: str) -> Engine:
    return Engine(fresh_manager(), home=home, env={"HOME": home or "", **env})


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _cwd_only(found) -> list[tuple[str, str]]:
    return [(w.path, w.plugin) for w in found.warnings if w.code == "cwd-only"]


@pytest.mark.parametrize(("home_of", "root_kept"), [
    (lambda repo: str(repo.parent / "elsewhere"), True),
    (lambda repo: str(repo), False),  # the home folder is the repository: no root
    (lambda repo: str(repo) + "/", False),  # spelled with a trailing slash, the same folder
    (lambda repo: str(repo / "me"), False),  # the repository holds the home folder
    (lambda repo: str(repo) + "-sibling", True),  # shares a prefix of letters, not a folder
    (lambda repo: str(repo) + "/../repo-sibling", True),  # compared once normalised
    (lambda repo: "me", True),  # a relative home names no folder: ignored
    (lambda repo: None, True),
])
def test_a_repository_holding_the_home_folder_is_no_projects_root(tmp_path, home_of, root_kept):
    repo = _repo(tmp_path / "repo")
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / ".claude" / "rules" / "style.md").write_text(CLAUDE_RULE)
    (repo / "sub").mkdir()
    found = _engine(home_of(repo)).discover(str(repo / "sub"))
    # The cwd-only warning is only given below a git root: it shows whether the root was kept.
    assert _cwd_only(found) == ([(str(repo / ".claude" / "rules"), "claude")] if root_kept else [])
    assert found.errors == ()


def test_the_git_root_is_remembered_until_forgotten(tmp_path):
    repo = _repo(tmp_path / "repo")
    (repo / ".claude" / "rules").mkdir(parents=True)
    sub = repo / "sub"
    sub.mkdir()
    engine = _engine(str(tmp_path / "home"))
    expected = [(str(repo / ".claude" / "rules"), "claude")]
    assert _cwd_only(engine.discover(str(sub))) == expected
    _repo(sub)  # the folder becomes its own repository: git would now stop there
    engine.discovery.tree_changed()
    assert _cwd_only(engine.discover(str(sub))) == expected  # remembered
    engine.discovery.forget_git_roots()
    assert _cwd_only(engine.discover(str(sub))) == []


def test_cwd_only_names_the_nearest_holder_of_each_enabled_importer_in_order(tmp_path):
    repo = _repo(tmp_path / "repo")
    for folder in (repo, repo / "a"):
        (folder / ".claude" / "rules").mkdir(parents=True)
    (repo / ".github").mkdir()
    (repo / ".github" / "copilot-instructions.md").write_text("Be brief.\n")
    cwd = repo / "a" / "b"
    cwd.mkdir()
    # roo reads .roo and .roorules from cwd: cwd has its own .roo (no warning for it), and
    # the .roorules above it is still named.
    (cwd / ".roo").mkdir()
    (repo / ".roo").mkdir()
    (repo / ".roorules").write_text("Root.\n")
    home = str(tmp_path / "home")
    found = _engine(home).discover(str(cwd))
    warnings = [w for w in found.warnings if w.code == "cwd-only"]
    assert [(w.path, w.plugin) for w in warnings] == [
        (str(repo / "a" / ".claude" / "rules"), "claude"),
        (str(repo / ".github" / "copilot-instructions.md"), "copilot"),
        (str(repo / ".roorules"), "roo"),
    ]
    assert warnings[0].message == (
        f"claude reads .claude/rules only from the working directory, so these rules are not loaded here; "
        f"run from {repo / 'a'} (pi-rules --cwd {repo / 'a'} check) or start the agent there")
    # An importer not enabled is not looked at.
    only_copilot = _engine(home, PI_RULES_IMPORT="copilot").discover(str(cwd))
    assert _cwd_only(only_copilot) == [(str(repo / ".github" / "copilot-instructions.md"), "copilot")]


def test_cwd_only_warnings_are_remembered_with_the_tree_walk(tmp_path):
    repo = _repo(tmp_path / "repo")
    cwd = repo / "sub"
    cwd.mkdir()
    engine = _engine(str(tmp_path / "home"))
    assert _cwd_only(engine.discover(str(cwd))) == []
    (repo / ".claude" / "rules").mkdir(parents=True)
    again = engine.discover(str(cwd))
    assert _cwd_only(again) == [] and again.errors == ()  # not looked at again
    engine.discovery.tree_changed()
    assert _cwd_only(engine.discover(str(cwd))) == [(str(repo / ".claude" / "rules"), "claude")]


@pytest.mark.parametrize(("files", "left_out"), [(3, "1 rule file"), (4, "2 rule files")])
def test_over_the_file_cap_names_how_many_rule_files_did_not_load(rule_project, monkeypatch, files, left_out):
    monkeypatch.setattr(discovery, "MAX_RULE_FILES", 2)
    rule_project.write({f".pi/rules/r{i}.md": rule_text(alwaysApply=True) for i in range(files)})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [r.id for r in found.rules] == ["r0", "r1"]
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == [(
        "source-unreadable", str(rule_project.cwd),
        f"the sources list {files} rule files, over the limit of 2 per discovery; the rules first in discovery "
        f"order loaded, the other {left_out} did not — remove or move rule files", "engine")]


def test_invisible_characters_are_listed_five_at_most_with_their_first_place(rule_project):
    hidden = "\u200b\u200c\u200d\u2060\ufeff\u202e"
    rule_project.write({
        ".pi/rules/r.md": rule_text(f"Line one.\nSee{hidden} here.", alwaysApply=True),
        ".pi/rules/s.md": rule_text(f"{hidden[:5]}Five.", alwaysApply=True),  # exactly five: no "more"
        ".pi/rules/t.md": rule_text("Clean body.", description="Hidden\u200b here", alwaysApply=True),
    })
    found = rule_project.engine().discover(str(rule_project.cwd))
    warnings = [w for w in found.warnings if w.code == "invisible-characters"]
    assert [(w.path, w.plugin, w.line, w.column, w.message) for w in warnings] == [(
        str(rule_project.cwd / ".pi/rules/r.md"), "native", 7, 4,  # after four lines of front matter
        "the rule holds invisible characters (U+200B, U+200C, U+200D, U+202E, U+2060 and 1 more) a reader "
        "cannot see but a model reads; they are shown as escapes in the section — remove them unless you "
        "put them there on purpose"), (
        str(rule_project.cwd / ".pi/rules/s.md"), "native", 6, 1,
        "the rule holds invisible characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) a reader "
        "cannot see but a model reads; they are shown as escapes in the section — remove them unless you "
        "put them there on purpose"), (
        str(rule_project.cwd / ".pi/rules/t.md"), "native", 2, 20,
        "the rule holds invisible characters (U+200B) a reader "
        "cannot see but a model reads; they are shown as escapes in the section — remove them unless you "
        "put them there on purpose")]


def test_an_invisible_first_character_and_a_linked_rule_get_their_places(rule_project):
    rule_project.write({
        ".claude/rules/first.md": "\u200bStarts hidden.\n",  # no front matter: index 0 of the file
        "shared/linked.md": rule_text("Linked\u200b.", alwaysApply=True),
    })
    (rule_project.cwd / ".pi" / "rules").mkdir(parents=True)
    os.symlink("../../shared/linked.md", rule_project.cwd / ".pi" / "rules" / "linked.md")
    found = rule_project.engine().discover(str(rule_project.cwd))
    places = {w.path: (w.line, w.column) for w in found.warnings if w.code == "invisible-characters"}
    assert places == {
        str(rule_project.cwd / ".claude/rules/first.md"): (1, 1),
        # The link is not followed a second time (it could have been swapped): the whole file.
        str(rule_project.cwd / ".pi/rules/linked.md"): (None, None),
    }
