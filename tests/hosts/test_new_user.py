"""What a new user tripped over (issue 34, part 4): commands that were quiet or disagreed.

Each test runs the real CLI on a real tree in ``tmp_path`` and reads what a person sees.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.cli import main


@pytest.fixture
def project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    rule_project.write({".pi/rules/kind.md": rule_text("Be kind.", description="Kind", alwaysApply=True)})
    return rule_project


def run(capsys, project, *args: str) -> tuple[int, str, str]:
    code = main(["--cwd", str(project.cwd), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_prints_the_env_value_warning_check_gives(capsys, project, monkeypatch):
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20k")
    _, check, _ = run(capsys, project, "check")
    [warning] = [line for line in check.splitlines() if line.startswith("warning env-value")]
    code, report, _ = run(capsys, project, "report")
    assert code == 0 and warning in report.splitlines()
    assert "budget: 2/20 estimated tokens" in report  # the budget it explains
    data = json.loads(run(capsys, project, "--json", "report")[1])
    assert [w["code"] for w in data["warnings"]] == ["env-value"]
    # Positive control: a well-written value gives no warning in either.
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20000")
    assert "warning" not in run(capsys, project, "report")[1]


def test_report_leaves_the_rule_file_warnings_to_check(capsys, project):
    project.write({".pi/rules/dead.md": rule_text("Dead.", description="Dead", globs=["nowhere/**"])})
    assert "warning dead-glob" in run(capsys, project, "check")[1]
    assert "warning" not in run(capsys, project, "report")[1]
