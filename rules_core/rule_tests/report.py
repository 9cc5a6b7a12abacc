"""What ``pi-rules test`` prints (text, JSON, GitHub annotations), shared with the pytest
plugin (``rules_core.rule_tests.pytest_plugin``) so a failing case reads the same in both.

Names, messages and paths come from the project's own files: every line goes through
``safe_line`` so nothing in them can drive the terminal or start another workflow command.
"""

from __future__ import annotations

import os
from typing import Any

from rules_core.rule_tests.cases import CaseFileError
from rules_core.rule_tests.run import CaseResult, RunReport
from rules_core.safe import safe_line


def shown_path(path: str, base: str) -> str:
    """``path`` relative to ``base`` when inside it (``/``-separated), else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.path.abspath(base))
    return absolute if relative.startswith("..") else relative.replace(os.sep, "/")


def case_lines(result: CaseResult, base: str) -> list[str]:
    """``PASS <name>``, or ``FAIL <name>`` with where the case is, what differed and why."""
    name = safe_line(result.case.name)
    if result.passed:
        return [f"PASS {name}"]
    lines = [f"FAIL {name}", f"  at {safe_line(shown_path(result.case.file, base))}:{result.case.line}"]
    lines += [f"  - {safe_line(problem)}" for problem in result.problems]
    if result.details:
        lines.append("  explain:")
        lines += [f"    {safe_line(detail)}" for detail in result.details]
    return lines


def error_line(error: CaseFileError, base: str) -> str:
    where = safe_line(shown_path(error.file, base)) + (f":{error.line}" if error.line else "")
    return f"ERROR {where}: {safe_line(error.message)}"


def summary(report: RunReport) -> str:
    passed = sum(1 for r in report.results if r.passed)
    failed = len(report.results) - passed
    tail = f", {len(report.errors)} error{'s' if len(report.errors) != 1 else ''}" if report.errors else ""
    return f"{passed} passed, {failed} failed{tail}"


def render_text(report: RunReport, base: str) -> str:
    lines = [error_line(e, base) for e in report.errors]
    for result in report.results:
        lines += case_lines(result, base)
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def report_json(report: RunReport, base: str) -> dict[str, Any]:
    """CONTRACT §6: ``{"cases": [{"name", "passed", "problems"}]}``, plus where each case
    is, its explain lines, and the file errors."""
    return {
        "cases": [
            {
                "name": r.case.name,
                "passed": r.passed,
                "problems": list(r.problems),
                "file": shown_path(r.case.file, base),
                "line": r.case.line,
                "explain": list(r.details),
            }
            for r in report.results
        ],
        "errors": [{"file": shown_path(e.file, base), "line": e.line, "message": e.message} for e in report.errors],
    }


def render_github(report: RunReport, base: str) -> str:
    """One ``::error`` workflow command per failing case and per file error, pointing at
    its line, then the summary line."""
    lines = []
    for error in report.errors:
        lines.append(_command(error.file, error.line, "pi-rules test: invalid test file", error.message, base))
    for result in report.results:
        if not result.passed:
            text = "\n".join([*result.problems, *result.details])
            lines.append(_command(result.case.file, result.case.line, f"pi-rules test: {result.case.name}", text, base))
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def _command(file: str, line: int, title: str, message: str, base: str) -> str:
    where = f"file={_property(shown_path(file, base))}" + (f",line={line}" if line else "")
    return f"::error {where},title={_property(title)}::{_data(message)}"


def _data(text: str) -> str:
    # @actions/core's escapeData: a newline would end the command, so it is %0A.
    return safe_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
