"""pi-rules hosts: everything that drives the engine from outside, in wings.

``cli/`` (the ``pi-rules`` entry, the app and its own commands), ``session/`` (the session
runtime, its file, results, stream, attachment, deliver-once, facts and trust store),
``map/``, ``hook_server/``, ``protocols/`` (``serve``, MCP, host tool tables), one home
per host (``claude_code/``, ``pi/``) and the command plugins (``plugins/``); the JSON
shapes (``shapes``) are at the top. The session runtime's public names are exported
here and load on first use.
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


# This lazy-export helper is duplicated on purpose in rules_core/__init__.py: sharing it would mean
# importing a helper module first, and `import rules_core` is budgeted to load nothing
# but this file (tests/suites/test_import_shape.py; rules_hosts must not be imported by the core).
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
