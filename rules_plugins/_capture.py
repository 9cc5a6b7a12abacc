"""Reading a path out of a tool call's untrusted arguments, by a host's table."""

from __future__ import annotations

from typing import Any, Mapping


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
