"""Where in its file an error points: the line (and column) a ``RuleError`` carries into
``check --format github`` and ``sarif`` (issue 34; docs/lint.md, "Where an annotation lands").

A plugin that knows the place sets ``RuleError.line``/``.column`` itself (the YAML
errors, from PyYAML's marks; the settings, from their key lines). For the rest — the
schema's and importers' problems are plain sentences — ``placed`` (run by the parse hook
on every result with errors) reads the place from what every error of a rule file says, against a line scan of the file's leading ``---`` block (the
frontmatter every format shares, CONTRACT §2, "Frontmatter delimiting"): a message that
starts with a key of that block (``globs must be …``, ``paths 'x' names no glob``,
``unknown inclusion 'x'``) points at the key's value, ``unknown key 'x'`` at the key, ``glob 'x' …`` at the glob's entry,
``line N[, column M]`` at that place. Anything else is about the whole file and keeps no
place. Bounded: one pass over the block's lines, which the file's read cap bounds.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Sequence

from .rules import RuleError

# A top-level ``key:`` line (the key may be quoted); its value follows the colon.
_KEY_LINE = re.compile(r"""(?P<q>["']?)(?P<key>[A-Za-z_$][\w$.-]*)(?P=q)[ \t]*:(?=[ \t]|$)""")
_LEADING_KEY = re.compile(r"""(?:unknown )?['"]?(?P<key>[A-Za-z_$][\w$.-]*)['"]?(?=[ :,;]|$)""")
_UNKNOWN_KEY = re.compile(r"unknown key (?P<quoted>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_GLOB = re.compile(r"glob (?P<quoted>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_STOPPED = re.compile(r"(?:invalid YAML at )?line (?P<line>[1-9]\d{0,8})(?:, column (?P<column>[1-9]\d{0,8}))?\b")

Place = tuple[int, int, int, int]  # key line, key column, value line, value column (1-based)


def frontmatter_keys(text: str) -> dict[str, Place]:
    """The top-level keys of ``text``'s leading ``---`` block and where each is written
    (the first of a repeated key); ``{}`` without a closed block."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip(" \t") != "---":
        return {}
    found: dict[str, Place] = {}
    for number in range(1, len(lines)):
        line = lines[number]
        if line.rstrip(" \t") == "---":
            return found
        match = _KEY_LINE.match(line)
        if match is None or match.group("key") in found:
            continue
        rest = line[match.end():]
        value = len(rest) - len(rest.lstrip(" \t"))
        if rest.strip() and not rest.strip().startswith("#"):
            found[match.group("key")] = (number + 1, 1, number + 1, match.end() + value + 1)
        else:  # the value is the indented block below (a list of globs), else empty
            below = _next_indented(lines, number + 1)
            found[match.group("key")] = (number + 1, 1, *(below or (number + 1, 1)))
    return {}


def _next_indented(lines: list[str], start: int) -> tuple[int, int] | None:
    for number in range(start, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        return (number + 1, indent + 1) if indent and line.rstrip(" \t") != "---" else None
    return None


def place_of(message: str, text: str) -> tuple[int | None, int | None]:
    """Where the error ``message`` about the file ``text`` points (see the module doc)."""
    stopped = _STOPPED.match(message)
    if stopped is not None:
        column = stopped.group("column")
        return int(stopped.group("line")), int(column) if column else None
    keys = frontmatter_keys(text)
    unknown = _UNKNOWN_KEY.match(message)
    if unknown is not None:
        place = keys.get(_unquoted(unknown.group("quoted")))
        return (place[0], place[1]) if place else (None, None)
    glob = _GLOB.match(message)
    if glob is not None:
        return locate(text, _unquoted(glob.group("quoted")))
    leading = _LEADING_KEY.match(message)
    if leading is not None and leading.group("key") in keys:
        place = keys[leading.group("key")]
        return place[2], place[3]
    return None, None


def placed(errors: Sequence[RuleError], path: str, text: str) -> tuple[RuleError, ...]:
    """``errors`` with a place for each error about ``path`` that has none yet."""
    done: list[RuleError] = []
    for error in errors:
        if error.line is None and error.path == path:
            line, column = place_of(error.message, text)
            error = dataclasses.replace(error, line=line, column=column) if line is not None else error
        done.append(error)
    return tuple(done)


def _unquoted(quoted: str) -> str:
    try:
        value = ast.literal_eval(quoted)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return quoted[1:-1]
    return value if isinstance(value, str) else quoted[1:-1]


def position(text: str, index: int) -> tuple[int, int]:
    """The 1-based (line, column) of ``text[index]``, columns counted in characters."""
    start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - start + 1


def locate(text: str, needle: str) -> tuple[int | None, int | None]:
    """Where ``needle`` is written in a rule file: first in its leading ``---`` block (a
    key's value, a glob's entry), else anywhere; ``(None, None)`` when it is not there."""
    if not needle:
        return None, None
    end = text.find("\n---", 3) if text.startswith("---") else -1
    index = text.find(needle, 0, end) if end > 0 else -1
    if index < 0:
        index = text.find(needle)
    return position(text, index) if index >= 0 else (None, None)
