"""The ``claude-code`` host plugin: Claude Code's tools, in one table, and its command.

| Claude Code tool                          | session tool | captured argument | writes |
| ----------------------------------------- | ------------ | ----------------- | ------ |
| ``Read``                                  | read         | ``file_path``     | — |
| ``Write``                                 | write        | ``file_path``     | ``content`` |
| ``Edit``/``MultiEdit``                    | edit         | ``file_path``     | ``new_string`` / every edit's |
| ``NotebookEdit``                          | edit         | ``notebook_path`` | ``new_source`` |
| ``Grep``/``Glob``                         | —            | optional ``path`` (the search scope) | — |
| ``Bash``                                  | bash         | nothing here; the ``shell-paths`` plugin reads ``command`` | — |

The shell command's paths are not this table's: the ``shell-paths`` plugin
(``rules_plugins/shell_paths.py``, docs/shell.md) reads them for every host. Unknown tools, missing or
non-string arguments and non-mapping ``tool_input`` capture nothing; other hosts' calls
are answered ``[]``. The adapter (``hook``) reads the same table (``tools``) for
invalidation, attachment and the hooks' matcher.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rules_core import hookimpl
from rules_core.model import HostInfo
from rules_core.stream.model import ToolOutput

from rules_hosts.protocols.host_tools import capture, tool_output
from .native import claude_reads
from .tools import HOST, TOOLS


@hookimpl
def pi_rules_hosts() -> list[HostInfo]:
    # No read_rule tool the model can see (CONTRACT §6): listed rules name the file for Read.
    # Whatever a hook adds stays in the transcript and is never sent again: deliver-once.
    return [HostInfo(HOST, "Claude Code (the hook command evaluates as this host)", claude_reads, reference="read-tool",
                     delivery="once")]


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    return capture(TOOLS, tool, args) if host == HOST else []


@hookimpl(trylast=True)
def pi_rules_tool_output(host: str, tool: str, args: Any) -> ToolOutput | None:
    return tool_output(TOOLS, tool, args) if host == HOST else None


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    parser = commands.hook(HOST, "Claude Code's hook command: one payload on stdin", _run)
    setup = parser.add_mutually_exclusive_group()
    setup.add_argument(
        "--print-config", nargs="?", const="human", choices=("human", "settings", "mcp"), metavar="settings|mcp",
        help="print what installs the adapter: both files with comments, or one file's JSON document",
    )
    setup.add_argument("--install", action="store_true",
                       help="merge the hooks and the MCP server into Claude Code's files for --scope")
    setup.add_argument("--uninstall", action="store_true", help="remove exactly what --install added")
    parser.add_argument(
        "--scope", choices=("project", "local", "user"), default=None,
        help="with --install/--uninstall: project (default: .claude/settings.json, .mcp.json), "
             "local (.claude/settings.local.json, ~/.claude.json) or user (~/.claude/settings.json, ~/.claude.json)",
    )


def _run(command: Any) -> int:
    args = command.args
    if args.scope is not None and not (args.install or args.uninstall):
        sys.stderr.write("pi-rules hook claude-code: --scope goes with --install or --uninstall\n")
        return 2
    if args.install or args.uninstall or args.print_config:
        from .install import run_cli as run_setup  # the setup never loads the session runtime

        code = run_setup(args, command.cwd, sys.stdout, sys.stderr, os.environ)
        if code is not None:
            return code
    from .hook import run_cli  # the adapter loads the session runtime: only when run

    return run_cli(command.engine, args, command.cwd, command.resolved)
