"""One run's throw-away world: a copy of the fixture (a fresh git repository, so no rule
of the folders around it leaks in) and its own HOME, XDG folders and state; and the
checks judged on that copy once the agent is done."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Mapping

from .cases import Check

MAX_FIXTURE_FILES = 20_000  # each run copies the fixture: a whole monorepo is a mistake
MAX_FIXTURE_BYTES = 256 * 1024 * 1024
MAX_CHECKED_FILE = 16 * 1024 * 1024
CHECK_TIMEOUT = 120
_SKIPPED = (".git",)


class FixtureError(Exception):
    """A fixture we refuse to copy; the message names it and the fix."""


@dataclass(frozen=True)
class Workspace:
    root: str  # the run's folder: project/, home/, config/, state/, cache/ inside
    project: str

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with HOME and every XDG folder of the run's own: the agent and the hooks
        it starts never read or write the user's state."""
        env = {k: v for k, v in base.items() if not k.startswith("PI_RULES_") or k == "PI_RULES_HOOK_SERVER"}
        env.update(HOME=self.folder("home"), XDG_CONFIG_HOME=self.folder("config"),
                   XDG_STATE_HOME=self.folder("state"), XDG_CACHE_HOME=self.folder("cache"),
                   XDG_DATA_HOME=self.folder("data"))
        return env

    def folder(self, name: str) -> str:
        return os.path.join(self.root, name)


def make_workspace(fixture: str, root: str) -> Workspace:
    """Copy ``fixture`` into ``root``/project (``.git`` left out) and make it a repository."""
    _measure(fixture)
    project = os.path.join(root, "project")
    shutil.copytree(fixture, project, symlinks=True, ignore=shutil.ignore_patterns(*_SKIPPED))
    for name in ("home", "config", "state", "cache", "data"):
        os.makedirs(os.path.join(root, name), exist_ok=True)
    git_env = {"PATH": os.environ.get("PATH", ""), "HOME": os.path.join(root, "home"),
               "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", project], check=False, capture_output=True, env=git_env, timeout=60)
    return Workspace(root, project)


def _measure(fixture: str) -> None:
    files = size = 0
    for folder, dirs, names in os.walk(fixture):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        files += len(names)
        for name in names:
            try:
                size += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
        if files > MAX_FIXTURE_FILES or size > MAX_FIXTURE_BYTES:
            raise FixtureError(f"fixture {fixture} holds more than {MAX_FIXTURE_FILES} files or "
                               f"{MAX_FIXTURE_BYTES >> 20} MiB; give the case a small 'fixture' folder")


def judge(checks: tuple[Check, ...], project: str, env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each check with whether it held (and why not); a run complies when all hold."""
    return [{"check": check.kind, "target": check.path or " ".join(check.command), **_held(check, project, env)}
            for check in checks]


def _held(check: Check, project: str, env: Mapping[str, str]) -> dict[str, Any]:
    if check.kind == "exit":
        try:
            done = subprocess.run(list(check.command), cwd=project, env=dict(env), capture_output=True,
                                  timeout=CHECK_TIMEOUT, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"passed": False, "why": f"could not run: {type(exc).__name__}"}
        passed = done.returncode == check.status
        return {"passed": passed, "why": None if passed else f"exit status {done.returncode}, not {check.status}"}
    path = os.path.join(project, check.path)
    inside = os.path.realpath(path).startswith(os.path.realpath(project) + os.sep)
    present = inside and os.path.lexists(path)
    if check.kind == "exists":
        return {"passed": present, "why": None if present else "missing"}
    if check.kind == "absent":
        return {"passed": not present, "why": None if not present else "present"}
    content = _read(path) if present else None
    if content is None:
        return {"passed": False, "why": "missing or unreadable"}
    found = check.text in content
    passed = found if check.kind == "file_contains" else not found
    return {"passed": passed, "why": None if passed else ("text not found" if check.kind == "file_contains"
                                                          else "text found")}


def _read(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read(MAX_CHECKED_FILE).decode("utf-8", "replace")
    except OSError:
        return None
