"""Claude Code's tools, in one table (the plugin's docstring shows it as a table)."""

from __future__ import annotations

from typing import Mapping

from rules_hosts.protocols.host_tools import HostTool

HOST = "claude-code"

# CONTRACT §5: Write -> write, Edit/MultiEdit/NotebookEdit -> edit.
TOOLS: Mapping[str, HostTool] = {
    "Read": HostTool("read", "file_path"),
    "Write": HostTool("write", "file_path", ("content",)),
    "Edit": HostTool("edit", "file_path", ("new_string",)),
    "MultiEdit": HostTool("edit", "file_path", ("edits[]",)),
    "NotebookEdit": HostTool("edit", "notebook_path", ("new_source",)),
    "Grep": HostTool(None, "path"),
    "Glob": HostTool(None, "path"),
    "Bash": HostTool("bash", None),
}
# The tools whose calls name a path: the PreToolUse/PostToolUse hooks' matcher.
MATCHER = "|".join(name for name, tool in TOOLS.items() if tool.path is not None)
# Claude tool name -> the session's read/edit/write/bash semantics.
SESSION_TOOLS: Mapping[str, str] = {name: t.session for name, t in TOOLS.items() if t.session is not None}
