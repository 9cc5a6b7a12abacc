"""The session's git branch, resolved live (RULE-SPEC §5)."""

from __future__ import annotations

import subprocess

_TIMEOUT_SECONDS = 5


def current_branch(cwd: str) -> str | None:
    """``git rev-parse --abbrev-ref HEAD`` in ``cwd``; ``None`` when there is no branch.

    Outside a repository, on a detached HEAD, when git is missing, fails, hangs or prints
    something that is not one branch name, the branch is absent — never an error.
    """
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--abbrev-ref", "HEAD"],
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
        name = done.stdout.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if not name or name == "HEAD" or any(c.isspace() for c in name):
        return None
    return name
