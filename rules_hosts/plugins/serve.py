"""The ``serve`` plugin: ``pi-rules serve``, a session over JSON lines (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    serve = commands.command("serve", "drive a session over JSON lines on stdin/stdout", _run)
    serve.add_argument("--session", default=None, metavar="FILE", help="persist touched paths in this JSONL file")
    serve.add_argument(
        "--host", default="pi", metavar="NAME",
        help="the host driving the session (default: pi): its tool table names the touched paths, and "
             "the files its agent reads itself are left out",
    )


def _run(command: Any) -> int:
    from rules_hosts.protocols.serve import run  # the session runtime loads only for this command

    return run(command.engine, command.args, command.cwd)
