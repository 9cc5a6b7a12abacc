"""The ``eval`` plugin: ``pi-rules eval [FILE…]`` runs behavioural cases against a real
agent with and without a rule and reports compliance (docs/eval.md); it also provides
the built-in agent runners ``command``, ``claude-code`` and ``pi``."""

from __future__ import annotations

from typing import Any, Sequence

from rules_core import hookimpl

FORMATS = ("text", "json")


@hookimpl
def pi_rules_agent_runners() -> Sequence[Any]:
    from rules_hosts.eval.pi_runner import pi_runner
    from rules_hosts.eval.runners import builtin_runners

    return [*builtin_runners(), pi_runner()]


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    command = commands.command("eval", "run behavioural cases with and without each rule against a real agent; "
                                       "exit 1 below min_compliance", _run)
    command.add_argument("files", nargs="*", metavar="FILE",
                         help="case files, relative to --cwd (default: .pi/evals/*.yaml)")
    command.add_argument("--runs", type=int, default=None, metavar="N", help="runs per arm for every case")
    command.add_argument("--runner", default=None, metavar="NAME", help="agent runner for every case")
    command.add_argument("--results", default=None, metavar="FILE",
                         help="JSON-lines file: each run is appended, runs already there are not repeated")
    command.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                         help="time limit of one run (default 600)")
    command.add_argument("--format", choices=FORMATS, default=None, help="text (default; json with --json) or json")


def _run(command: Any) -> int:
    from rules_hosts.eval.cli import run

    return run(command)
