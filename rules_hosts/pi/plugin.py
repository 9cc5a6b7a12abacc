"""The ``pi`` host plugin: which arguments of Pi's built-in tools name paths (RULE-SPEC §5).

| Pi built-in             | session tool | captured argument | writes |
| ----------------------- | ------------ | ----------------- | ------ |
| ``read``                | read         | ``path``          | — |
| ``write``               | write        | ``path``          | ``content`` |
| ``edit``                | edit         | ``path``          | ``newText`` / every edit's |
| ``grep``/``find``       | —            | optional ``path`` (the search scope) | — |
| ``bash``                | bash         | nothing here; the ``shell-paths`` plugin reads ``command`` | — |

The paths of a shell command come from the ``shell-paths`` plugin (docs/shell.md), which
answers for every host's ``bash`` tool. Unknown tools, missing or non-string arguments and
non-mapping ``args`` capture nothing. Other hosts (Claude Code, …) ship their own tables
as plugins of the same hook and are answered ``[]`` here.
"""

from __future__ import annotations

from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import HostInfo
from rules_core.stream.model import ToolOutput

from rules_hosts.protocols.host_tools import HostTool, capture, tool_output
from .native import pi_reads

HOST = "pi"

TOOLS: Mapping[str, HostTool] = {
    "read": HostTool("read", "path"),
    "write": HostTool("write", "path", ("content",)),
    "edit": HostTool("edit", "path", ("newText", "edits[]")),
    "grep": HostTool(None, "path"),
    "find": HostTool(None, "path"),
    "bash": HostTool("bash", None),
}


@hookimpl
def pi_rules_hosts() -> list[HostInfo]:
    return [HostInfo(HOST, "Pi (pi-rules serve evaluates as this host by default)", pi_reads)]


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    return capture(TOOLS, tool, args) if host == HOST else []


@hookimpl(trylast=True)
def pi_rules_tool_output(host: str, tool: str, args: Any) -> ToolOutput | None:
    return tool_output(TOOLS, tool, args) if host == HOST else None
