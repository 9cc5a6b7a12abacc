"""The ``export`` plugin: ``pi-rules export --to TARGET[,TARGET…]`` writes the project's
rules in other agents' formats (CONTRACT §7, docs/export.md)."""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    from rules_hosts.export.plan import TARGETS  # names only: the writers load when the command runs

    parser = commands.command("export", "write the project's rules in other agents' formats", _run)
    parser.add_argument("--to", action="append", default=None, metavar="TARGET[,TARGET…]",
                        help=f"targets ({', '.join(TARGETS)}); default: [export] to in .pi/rules.toml")
    parser.add_argument("--from", dest="source", default=None, metavar="IMPORTER",
                        help="export the rules this importer reads instead of .pi/rules")
    parser.add_argument("--out", default=None, metavar="DIR", help="write below DIR instead of the project")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="write nothing; exit 1 with a unified diff when the files on disk differ")
    mode.add_argument("--dry-run", action="store_true", help="write nothing; say what would be written")
    parser.add_argument("--lossy", action="store_true",
                        help="keep rules a target cannot express, the condition stated in the body")


def _run(command: Any) -> int:
    from rules_hosts.export.run import run_export

    return run_export(command)
