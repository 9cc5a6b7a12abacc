"""The ``map`` plugin: ``pi-rules map [DIR]``, which rules load where, as a self-contained
HTML page, JSON or a terminal tree (docs/map.md)."""

from __future__ import annotations

from typing import Any

from rules_core import hookimpl

FORMATS = ("html", "json", "tree")
DEFAULT_DEPTH = 2


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    command = commands.command("map", "which rules a file in each folder activates: an HTML page, JSON or a tree", _run)
    command.add_argument("directory", nargs="?", metavar="DIR", help="the folder to map (default: --cwd)")
    command.add_argument("-o", "--output", default=None, metavar="FILE",
                         help="write here ('-' for stdout); default: rules-map.html for html, stdout otherwise")
    command.add_argument("--format", choices=FORMATS, default=None,
                         help="html (default; json with --json), json, or tree")
    command.add_argument("--host", default=None, metavar="NAME",
                         help="evaluate as this host would, leaving out the files its agent reads itself")
    command.add_argument("--depth", type=int, default=DEFAULT_DEPTH, metavar="N",
                         help=f"folders shown expanded (html) or printed (tree) down to depth N (default {DEFAULT_DEPTH})")
    command.add_argument("--open", action="store_true", help="open the written page in the web browser")


def _run(command: Any) -> int:
    from rules_hosts.map.command import run  # the map's modules load only for this command

    return run(command)
