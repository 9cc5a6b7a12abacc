"""The ``mcp`` plugin: ``pi-rules mcp``, an MCP server over stdio (docs/hosts.md)."""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    parser = commands.command(
        "mcp", "serve read_rule, explain_path and list_rules to an MCP host over stdio", _run
    )
    parser.description = "An MCP server over stdio; the project is --cwd (default: the working directory)."


def _run(command: Any) -> int:
    from rules_hosts.protocols.mcp import run  # the MCP SDK loads only for this command

    return run(command.engine, command.args, command.cwd)
