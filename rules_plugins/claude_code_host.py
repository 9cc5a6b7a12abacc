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

from ._capture import capture

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


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    return capture(PATH_ARGUMENTS, tool, args) if host == HOST else []
