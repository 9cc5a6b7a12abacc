"""Looking rules up by id or reference path, and normalising session paths.

Shared by the engine, the CLI and the session runtime; pure functions over data.
"""

from __future__ import annotations

import posixpath
import re
import urllib.parse
from dataclasses import dataclass
from typing import Sequence

from .model import Rule
from .safe import safe_line

READ_RULE_DESCRIPTION = (
    "Fetch the full content of a reference rule by its rules-relative path. Use when a "
    '"Reference rules available on demand" index entry is relevant to the current task.'
)
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:|[\\/]{2})")
# Hosts and agents may percent-decode a name after we checked it, so the decoded forms
# (`%2e%2e/`, `..%2f`, `%252e%252e%252f`, `%00`) are refused too. Rounds, not a loop:
# each one can only shorten the text, and three cover every double encoding seen.
_DECODE_ROUNDS = 3


def refused(name: object) -> bool:
    """Whether ``name`` is no reference at all: not a non-empty string, or (also once
    percent-decoded) absolute, a Windows drive or UNC path, with a ``..`` segment or a
    NUL byte. Such a name is ``Unknown rule`` whatever the rules are."""
    if not isinstance(name, str) or not name:
        return True
    text = name
    for _ in range(_DECODE_ROUNDS):
        if _unsafe(text):
            return True
        decoded = urllib.parse.unquote(text, errors="surrogateescape")
        if decoded == text:
            return False
        text = decoded
    return _unsafe(text) or urllib.parse.unquote(text) != text  # still encoded: hostile


def _unsafe(text: str) -> bool:
    return ("\0" in text or text.startswith(("/", "\\")) or _WINDOWS_ABSOLUTE.match(text) is not None
            or ".." in re.split(r"[\\/]", text))


@dataclass(frozen=True)
class Reading:
    """What ``read_rule`` answers: the rule, or the refusal text (``Unknown rule: …``)."""

    rule: Rule | None
    refusal: str | None
    # Other reachable rules with the same relative path, when the rule was found by it.
    shared: tuple[Rule, ...] = ()

    @property
    def body(self) -> str | None:
        """The rule's body, or ``None`` when refused."""
        return self.rule.body if self.rule is not None else None

    @property
    def note(self) -> str:
        """One line saying which other rules share the path asked for, and how to reach
        them; empty when the path is unambiguous."""
        if self.rule is None or not self.shared:
            return ""
        others = ", ".join(f"{RULE_URL}{safe_line(r.id)} ({safe_line(r.file.path)})" for r in self.shared)
        return (f"Note: {safe_line(self.rule.relative_path)} also names {others}; "
                f"this is {safe_line(self.rule.file.path)} — ask for rule://<id> to read another")


def find_by_relative_path(rules: Sequence[Rule], name: object) -> Rule | None:
    """Exact relative-path lookup; a :func:`refused` name finds nothing. A file's other
    name (a symbolic link, ``Rule.aliases``) finds it when no rule has that path itself."""
    if refused(name):
        return None
    for rule in rules:  # discovery order: the earliest source wins a repeated path
        if rule.relative_path == name:
            return rule
    return next((r for r in rules for alias in r.aliases if alias.relative_path == name), None)


RULE_URL = "rule://"


def find_reference(rules: Sequence[Rule], name: object) -> Rule | None:
    """What ``read_rule`` resolves: ``rule://<id>`` by exact id (oh-my-pi's addressing),
    anything else by exact rules-relative path (RULE-SPEC §6). No filesystem access.
    The id of a ``rule://`` name is refused on the same grounds as a path."""
    if isinstance(name, str) and name.startswith(RULE_URL):
        rule_id = name[len(RULE_URL) :]
        return None if refused(rule_id) else find_by_id(rules, rule_id)
    return find_by_relative_path(rules, name)


def unknown_rule(rules: Sequence[Rule], name: str) -> str:
    """The refusal text: ``Unknown rule: <name>``; for a ``rule://`` name, as oh-my-pi
    answers, followed by the names that are available. One line each whatever the name:
    control characters in it (and in ids) are escaped, so it cannot forge more lines."""
    text = f"Unknown rule: {safe_line(name)}"
    if name.startswith(RULE_URL):
        text += "\nAvailable: " + (", ".join(safe_line(r.id) for r in rules) or "none")
    return text


def sharing_path(rules: Sequence[Rule], rule: Rule) -> tuple[Rule, ...]:
    """The other rules with ``rule``'s relative path."""
    return tuple(r for r in rules if r.relative_path == rule.relative_path and r is not rule)


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
