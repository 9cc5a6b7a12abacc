"""Splitting a markdown file into YAML frontmatter and body, and loading that YAML safely.

The YAML dialect is "1.2 in spirit" (CONTRACT §2): duplicate keys are errors,
``yes``/``no``/``on``/``off`` stay strings, dates stay strings, and anchors and aliases
are refused outright so no document can expand into a memory bomb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

_DELIMITER = "---"
# Deep flow nesting makes PyYAML recurse; a rule's frontmatter is never deeper than this.
_MAX_DEPTH = 64


class FrontmatterError(ValueError):
    """Broken YAML or a broken frontmatter block; the message says how to fix it."""


@dataclass(frozen=True)
class Split:
    yaml_text: str | None  # None when the file has no frontmatter block at all
    body: str
    body_line: int  # 1-based line where the body starts, for messages


def split_frontmatter(text: str) -> Split:
    """Separate ``---`` frontmatter from the body.

    The first line must be exactly ``---`` (BOM and CRLF are already gone); the block
    ends at the next line that is exactly ``---``. No opening line: ``yaml_text`` is
    None. An opening line without a closing one raises ``FrontmatterError``.
    """
    first, sep, rest = text.partition("\n")
    if first.rstrip(" \t") != _DELIMITER:
        return Split(None, text, 1)
    lines = rest.split("\n")
    for number, line in enumerate(lines):
        if line.rstrip(" \t") == _DELIMITER:
            return Split("\n".join(lines[:number]), "\n".join(lines[number + 1 :]), number + 3)
    raise FrontmatterError(
        "the frontmatter block opened with '---' on line 1 is never closed; "
        "add a line containing only '---' after the last key"
    )


def load_yaml(text: str) -> Any:
    """Parse frontmatter YAML with the strict loader, raising ``FrontmatterError``."""
    try:
        # The leading newline stands for the opening '---' so marks are file line numbers.
        return yaml.load("\n" + text, Loader=_StrictLoader)  # noqa: S506 - safe loader
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        raise FrontmatterError(_describe_yaml_error(exc, "\n" + text)) from None
    except RecursionError:
        raise FrontmatterError("frontmatter is nested too deeply; flatten it") from None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core scalars, no aliases, no duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise FrontmatterError(
                f"line {event.start_mark.line + 1}: YAML aliases ('*{event.anchor}') are not "
                "allowed; quote values that start with '*', e.g. model: \"*sonnet*\""
            )
        event = self.peek_event()
        if getattr(event, "anchor", None):
            raise FrontmatterError(
                f"line {event.start_mark.line + 1}: YAML anchors ('&{event.anchor}') are not "
                "allowed; quote values that start with '&'"
            )
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > _MAX_DEPTH:
                raise FrontmatterError("frontmatter is nested too deeply; flatten it")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # type: ignore[override]
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise FrontmatterError(
                    f"line {key_node.start_mark.line + 1}: a key must be a plain word"
                ) from None
            if duplicate:
                raise FrontmatterError(
                    f"line {key_node.start_mark.line + 1}: duplicate key {key!r}; "
                    "keep one of them"
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# Replace YAML 1.1 implicit typing with the YAML 1.2 core schema.
_StrictLoader.yaml_implicit_resolvers = {}
_CORE_RESOLVERS = [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    (
        "tag:yaml.org,2002:int",
        r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$",
        "-+0123456789",
    ),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
]
for _tag, _pattern, _first in _CORE_RESOLVERS:
    _StrictLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def _construct_core_int(loader: _StrictLoader, node: Any) -> int:
    value = loader.construct_scalar(node)
    text = str(value)
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    return sign * int(digits, 10)


def _construct_core_bool(loader: _StrictLoader, node: Any) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_core_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:bool", _construct_core_bool)
# Explicit !!timestamp or !!python tags are refused rather than constructed.
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def _describe_yaml_error(exc: yaml.YAMLError, source: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    hint = "check indentation and quote values containing ': ', '#', '*', '&', '[' or '{'"
    if mark is not None:
        lines = source.split("\n")
        line = lines[mark.line] if mark.line < len(lines) else ""
        key, sep, value = line.partition(":")
        if sep and value.strip()[:1] in ("*", "&"):
            # Unquoted glob patterns such as *sonnet* read as YAML aliases.
            hint = f'quote the value: {key.strip()}: "{value.strip()}"'
    return f"invalid YAML at {where}{problem}; {hint}"
