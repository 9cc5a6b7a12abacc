"""Reading a path out of a tool call's untrusted arguments, by a host's table."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rules_core.stream import ToolOutput


def capture(table: Mapping[str, str], tool: Any, args: Any) -> list[str]:
    """The path ``args`` names under the argument ``table`` maps ``tool`` to, if any.

    Arguments are untrusted: an unknown tool, a non-mapping ``args`` or a missing, blank
    or non-string value names nothing.
    """
    if not isinstance(tool, str) or not isinstance(args, Mapping):
        return []
    key = table.get(tool)
    value = args.get(key) if key is not None else None
    return [value] if isinstance(value, str) and value.strip() else []


def tool_output(
    table: Mapping[str, tuple[str, str, Sequence[str]]], tool: Any, args: Any
) -> ToolOutput | None:
    """What a call writes, by a host's table: tool -> (scope tool name, path argument,
    text arguments). A text argument holds a string; one named ``x[]`` holds a list of
    edits whose replacement text is their ``new_string``/``newText``. Untrusted: odd
    shapes give ``None``."""
    if not isinstance(tool, str) or not isinstance(args, Mapping) or tool not in table:
        return None
    scope_tool, path_key, text_keys = table[tool]
    path = args.get(path_key)
    if not isinstance(path, str) or not path.strip():
        return None
    texts: list[str] = []
    for key in text_keys:
        if key.endswith("[]"):  # a list of edits: [{"new_string": …}, …]
            value = args.get(key[:-2])
            if isinstance(value, list):
                texts.extend(t for t in map(_edit_text, value) if t is not None)
        elif isinstance(args.get(key), str):
            texts.append(args[key])
    if not texts:
        return None
    return ToolOutput(scope_tool, path, "\n".join(texts))


def _edit_text(item: Any) -> str | None:
    if not isinstance(item, Mapping):
        return None
    for key in ("new_string", "newText", "new_text"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    return None
