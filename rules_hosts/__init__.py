"""pi-rules hosts: everything that drives the engine from outside.

The CLI app (``cli``), the JSON shapes (``shapes``), one facts builder (``facts``), the
session runtime with its persistence and mid-run attachment (``session``,
``session_file``, ``attach``, ``session_stream``), ``serve``, the MCP server, ``stream
test/scan``, the Claude Code adapter, and the host plugins (``plugins/``). The session
runtime's public names are exported here and load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = dict.fromkeys(
    ("Capture", "Session", "SessionState", "ToolDefinition", "ToolResultEffect", "Turn",
     "touched_entry", "touched_from_entries"),
    "session.runtime",
)

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rules_hosts' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .session.runtime import (
        Capture,
        Session,
        SessionState,
        ToolDefinition,
        ToolResultEffect,
        Turn,
        touched_entry,
        touched_from_entries,
    )
