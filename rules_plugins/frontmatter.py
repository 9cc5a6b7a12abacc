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

from rules_core.model import RuleError, RuleFile

_DELIMITER = "---"
# Deep flow nesting makes PyYAML recurse; a rule's frontmatter is never deeper than this.
_MAX_DEPTH = 64


class FrontmatterError(ValueError):
    """Broken YAML or a broken frontmatter block; the message says how to fix it, ``line``
    and ``column`` (1-based, in the file) where the parser stopped, when it says."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def frontmatter_error(rule_file: RuleFile, exc: FrontmatterError, message: str | None = None) -> RuleError:
    """A ``yaml-syntax`` error at the place the YAML parser stopped (its mark)."""
    return RuleError("yaml-syntax", rule_file.path, str(exc) if message is None else message, rule_file.plugin,
                     exc.line, exc.column)


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
        "add a line containing only '---' after the last key", 1, 1
    )


def load_yaml(text: str, loader: type | None = None) -> Any:
    """Parse frontmatter YAML with the strict loader, raising ``FrontmatterError``."""
    loader = loader or _StrictLoader
    # The leading newline stands for the opening '---' so marks are file line numbers.
    source = "\n" + text
    try:
        _refuse_anchors_and_deep_nesting(source, loader)
        return yaml.load(source, Loader=loader)  # noqa: S506 - a SafeLoader
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        raise FrontmatterError(_describe_yaml_error(exc, source), *_at(getattr(exc, "problem_mark", None))) from None
    except RecursionError:
        raise FrontmatterError("frontmatter is nested too deeply; flatten it") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # An explicit tag on text that is not of that type, e.g. `!!float abc`.
        raise FrontmatterError(f"a value cannot be read ({exc}); remove the '!!' tag or fix the value") from None


def _at(mark: Any) -> tuple[int | None, int | None]:
    """A PyYAML mark's place in the file: the source's first line stands for the opening
    ``---``, so its 0-based line is the file's line less one."""
    if mark is None:
        return None, None
    return mark.line + 1, mark.column + 1


def _refuse_anchors_and_deep_nesting(source: str, loader: type) -> None:
    """One pass over the parser's events, before anything is composed or constructed."""
    depth = 0
    for event in yaml.parse(source, Loader=loader):
        line, column = _at(event.start_mark)
        if isinstance(event, yaml.AliasEvent):
            raise FrontmatterError(
                f"line {line}: YAML aliases ('*{event.anchor}') are not allowed; "
                "quote values that start with '*', e.g. model: \"*sonnet*\"", line, column
            )
        if getattr(event, "anchor", None):
            raise FrontmatterError(
                f"line {line}: YAML anchors ('&{event.anchor}') are not allowed; "
                "quote values that start with '&'", line, column
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > _MAX_DEPTH:
                raise FrontmatterError(f"line {line}: frontmatter is nested too deeply; flatten it", line, column)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


_CORE_RESOLVERS = [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
]


def strict_loader(base: type) -> type:
    """A loader class on ``base`` with YAML 1.2 core scalars and no duplicate keys.

    The C (libyaml) and pure PyYAML bases share these Python resolvers and
    constructors, so they accept the same documents (pinned by a differential test).
    """

    class StrictLoader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:
                    raise FrontmatterError(
                        f"line {key_node.start_mark.line + 1}: a key must be a plain word", *_at(key_node.start_mark)
                    ) from None
                if duplicate:
                    raise FrontmatterError(
                        f"line {key_node.start_mark.line + 1}: duplicate key {key!r}; keep one of them",
                        *_at(key_node.start_mark),
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    # Replace YAML 1.1 implicit typing (yes/no/on/off, dates, sexagesimal) with 1.2 core.
    StrictLoader.yaml_implicit_resolvers = {}
    for tag, pattern, first in _CORE_RESOLVERS:
        StrictLoader.add_implicit_resolver(tag, re.compile(pattern), list(first))
    StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_core_int)
    StrictLoader.add_constructor("tag:yaml.org,2002:bool", _construct_core_bool)
    # An explicit !!timestamp stays text; other unknown tags are refused by SafeLoader.
    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
    return StrictLoader


def _construct_core_int(loader: Any, node: Any) -> int:
    text = str(loader.construct_scalar(node))
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    return sign * int(digits, 10)


def _construct_core_bool(loader: Any, node: Any) -> bool:
    text = str(loader.construct_scalar(node)).lower()
    if text not in ("true", "false"):
        raise ValueError(f"{text!r} is not true or false")
    return text == "true"


# libyaml's C parser is about ten times faster than PyYAML's pure one.
_StrictLoader = strict_loader(
    yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
)


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
