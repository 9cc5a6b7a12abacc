"""The ``stats`` plugin: ``pi-rules stats`` counts what the sessions' journals say each
rule cost and did — active, delivered, pointers, tokens, reads, stream fires and denies —
and advises (docs/stats.md). Only the user's own state is read; only ids and counts are
printed."""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl

FORMATS = ("text", "json", "html")
DEFAULT_DAYS = 30


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    command = commands.command("stats", "per rule: how often it was active, delivered, read, fired and denied "
                                        "in your sessions; advice", _run)
    command.add_argument("--since", type=int, default=DEFAULT_DAYS, metavar="DAYS",
                         help=f"count the last DAYS days (default {DEFAULT_DAYS})")
    command.add_argument("--format", choices=FORMATS, default=None, help="text (default; json with --json), json, html")
    command.add_argument("-o", "--output", default=None, metavar="FILE",
                         help="write here (default: stdout; pi-rules-stats.html for html)")
    command.add_argument("--journal", action="append", default=[], metavar="FILE",
                         help="also read this `serve --session` file (repeatable)")
    command.add_argument("--eval-results", action="append", default=[], metavar="FILE",
                         help="a `pi-rules eval --results` file: failed runs with the rule count as violations")
    command.add_argument("--all-projects", action="store_true", help="count sessions of every project, not only --cwd")


def _run(command: Any) -> int:
    from rules_hosts.stats.cli import run

    return run(command)
