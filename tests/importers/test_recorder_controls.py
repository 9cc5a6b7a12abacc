"""Positive controls for the ``record`` fixture (tests/importer_helpers.py), which the
importer and host tests use to assert what was *not* accessed: the recorder sees each
kind of access, and for every importer the needle those tests look for is seen when the
importer runs — so a "nothing accessed" assertion could fail."""

from __future__ import annotations

import os

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from importer_helpers import discover, git_init, record  # noqa: F401 - pytest fixture


def _seen(record: list[str], needle: str) -> list[str]:
    return [p for p in record if needle in p]


def test_the_recorder_sees_a_scandir_entrys_is_dir_and_stat(tmp_path, record):
    # The mutation issue 32 found invisible: list $HOME, ask an entry if .cursor is a folder.
    (tmp_path / ".cursor").mkdir()
    record.clear()
    with os.scandir(tmp_path) as listing:
        asked = [entry.is_dir() for entry in listing if entry.name == ".cursor"]
    assert asked == [True] and _seen(record, ".cursor") == [str(tmp_path / ".cursor")]
    record.clear()
    for entry in os.scandir(tmp_path):
        entry.stat()
        entry.is_file()
        entry.is_symlink()
    assert _seen(record, ".cursor") == [str(tmp_path / ".cursor")] * 3


def test_the_recorder_sees_stat_exists_listing_walk_and_open(tmp_path, record):
    folder = tmp_path / ".cursor" / "rules"
    folder.mkdir(parents=True)
    (folder / "a.mdc").write_text("x")
    checks = {
        "os.stat": lambda: os.stat(folder),
        "os.path.isdir": lambda: os.path.isdir(folder),
        "Path.exists": lambda: (folder / "a.mdc").exists(),
        "os.listdir": lambda: os.listdir(folder),
        "os.walk": lambda: list(os.walk(tmp_path)),
        "open": lambda: (folder / "a.mdc").read_text(),
    }
    for name, check in checks.items():
        record.clear()
        check()
        assert _seen(record, ".cursor"), name
    record.clear()
    os.stat(tmp_path)  # the negative: a path without the needle is not reported as one
    assert _seen(record, ".cursor") == []


# (importer, files in the project, the needle its "not accessed" test looks for)
IMPORTERS = [
    ("cursor", {".cursor/rules/a.mdc": "---\nalwaysApply: true\n---\nA.\n"}, ".cursor"),
    ("kiro", {".kiro/steering/a.md": "A.\n"}, ".kiro"),
    ("continue", {".continue/rules/a.md": "A.\n"}, ".continue"),
    ("roo", {".roo/rules/a.md": "A.\n"}, ".roo"),
    ("windsurf", {".windsurf/rules/a.md": "A.\n"}, ".windsurf"),
    ("cline", {".clinerules/a.md": "A.\n"}, ".clinerules"),
    ("copilot", {".github/copilot-instructions.md": "A.\n"}, ".github"),
    ("agents-md", {"AGENTS.md": "A.\n"}, "AGENTS.md"),
    ("claude-md", {"CLAUDE.md": "A.\n"}, "CLAUDE.md"),
    ("gemini-md", {"GEMINI.md": "A.\n"}, "GEMINI.md"),
    ("claude", {".claude/rules/a.md": "A.\n"}, ".claude"),
    ("amazonq", {".amazonq/rules/a.md": "A.\n"}, ".amazonq"),
    ("agent", {".agent/rules/a.md": "A.\n"}, ".agent"),
]


@pytest.mark.parametrize(("importer", "files", "needle"), IMPORTERS, ids=[i[0] for i in IMPORTERS])
def test_each_importers_needle_is_seen_when_it_runs_and_not_when_imports_are_off(
        rule_project, record, importer, files, needle):
    make_rules(rule_project.cwd, {**files, ".pi/rules/own.md": rule_text("Own.", alwaysApply=True)})
    git_init(rule_project.cwd)
    rule_project.env["PI_RULES_IMPORT"] = "all"
    record.clear()
    discover(rule_project)
    assert _seen(record, needle), f"{importer}: the recorder saw no access to {needle}"  # the control
    rule_project.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert [r.id for r in discover(rule_project).rules] == ["own"]
    assert _seen(record, needle) == []
