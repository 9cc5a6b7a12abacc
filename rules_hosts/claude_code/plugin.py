"""The ``claude-code`` host plugin: Claude Code's tools, in one table, and its command.

| Claude Code tool                          | session tool | captured argument | writes |
| ----------------------------------------- | ------------ | ----------------- | ------ |
| ``Read``                                  | read         | ``file_path``     | — |
| ``Write``                                 | write        | ``file_path``     | ``content`` |
| ``Edit``/``MultiEdit``                    | edit         | ``file_path``     | ``new_string`` / every edit's |
| ``NotebookEdit``                          | edit         | ``notebook_path`` | ``new_source`` |
| ``Grep``/``Glob``                         | —            | optional ``path`` (the search scope) | — |
| ``Bash``                                  | bash         | nothing           | — |

As for Pi, shell command strings are never parsed for paths: guessing which words of a
command are files would touch paths the agent never meant. Unknown tools, missing or
non-string arguments and non-mapping ``tool_input`` capture nothing; other hosts' calls
are answered ``[]``. The adapter (``hook``) reads the same table (``tools``) for
invalidation, attachment and the hooks' matcher.
"""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl
from rules_core.model import HostInfo
from rules_core.stream_model import ToolOutput

from ..host_tools import capture, tool_output
from .native import claude_reads
from .tools import HOST, TOOLS


@hookimpl
def pi_rules_hosts() -> list[HostInfo]:
    return [HostInfo(HOST, "Claude Code (the hook command evaluates as this host)", claude_reads)]


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    return capture(TOOLS, tool, args) if host == HOST else []


@hookimpl(trylast=True)
def pi_rules_tool_output(host: str, tool: str, args: Any) -> ToolOutput | None:
    return tool_output(TOOLS, tool, args) if host == HOST else None


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    parser = commands.hook(HOST, "Claude Code's hook command: one payload on stdin", _run)
    parser.add_argument(
        "--print-config", action="store_true", help="print the settings snippet that installs the hooks"
    )


def _run(command: Any) -> int:
    from .hook import run_cli  # the adapter loads the session runtime: only when run

    return run_cli(command.engine, command.args, command.cwd)
