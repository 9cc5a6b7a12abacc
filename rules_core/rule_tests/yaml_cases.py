"""YAML for rule-test files (``rule_tests``): the documents a case file may hold, with
the line of every node so an error can name it.

YAML 1.2 core scalars as in rule frontmatter (``yes``/``on`` stay text); anchors and
aliases are refused (a shared node is an alias), nesting is bounded, and any other tag is
an error — no document expands beyond its own size.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_DEPTH = 16  # a case needs three levels; anything deeper is a mistake or an attack
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"


class Problem(Exception):
    """One validation problem at a line; caught per case by ``rule_tests``, never raised further."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class _Loader(yaml.SafeLoader):
    """YAML 1.2 core scalars (``yes``/``on`` stay text, as in rule files)."""


_Loader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$", "-+0123456789."),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    _Loader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def compose(text: str) -> yaml.Node | None:
    loader = None
    try:
        loader = _Loader(text)  # the reader already refuses control characters
        return loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        problem = exc.problem or exc.context or "unreadable"
        raise Problem(line, f"invalid YAML: {problem}; check indentation and quote values "
                             "containing ': ', '#', '*', '&', '[' or '{'") from None
    except yaml.YAMLError as exc:
        raise Problem(0, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise Problem(0, "the YAML is nested too deeply; a case needs two levels") from None
    finally:
        if loader is not None:
            loader.dispose()


def case_nodes(text: str, kind: str, limit: int, split: str, doc: str) -> list[yaml.Node]:
    """The case nodes of a case file (a YAML list), or ``Problem``: empty, not a list, or
    more than ``limit`` cases (``split`` says how to split it, ``doc`` where it is told)."""
    root = compose(text)
    if root is None:
        raise Problem(0, f"the file is empty; write a list of cases ({doc})")
    if root.tag != SEQ_TAG:
        raise Problem(line_of(root), f"a {kind} is a list of cases: start each case with '- name: …'")
    if len(root.value) > limit:
        raise Problem(line_of(root), f"more than {limit} cases; {split}")
    return list(root.value)


def line_of(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def value_of(node: yaml.Node, seen: set[int], depth: int = 0) -> Any:
    """A plain value; anchors and aliases are refused (a shared node is an alias), so no
    document expands beyond its own size."""
    if id(node) in seen or getattr(node, "anchor", None):
        raise Problem(line_of(node), "YAML anchors and aliases are not allowed; quote values starting with '*' or '&'")
    if depth > MAX_DEPTH:
        raise Problem(line_of(node), "the YAML is nested too deeply; flatten it")
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode) and node.tag == SEQ_TAG:
        return [value_of(item, seen, depth + 1) for item in node.value]
    if isinstance(node, yaml.MappingNode) and node.tag == MAP_TAG:
        return {key: value_of(value, seen, depth + 1) for key, (_, value) in pairs_of(node, seen).items()}
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    raise Problem(line_of(node), f"the tag {node.tag!r} is not allowed here; remove it")


def _scalar(node: yaml.ScalarNode) -> Any:
    text = str(node.value)
    if node.tag == "tag:yaml.org,2002:str":
        return text
    if node.tag == "tag:yaml.org,2002:null":
        return None
    if node.tag == "tag:yaml.org,2002:bool":
        return text.lower() == "true"
    if node.tag == "tag:yaml.org,2002:int":
        sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text.lstrip("+"))
        base = 16 if digits.startswith("0x") else 8 if digits.startswith("0o") else 10
        return sign * int(digits[2:] if base != 10 else digits, base)
    if node.tag == "tag:yaml.org,2002:float":
        return float(text)
    raise Problem(line_of(node), f"the tag {node.tag!r} is not allowed here; remove it")


def pairs_of(node: yaml.MappingNode, seen: set[int]) -> dict[str, tuple[int, yaml.Node]]:
    """The mapping's string keys with their lines and value nodes; duplicate and
    non-text keys are errors."""
    pairs: dict[str, tuple[int, yaml.Node]] = {}
    for key_node, value_node in node.value:
        key = value_of(key_node, seen, MAX_DEPTH)
        if not isinstance(key, str):
            raise Problem(line_of(key_node), f"a key must be a word, not {key!r}")
        if key in pairs:
            raise Problem(line_of(key_node), f"duplicate key {key!r}; keep one of them")
        pairs[key] = (line_of(key_node), value_node)
    return pairs
