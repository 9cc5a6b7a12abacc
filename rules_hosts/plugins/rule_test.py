"""The ``rule-test`` plugin: ``pi-rules test [FILE…]`` runs declarative rule tests
(docs/testing-rules.md); the cases, their runner and the output live in
``rules_core.rule_tests.cases*`` so the pytest plugin (``rules_core.rule_tests.pytest_plugin``) shares them."""

from __future__ import annotations

import os
import sys
from typing import Any

from rules_core import hookimpl

FORMATS = ("text", "json", "github")


@hookimpl
def pi_rules_cli_commands(commands: Any) -> None:
    test = commands.command("test", "run declarative rule tests (.pi/rules.test.yaml); exit 1 on a failure", _run)
    test.add_argument(
        "files", nargs="*", metavar="FILE",
        help="test files, relative to --cwd (default: .pi/rules.test.yaml and .pi/tests/*.yaml)",
    )
    test.add_argument("--format", choices=FORMATS, default=None, help="output format (default: text, or json with --json)")


def _run(command: Any) -> int:
    from rules_core.rule_tests.report import render_github, render_text, report_json
    from rules_core.rule_tests.run import default_case_files, run_files
    from rules_core.safe import safe_json

    cwd = command.cwd
    paths = [os.path.join(cwd, f) for f in command.args.files] or default_case_files(cwd)
    if not paths:
        print("pi-rules test: no rule tests found; write .pi/rules.test.yaml (docs/testing-rules.md)", file=sys.stderr)
        return 1
    report = run_files(command.engine, paths, cwd, trusted=not command.args.untrusted)
    base = os.getcwd()  # paths as the person (or the CI runner) who started us names them
    name = command.args.format or ("json" if command.args.json else "text")
    if name == "json":
        sys.stdout.write(safe_json(report_json(report, base)) + "\n")
    elif name == "github":
        sys.stdout.write(render_github(report, base))
    else:
        sys.stdout.write(render_text(report, base))
    return 0 if report.ok else 1
