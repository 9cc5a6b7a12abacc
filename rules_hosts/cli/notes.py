"""Notes the CLI adds to a command's own output where a person would otherwise be misled
(issue 34): ``explain`` of a path outside the project."""

from __future__ import annotations

import os

from rules_core.engine.core import Engine
from rules_core.safe import safe_line


def outside_project(engine: Engine, cwd: str, trusted: bool, path: str) -> str | None:
    """Why ``path`` is outside the project (the git root, else ``cwd``), or ``None``.

    The engine evaluates such a path as it is asked to (an absolute path no project glob
    is written for); the note says so instead of letting "no match" look like an answer."""
    cwd = os.path.abspath(cwd)
    root = (engine.discovery.git_root(cwd) if trusted else None) or cwd
    target = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
    if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return (f"{safe_line(path)} is outside the project ({safe_line(root)}): project rules' globs are written "
            "for files inside it, so they are judged against its absolute path and rarely match; run "
            "explain from that file's own project (--cwd) to see its rules")
