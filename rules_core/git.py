"""The two questions pi-rules asks git: the current branch and the repository's top level.

Both are answered by one ``git rev-parse`` each; any failure means "absent", never an
error, and pi-rules itself touches no file to find out.
"""

from __future__ import annotations

import os
import subprocess

_TIMEOUT_SECONDS = 5


def run_git(cwd: str, *args: str) -> str | None:
    """git's stdout, or ``None`` when git is missing, fails, hangs or prints non-UTF-8."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            timeout=_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


def current_branch(cwd: str) -> str | None:
    """``git rev-parse --abbrev-ref HEAD`` in ``cwd``; ``None`` when there is no branch.

    Outside a repository, on a detached HEAD or an unborn branch, when git is missing,
    fails, hangs or prints something that is not one branch name, the branch is absent.
    """
    output = run_git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    name = output.strip() if output is not None else ""
    if not name or name == "HEAD" or any(c.isspace() for c in name):
        return None
    return name


def find_git_root(cwd: str) -> str | None:
    """The enclosing repository's top level, as an ancestor-or-self of ``cwd`` as given.

    Asks ``git rev-parse --show-toplevel --show-prefix`` and makes no filesystem call of
    its own: the prefix (cwd's path inside the repository) says how many of cwd's own
    trailing segments to drop, so a symlinked spelling of cwd is kept and nothing above
    the root is ever stat-ed. ``None`` — behave as a single-directory project — when git
    is missing, fails, hangs or prints anything unexpected.
    """
    output = run_git(cwd, "rev-parse", "--show-toplevel", "--show-prefix")
    if output is None:
        return None
    lines = output.split("\n")
    if len(lines) != 3 or lines[2] != "" or not os.path.isabs(lines[0]):
        return None
    return _root_in_cwd_spelling(cwd.rstrip("/") or "/", lines[0], lines[1])


def _root_in_cwd_spelling(cwd: str, toplevel: str, prefix: str) -> str | None:
    inside = prefix.rstrip("/")
    if not inside:
        return cwd
    if cwd.endswith("/" + inside):
        return cwd[: -len(inside) - 1] or "/"
    if cwd.startswith(toplevel.rstrip("/") + "/"):
        return toplevel
    return None  # cwd reached through a symlink inside the repository: no safe bound
