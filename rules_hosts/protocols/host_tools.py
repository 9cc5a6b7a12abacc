"""A host's tool table, and reading a tool call's untrusted arguments by it: the path a
call names (capture) and the text it would write (stream rules' pre-write check)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from rules_core.stream.model import ToolOutput


@dataclass(frozen=True)
class HostTool:
    """One tool of a host: its session semantics (``read``/``edit``/``write``/``bash``,
    or ``None``), the argument naming its path, and the arguments holding what it writes
    (``x[]``: a list of edits)."""

    session: str | None
    path: str | None
    writes: tuple[str, ...] = ()


def capture(table: Mapping[str, HostTool], tool: Any, args: Any) -> list[str]:
    """The path ``args`` names under the argument ``table`` maps ``tool`` to, if any.

    Arguments are untrusted: an unknown tool, a non-mapping ``args`` or a missing, blank
    or non-string value names nothing.
    """
    if not isinstance(tool, str) or not isinstance(args, Mapping):
        return []
    entry = table.get(tool)
    value = args.get(entry.path) if entry is not None and entry.path is not None else None
    return [value] if isinstance(value, str) and value.strip() else []


def tool_output(table: Mapping[str, HostTool], tool: Any, args: Any) -> ToolOutput | None:
    """What a call writes, by a host's table; the stream scope's tool name is the
    session tool. A text argument holds a string; one named ``x[]`` holds a list of
    edits whose replacement text is their ``new_string``/``newText``. Untrusted: odd
    shapes give ``None``."""
    if not isinstance(tool, str) or not isinstance(args, Mapping):
        return None
    entry = table.get(tool)
    if entry is None or not entry.writes or entry.session is None or entry.path is None:
        return None
    scope_tool, path_key, text_keys = entry.session, entry.path, entry.writes
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
