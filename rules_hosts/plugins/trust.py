"""The ``trust`` plugin: ``pi-rules trust [DIR]``, ``pi-rules trust --list`` and
``pi-rules untrust [DIR]``, pi-rules' own trust store for hosts that have none
(docs/trust.md)."""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    trust = commands.command("trust", "let hosts started with --trust-store read this project's rules", _trust)
    trust.add_argument("directory", nargs="?", metavar="DIR", help="a folder of the project (default: --cwd)")
    trust.add_argument("--list", action="store_true", help="print the trusted project roots")
    untrust = commands.command("untrust", "remove a project from the trust store", _untrust)
    untrust.add_argument("directory", nargs="?", metavar="DIR", help="a folder of the project (default: --cwd)")


def _trust(command: Any) -> int:
    from rules_hosts.cli.trust import run_trust

    return run_trust(command.args, command.cwd)


def _untrust(command: Any) -> int:
    from rules_hosts.cli.trust import run_untrust

    return run_untrust(command.args, command.cwd)
