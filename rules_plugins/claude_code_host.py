"""The ``claude-code`` host plugin: which arguments of Claude Code's tools name paths.

| Claude Code tool                         | captured argument |
| ---------------------------------------- | ----------------- |
| ``Read``/``Edit``/``MultiEdit``/``Write`` | ``file_path``     |
| ``NotebookEdit``                         | ``notebook_path`` |
| ``Grep``/``Glob``                        | optional ``path`` (the search scope) |
| ``Bash`` and every other tool            | nothing           |

As for Pi, shell command strings are never parsed for paths: guessing which words of a
command are files would touch paths the agent never meant. Unknown tools, missing or
non-string arguments and non-mapping ``tool_input`` capture nothing; other hosts' calls
are answered ``[]``.
"""

from __future__ import annotations

from typing import Any, Mapping

from rules_core import hookimpl

from rules_core.stream import ToolOutput

from ._capture import capture, tool_output

HOST = "claude-code"

# tool name -> the argument that names a path (Claude Code's documented tool inputs).
PATH_ARGUMENTS: Mapping[str, str] = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
    "Grep": "path",
    "Glob": "path",
}


# tool -> (stream scope tool name, path argument, what it writes) — CONTRACT §5.
WRITTEN: Mapping[str, tuple[str, str, tuple[str, ...]]] = {
    "Write": ("write", "file_path", ("content",)),
    "Edit": ("edit", "file_path", ("new_string",)),
    "MultiEdit": ("edit", "file_path", ("edits[]",)),
    "NotebookEdit": ("edit", "notebook_path", ("new_source",)),
}


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    return capture(PATH_ARGUMENTS, tool, args) if host == HOST else []


@hookimpl(trylast=True)
def pi_rules_tool_output(host: str, tool: str, args: Any) -> ToolOutput | None:
    return tool_output(WRITTEN, tool, args) if host == HOST else None
