"""The ``stream-cli`` plugin: ``pi-rules stream test`` and ``pi-rules stream scan``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rules_core import hookimpl

if TYPE_CHECKING:
    import argparse


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    stream = commands.command("stream", "stream rules: test a snippet, scan a tree", _run)
    verbs = stream.add_subparsers(dest="stream_command", required=True, metavar="VERB")
    test = verbs.add_parser("test", help="which stream rules a snippet fires, and why")
    given = test.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", metavar="T", help="the snippet")
    given.add_argument("--file", metavar="F", help="read the snippet from F (- for stdin)")
    test.add_argument("--tool", metavar="NAME", help="the snippet is this tool's arguments (else prose)")
    test.add_argument("--path", metavar="P", help="the file the tool call writes")
    test.add_argument("--source", choices=("text", "thinking", "tool"), help="override the surface")
    _add_facts(test)
    scan = verbs.add_parser("scan", help="check files against tool-scoped stream rules; exit 1 on findings")
    scan.add_argument("dir", nargs="?", default=".", metavar="DIR")
    _add_facts(scan)


def _add_facts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", default="main", metavar="NAME", help="the agent: main, sub, or a name")
    parser.add_argument("--model", default=None, metavar="ID")
    branch = parser.add_mutually_exclusive_group()
    branch.add_argument("--branch", default=None, metavar="NAME")
    branch.add_argument("--no-branch", action="store_true")
    parser.add_argument("--touched", action="append", default=[], metavar="PATH")


def _run(command: Any) -> int:
    from rules_hosts.cli.stream import run  # the watcher and the scanner load only when asked for

    return run(command.engine, command.args, command.cwd)
