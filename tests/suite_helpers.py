"""The suite's shared ways to run the CLI and git (issue 32: one of each, not 15 and 11),
and the persistent cache's clock.

``run_cli`` and friends run ``pi-rules`` in process (the installed ``main``) and return
what a user sees; ``cli_process`` runs it as a real process; ``git`` runs git with no
system or global config (a developer's ``~/.gitconfig`` must not change a test) and a
fixed identity, so commits work in any environment.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from rules_hosts.cli import main

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """``pi-rules ARGS`` in process: exit code, stdout, stderr. ``capsys`` may be ``None``
    (a helper called from tests that do not take the fixture): the output is then
    captured here."""
    if capsys is None:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return code, out.getvalue(), err.getvalue()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_in(capsys: Any, cwd: str | os.PathLike[str], *args: str) -> tuple[int, str, str]:
    """``pi-rules --cwd CWD ARGS`` in process."""
    return run_cli(capsys, "--cwd", str(cwd), *args)


def run_in_project(capsys: Any, project: Any, *args: str) -> tuple[int, str, str]:
    """``pi-rules --cwd PROJECT.cwd ARGS`` in process (a ``rule_project``)."""
    return run_in(capsys, project.cwd, *args)


def cli_process(*args: str, cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
                stdin: str | None = None, timeout: float = 60,
                python: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """``python [PYTHON] -m rules_hosts ARGS`` as its own process (this interpreter, this
    checkout); ``python``: interpreter options, such as ``-P`` (no working folder on
    ``sys.path``: a project's own ``rules_hosts`` folder must not be what runs)."""
    return subprocess.run([sys.executable, *python, "-m", "rules_hosts", *args], cwd=cwd,
                          env=dict(os.environ if env is None else env), input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def hook_env(**extra: str) -> dict[str, str]:
    """This process's environment without the ``PI_RULES_*`` settings a test must not pass
    on, but keeping ``PI_RULES_HOOK_SERVER`` (off for the run, tests/conftest.py): a hook
    process then answers in process, and starts no server that outlives the test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_") or k == "PI_RULES_HOOK_SERVER"}
    env.update(extra)
    return env


def count_listings(monkeypatch: Any) -> list[str]:
    """Every directory ``os.scandir`` lists from now on, in order (a test's view of what
    a discovery re-lists)."""
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        listed.append(os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return listed


class StepClock:
    """A ``time.monotonic`` that moves ``step`` seconds each time it is read, so budgets are
    counted in readings (``monkeypatch.setattr(rules_core.deadline.time, "monotonic", …)``)."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.readings = 1000.0, step, 0

    def __call__(self) -> float:
        self.now += self.step
        self.readings += 1
        return self.now


def git(cwd: str | os.PathLike[str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``git -C CWD ARGS`` with no system or global config and a fixed identity."""
    return subprocess.run(["git", "-C", str(cwd), *args], check=check, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})


def git_init(path: str | os.PathLike[str]) -> None:
    Path(path).mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")


def commit(cwd: str | os.PathLike[str], message: str = "x") -> None:
    git(cwd, "commit", "-q", "--allow-empty", "-m", message)


# Run as ``python -c SETTLED_CLI NOW_NS ARGS``: the CLI with the persistent cache's clock
# at NOW_NS (``settle_racy_clock`` in a child process).
SETTLED_CLI = """
import sys
import rules_core.discovery.persistent as persistent
now = int(sys.argv.pop(1))
persistent.now_ns = lambda: now
from rules_hosts.cli import main
sys.exit(main(sys.argv[1:]))
"""


def settle_racy_clock(monkeypatch: Any) -> int:
    """The persistent cache keeps nothing that depends on a path changed within
    ``RACY_NS`` (1 s) of now. Instead of sleeping past that, stop its clock one window
    from now, as if the test had slept: every path made so far has settled, and every
    path changed from here on is racy, as after the sleep. Returns the clock's time (for
    ``SETTLED_CLI``). Production reads the wall clock (``persistent.now_ns``)."""
    import rules_core.discovery.persistent as persistent

    now = time.time_ns() + persistent.RACY_NS
    monkeypatch.setattr(persistent, "now_ns", lambda: now)
    return now
