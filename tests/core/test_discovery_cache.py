"""Discovery caching (RULE-SPEC §7): cached and uncached discovery always agree."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st

from rules_core import Engine
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text
from suite_helpers import count_listings

# Rules directories of every source in one repository (cwd is packages/a).
DIRS = [
    "repo/packages/a/.pi/rules",          # cwd
    "repo/packages/a/.pi/rules/sub",      # cwd, nested folder
    "repo/.pi/rules",                     # ancestor (git root)
    "repo/packages/a/lib/.pi/rules",      # nested
    "home/.pi/agent/rules",               # global
]
NAMES = ["a.md", "b.md", "shared.md", "notes.txt"]
CONTENTS = [
    rule_text("one", globs=["src/**"]),
    rule_text("two, a longer body", globs=["**/*.ts"], match="touched"),
    rule_text("three", alwaysApply=True, priority=3),
    "no frontmatter\n",
    "---\nglob: [x]\n---\n",
    rule_text("bad glob", globs=["", "x"]),
]

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(DIRS), st.sampled_from(NAMES), st.sampled_from(CONTENTS)),
    st.tuples(st.just("delete"), st.sampled_from(DIRS), st.sampled_from(NAMES)),
    st.tuples(st.just("break"), st.sampled_from(DIRS)),   # the directory becomes unlistable
    st.tuples(st.just("repair"), st.sampled_from(DIRS)),
    st.tuples(st.just("drop"), st.sampled_from(DIRS)),    # the directory disappears
)


class Clock:
    """Each edit lands at a later mtime, as edits separated by real time do."""

    def __init__(self) -> None:
        self.now = 1_700_000_000 * 10**9

    def touch(self, path: Path) -> None:
        self.now += 10**9
        os.utime(path, ns=(self.now, self.now), follow_symlinks=False)


def apply(root: Path, op: tuple, clock: Clock) -> None:
    kind, directory = op[0], root / op[1]
    if kind == "write":
        if directory.is_symlink():
            return
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / op[2]
        target.write_text(op[3])
        clock.touch(target)
        clock.touch(directory)
    elif kind == "delete":
        target = directory / op[2]
        if target.is_file() and not directory.is_symlink():
            target.unlink()
            clock.touch(directory)
    elif kind == "break":
        if directory.is_symlink():
            return
        shutil.rmtree(directory, ignore_errors=True)
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.symlink_to(directory)  # a loop: listing fails with ELOOP, even for root
    elif kind == "repair":
        if directory.is_symlink():
            directory.unlink()
            directory.mkdir()
    elif kind == "drop":
        if directory.is_symlink():
            directory.unlink()
        else:
            shutil.rmtree(directory, ignore_errors=True)


def discover_fresh(root: Path) -> object:
    return Engine(fresh_manager(), home=str(root / "home"), env={}).discover(str(root / "repo/packages/a"))


NESTED = "repo/packages/a/lib/.pi/rules"


def run_differential(ops: list[tuple], announce: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "repo/packages/a").mkdir(parents=True)
        (root / NESTED).mkdir(parents=True)
        (root / "home").mkdir()
        subprocess.run(["git", "init", "-q", str(root / "repo")], check=True)
        cached = Engine(fresh_manager(), home=str(root / "home"), env={})
        cached.discover(str(root / "repo/packages/a"))
        clock = Clock()
        for op in ops:
            try:
                apply(root, op, clock)
            except OSError:
                pass  # e.g. writing below a directory that is a symlink loop: the edit fails
            if announce:
                cached.invalidate_scans()  # the edit came from a write/edit/bash tool
            assert cached.discover(str(root / "repo/packages/a")) == discover_fresh(root), op


@settings(max_examples=60, deadline=None)
@given(st.lists(operation, min_size=1, max_size=14))
def test_cached_discovery_equals_uncached_after_every_announced_edit(ops):
    run_differential(ops, announce=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(operation.filter(lambda op: op[0] in ("write", "delete") or op[1] != NESTED),
                min_size=1, max_size=14))
def test_unannounced_edits_are_seen_except_new_or_vanished_nested_rules_directories(ops):
    # The nested search is cached until the tree is announced as changed (docs/monorepo.md);
    # every other edit — files anywhere, whole cwd/ancestor/global directories — is seen.
    run_differential(ops, announce=False)


def test_a_new_nested_rules_directory_appears_after_the_tree_is_announced_changed(rule_project):
    engine = rule_project.engine()
    assert engine.discover(str(rule_project.cwd)).rules == ()
    rule_project.write({"pkg/.pi/rules/n.md": rule_text(globs=["x"])})
    assert engine.discover(str(rule_project.cwd)).rules == ()
    engine.invalidate_scans()
    assert [r.id for r in engine.discover(str(rule_project.cwd)).rules] == ["n"]


def test_unlistable_directory_is_reported_once_and_not_listed_again_until_it_changes(rule_project, monkeypatch):
    rule_project.write_global({"a.md": rule_text(globs=["x"])})
    (rule_project.cwd / ".pi").mkdir()
    broken = rule_project.cwd / ".pi" / "rules"
    broken.symlink_to(broken)  # a loop: unlistable even for root
    listed = count_listings(monkeypatch)
    engine = rule_project.engine()
    first = engine.discover(str(rule_project.cwd))
    second = engine.discover(str(rule_project.cwd))
    assert first == second
    assert [(e.kind, e.path) for e in first.errors] == [("source-unreadable", str(broken))]
    assert listed.count(str(broken)) == 1
    broken.unlink()
    broken.mkdir()
    (broken / "b.md").write_text(rule_text(globs=["x"]))
    third = engine.discover(str(rule_project.cwd))
    assert [r.id for r in third.rules] == ["b", "a"] and third.errors == ()
    assert listed.count(str(broken)) == 2
