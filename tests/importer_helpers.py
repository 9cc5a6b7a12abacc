"""Helpers shared by the importer tests (tests/test_import_*.py), imported by them.

The views (``discover``, ``by_id``, ``outcomes``, …) take a ``RuleProject``; the two
fixtures, ``record`` and ``cli``, are imported by the modules that use them.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from rules_hosts.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "importers"

# What every importer answers for a bad `agents` key (rules_importers._lenient.extension).
BAD_AGENTS = "agents: must be a list of agent names or globs, e.g. agents: [main, reviewer]"


# -- projects --------------------------------------------------------------------------------


from suite_helpers import git_init  # noqa: E402, F401 - re-exported for the importer tests


class SkillProject:
    """A git project and a separate home for the skills tests, with ``HOME`` and the XDG
    folders pointed at that home for the whole test; ``run`` is the CLI in process."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        self.cwd, self.home = root / "proj", root / "home"
        for folder in (self.cwd, self.home):
            folder.mkdir()
        git_init(self.cwd)
        env = {"HOME": self.home, "XDG_CACHE_HOME": self.home / ".cache", "XDG_CONFIG_HOME": self.home / ".config"}
        for key, value in env.items():
            monkeypatch.setenv(key, str(value))
        monkeypatch.delenv("PI_RULES_IMPORT", raising=False)
        self._capsys = capsys

    def write(self, relative: str, text: str) -> Path:
        """Write ``text`` at ``relative`` in the project, or in the home for ``~/…``."""
        path = self.home / relative[2:] if relative.startswith("~/") else self.cwd / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def run(self, *args: str, cwd: Path | None = None) -> tuple[int, str]:
        code = main(["--cwd", str(cwd or self.cwd), *args])
        return code, self._capsys.readouterr().out

    def json(self, *args: str, cwd: Path | None = None) -> Any:
        return json.loads(self.run(*args, "--json", cwd=cwd)[1])


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
# hook, ``os.stat``/``os.lstat`` (behind ``os.path.isdir``, ``Path.exists`` and friends) by
# wrapping them, and each ``os.scandir`` entry's ``is_dir()``/``is_file()``/``is_symlink()``/
# ``stat()`` (which answer from the listing or an ``fstatat`` no wrapper of ``os.stat``
# sees) by handing out entries that record their own path when asked.
#
# One exception, by name: the project-tree walks (the core's walk of cwd for nested rule
# folders, and the exists-glob scanner) ask every entry of the project its type without
# following links, answered from the listing itself (d_type, no stat); they are the
# engine's, not an importer's, and run whatever PI_RULES_IMPORT says. Anything else that
# asks — an importer listing $HOME and asking an entry whether it is .cursor — is seen.
_recording: list[str] | None = None
_TREE_WALKS = (os.path.join("rules_core", "discovery", "tree.py"), os.path.join("rules_plugins", "scanner.py"))


def _asked_by_a_tree_walk() -> bool:
    return sys._getframe(3).f_code.co_filename.endswith(_TREE_WALKS)  # the caller of is_dir()


class _Entry:
    """An ``os.DirEntry`` that records its path when asked about its type or stat."""

    __slots__ = ("_entry",)

    def __init__(self, entry: os.DirEntry) -> None:
        self._entry = entry

    name = property(lambda self: self._entry.name)
    path = property(lambda self: self._entry.path)

    def inode(self) -> int:
        return self._entry.inode()

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        self._asked(follow_symlinks)
        return self._entry.is_dir(follow_symlinks=follow_symlinks)

    def is_file(self, *, follow_symlinks: bool = True) -> bool:
        self._asked(follow_symlinks)
        return self._entry.is_file(follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        self._asked(False)
        return self._entry.is_symlink()

    def _asked(self, follow_symlinks: bool) -> None:
        if follow_symlinks or not _asked_by_a_tree_walk():
            _record(self._entry.path)

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        _record(self._entry.path)
        return self._entry.stat(follow_symlinks=follow_symlinks)

    def __fspath__(self) -> str:
        return self._entry.path

    def __repr__(self) -> str:
        return f"<recorded {self._entry!r}>"


class _Listing:
    """``os.scandir``'s iterator, handing out recording entries."""

    def __init__(self, listing: Any) -> None:
        self._listing = listing

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> _Entry:
        return _Entry(next(self._listing))

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._listing.close()


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

    real_scandir = os.scandir

    def scandir(path: Any = ".") -> _Listing:
        return _Listing(real_scandir(path))

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "scandir", scandir)
    _recording = []
    try:
        yield _recording
    finally:
        _recording = None
