"""The ``pi`` host plugin: which arguments of Pi's built-in tools name paths (RULE-SPEC §5).

| Pi built-in             | captured argument |
| ----------------------- | ----------------- |
| ``read``/``edit``/``write`` | ``path``          |
| ``grep``/``find``       | optional ``path`` (the search scope) |
| ``bash``                | nothing (Pi's schema has only ``command`` and ``timeout``) |

Shell command strings are never parsed for paths (a deliberate divergence from agents
whose bash tool has a ``workdir``). Unknown tools, missing or non-string arguments and
non-mapping ``args`` capture nothing. Other hosts (Claude Code, …) ship their own tables
as plugins of the same hook and are answered ``[]`` here.
"""

from __future__ import annotations

from typing import Any, Mapping

from rules_core import hookimpl

from rules_core.stream import ToolOutput

from ._capture import capture, tool_output

HOST = "pi"

# tool name -> the argument that names a path. Required or optional makes no difference
# to capture: a missing argument simply names nothing.
PATH_ARGUMENTS: Mapping[str, str] = {
    "read": "path",
    "edit": "path",
    "write": "path",
    "grep": "path",
    "find": "path",
}


# tool -> (stream scope tool name, path argument, what it writes).
WRITTEN: Mapping[str, tuple[str, str, tuple[str, ...]]] = {
    "write": ("write", "path", ("content",)),
    "edit": ("edit", "path", ("newText", "edits[]")),
}


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    return capture(PATH_ARGUMENTS, tool, args) if host == HOST else []


@hookimpl(trylast=True)
def pi_rules_tool_output(host: str, tool: str, args: Any) -> ToolOutput | None:
    return tool_output(WRITTEN, tool, args) if host == HOST else None
