"""Looking rules up by id or reference path, and normalising session paths.

Shared by the engine, the CLI and the session runtime; pure functions over data.
"""

from __future__ import annotations

import posixpath
import re
from typing import Sequence

from .model import Rule

READ_RULE_DESCRIPTION = (
    "Fetch the full content of a reference rule by its rules-relative path. Use when a "
    '"Reference rules available on demand" index entry is relevant to the current task.'
)
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:|[\\/]{2})")


def find_by_relative_path(rules: Sequence[Rule], name: object) -> Rule | None:
    """Exact relative-path lookup; absolute, ``..``, NUL and drive/UNC names are refused."""
    if not isinstance(name, str) or not name or "\0" in name:
        return None
    if name.startswith(("/", "\\")) or _WINDOWS_ABSOLUTE.match(name):
        return None
    if ".." in re.split(r"[\\/]", name):
        return None
    for rule in rules:  # discovery order: the earliest source wins a repeated path
        if rule.relative_path == name:
            return rule
    return None


RULE_URL = "rule://"


def find_reference(rules: Sequence[Rule], name: object) -> Rule | None:
    """What ``read_rule`` resolves: ``rule://<id>`` by exact id (oh-my-pi's addressing),
    anything else by exact rules-relative path (RULE-SPEC §6). No filesystem access."""
    if isinstance(name, str) and name.startswith(RULE_URL):
        rule_id = name[len(RULE_URL) :]
        return find_by_id(rules, rule_id) if rule_id and "\0" not in rule_id else None
    return find_by_relative_path(rules, name)


def unknown_rule(rules: Sequence[Rule], name: str) -> str:
    """The refusal text: ``Unknown rule: <name>``; for a ``rule://`` name, as oh-my-pi
    answers, followed by the names that are available."""
    text = f"Unknown rule: {name}"
    if name.startswith(RULE_URL):
        text += "\nAvailable: " + (", ".join(r.id for r in rules) or "none")
    return text


def find_by_id(rules: Sequence[Rule], rule_id: str) -> Rule | None:
    return next((r for r in rules if r.id == rule_id), None)


def normalize_touched(paths: Sequence[str], cwd: str) -> tuple[str, ...]:
    """cwd-relative POSIX paths (absolute when outside cwd), deduplicated first-seen."""
    seen: dict[str, None] = {}
    root = cwd.rstrip("/") or "/"
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip() or "\0" in raw:
            continue
        absolute = posixpath.normpath(posixpath.join(root, raw))
        if absolute == root:
            continue  # the project itself names no file
        if absolute.startswith(root.rstrip("/") + "/"):
            seen.setdefault(absolute[len(root.rstrip("/")) + 1 :], None)
        else:
            seen.setdefault(absolute, None)
    return tuple(seen)
