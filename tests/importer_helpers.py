"""Helpers shared by the importer tests (tests/test_import_*.py), imported by them.

The views (``discover``, ``by_id``, ``outcomes``, …) take a ``RuleProject``; the two
fixtures, ``record`` and ``cli``, are imported by the modules that use them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rules_hosts.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "importers"


# -- projects --------------------------------------------------------------------------------


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def copy_fixture(project, name: str, *, git: bool = False):
    """The real-world-shaped repository tests/fixtures/importers/NAME, copied into the
    project (and made a git root with ``git``)."""
    shutil.copytree(FIXTURES / name, project.cwd, dirs_exist_ok=True)
    if git:
        git_init(project.cwd)
    return project


def text_with_keys(body: str = "Follow the rule.", **front: object) -> str:
    """A rule file; ``front`` is written as raw ``key: value`` lines (none: no frontmatter)."""
    if not front:
        return body + "\n"
    lines = "".join(f"{key}: {value}\n" for key, value in front.items())
    return f"---\n{lines}---\n{body}\n"


def text_with_front(front: str, body: str = "Body.\n") -> str:
    """A rule file with ``front`` as its frontmatter block, verbatim."""
    return f"---\n{front}---\n{body}"


def deny_listing(monkeypatch, folder: Path) -> None:
    """Listing ``folder`` fails as after ``chmod 0`` (which does not stop root)."""
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(folder):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)


# -- views of one discovery or evaluation ----------------------------------------------------


def discover(project, cwd: Path | None = None, *, trusted: bool = True, **engine: Any):
    return project.engine(**engine).discover(str(cwd or project.cwd), trusted)


def by_id(project, cwd: Path | None = None, *, plugin: str | None = None, **kwargs: Any) -> dict:
    """The rules by id; only ``plugin``'s when given (other importers may be installed alongside)."""
    return {r.id: r for r in discover(project, cwd, **kwargs).rules if plugin is None or r.file.plugin == plugin}


def sole_rule(project, plugin: str):
    (rule,) = by_id(project, plugin=plugin).values()
    return rule


def plugin_errors(project, plugin: str) -> list:
    return [e for e in discover(project).errors if e.plugin == plugin]


def sole_error(project, plugin: str):
    (error,) = plugin_errors(project, plugin)
    return error


def error_rows(project, cwd: Path | None = None) -> list[tuple[str, str, str]]:
    return [(e.kind, e.path, e.message) for e in discover(project, cwd).errors]


def relative_errors(project, cwd: Path | None = None) -> list[tuple[str, str, str, str]]:
    """(kind, cwd-relative path, message, plugin) of each error."""
    return [(e.kind, os.path.relpath(e.path, project.cwd), e.message, e.plugin) for e in discover(project, cwd).errors]


def evaluate(project, cwd: Path | None = None, **facts: Any):
    return project.engine().evaluate(project.facts(cwd=str(cwd or project.cwd), **facts))


def outcomes(project, cwd: Path | None = None, **facts: Any) -> dict:
    return {o.rule.id: o for o in evaluate(project, cwd, **facts).outcomes}


def status(project, rule_id: str, **facts: Any) -> tuple[str, tuple[str, ...]]:
    outcome = outcomes(project, **facts)[rule_id]
    return outcome.status, outcome.reasons


def statuses(project, **facts: Any) -> tuple[dict, Any]:
    """({id: (status, reasons)}, the evaluation)."""
    evaluation = evaluate(project, **facts)
    return {o.rule.id: (o.status, o.reasons) for o in evaluation.outcomes}, evaluation


def evaluate_and_explain(project) -> None:
    """Everything a session does with a project: evaluate, then explain a path."""
    engine = project.engine()
    facts = project.facts(touched=["src/a.ts"], prompt="typescript")
    engine.evaluate(facts)
    engine.explain(facts, "src/a.ts")


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch, capsys):
    """``cli(project, *args)`` runs ``pi-rules --cwd <project> ARGS`` as its user would (their
    HOME, no PI_RULES_IMPORT) and returns (exit code, stdout)."""

    def run(project, *args: str) -> tuple[int, str]:
        monkeypatch.setenv("HOME", str(project.home))
        monkeypatch.delenv("PI_RULES_IMPORT", raising=False)
        code = main(["--cwd", str(project.cwd), *args])
        return code, capsys.readouterr().out

    return run


# Every filesystem access the engine makes while ``record`` is active (as in
# tests/test_containment.py): ``open``, ``os.scandir`` and ``os.listdir`` through an audit
# hook, ``os.stat``/``os.lstat`` (behind ``os.path.isdir`` and friends) by wrapping them.
_recording: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _recording is not None and event in ("open", "os.scandir", "os.listdir") and args:
        _record(args[0])


def _record(path: object) -> None:
    if _recording is not None and isinstance(path, (str, bytes, os.PathLike)):
        _recording.append(os.path.abspath(os.fsdecode(path)))


sys.addaudithook(_audit)  # once: this module is imported once per session


@pytest.fixture
def record(monkeypatch):
    """The absolute paths accessed from now on (``record.clear()`` to start over)."""
    global _recording
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path, *args, **kwargs):
        _record(path)
        return real_stat(path, *args, **kwargs)

    def lstat(path, *args, **kwargs):
        _record(path)
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    _recording = []
    try:
        yield _recording
    finally:
        _recording = None
