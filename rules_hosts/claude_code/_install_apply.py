"""Applying an install's or uninstall's changes to its files, all or nothing.

Every file is read and checked before any is written, so a refused one leaves all of them
untouched. A change may be ``optional``: a file it cannot read or merge into is then left
as it is instead of refusing the run (the MCP entry an install without the SDK tidies up
is not worth refusing the hooks for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, TextIO

from rules_core.discovery.containment import write_target
from rules_core.safe import safe_line

from ._install_files import FileProblem, backup_path, read_json, write_json


@dataclass(frozen=True)
class Target:
    """One file to change, and where in it the object holding ``mcpServers`` lives."""

    path: str
    mcp_at: tuple[str, ...] | None  # None: a settings file (hooks); (): the file's root
    bound: str | None = None  # a project's file: no link out of this folder is written through


@dataclass(frozen=True)
class Change:
    """One file's change: ``check`` says why the file cannot take it (None: it can),
    ``change`` gives the new object; ``keep_empty`` writes ``{}`` where the change leaves
    nothing (an install), else the emptied file goes (an uninstall)."""

    target: Target
    check: Callable[[Any], "str | None"]
    change: Callable[[dict[str, Any]], dict[str, Any]]
    keep_empty: bool
    optional: bool = False


def apply_changes(changes: list[Change], done: str, stdout: TextIO, stderr: TextIO,
                  env: Mapping[str, str], note: str = "") -> int:
    planned = []
    for item in changes:
        problem = _problem(item)
        if isinstance(problem, str):
            if item.optional:
                continue
            return refuse(stderr, item.target.path, problem)
        before = problem[0]
        planned.append((item, before, item.change({} if before is None else before)))
    changed = False
    for item, before, after in planned:
        target = item.target
        shown = safe_line(target.path)
        if after == (before if before is not None else {}):
            if not item.optional:
                reason = "already installed" if done == "installed" else "nothing of pi-rules in it"
                stdout.write(f"unchanged {shown} ({'no such file' if before is None else reason})\n")
            continue
        changed = True
        try:
            backup = backup_path(target.path, env) if before is not None else None
            write_json(target.path, after if (after or item.keep_empty) else None, backup=backup)
        except OSError as exc:  # the files written before this one stay changed: say so
            stderr.write(f"pi-rules: cannot write {shown}: {safe_line(str(exc.strerror or exc))}; "
                         "the files listed above were changed, the others not\n")
            return 1
        verb = "created" if before is None else "removed" if not (after or item.keep_empty) else "updated"
        saved = f" (backup: {safe_line(backup)})" if backup is not None else ""
        stdout.write(f"{verb} {shown}{saved}\n")
    if changed:
        stdout.write(f"pi-rules: {done}; restart Claude Code (or run /hooks) to load the change\n")
        stderr.write(note)
    else:
        stdout.write(f"pi-rules: nothing to do, already {done}\n")
    return 0


def _problem(item: Change) -> str | tuple[Any]:
    """Why ``item``'s file cannot be changed, or ``(its parsed content,)`` (None: absent)."""
    target = item.target
    if target.bound is not None:
        try:  # a `.claude` link the repository ships (into ~/.claude) is never written through
            write_target(target.path, target.bound)
        except OSError as exc:
            return str(exc.strerror or exc)
    try:
        before = read_json(target.path)
    except FileProblem as exc:
        return str(exc)
    problem = item.check({} if before is None else before)
    return problem if problem is not None else (before,)


def refuse(stderr: TextIO, path: str, problem: str) -> int:
    stderr.write(
        f"pi-rules: refusing to change {safe_line(path)}: {safe_line(problem)}. Fix the file by hand "
        "(or move it away) and run the command again; no file was changed.\n"
    )
    return 1
