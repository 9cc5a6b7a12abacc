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


def test_list_has_a_header_row_and_its_json_carries_conditions(capsys, project):
    project.write({".pi/rules/ts.md": rule_text("Types.", description="TS", globs=["src/**/*.ts"])})
    code, out, _ = run(capsys, project, "list")
    header, *rows = out.splitlines()
    assert code == 0 and header.split() == ["ID", "FILE", "SOURCE", "FORMAT", "PATH"]
    assert [row.split()[0] for row in rows] == ["kind", "ts"]
    assert header.index("PATH") == rows[0].index(".pi/rules/kind.md")  # the columns line up
    data = json.loads(run(capsys, project, "--json", "list")[1])
    conditions = {r["id"]: r["conditions"] for r in data["rules"]}
    assert conditions["ts"]["globs"] == ["src/**/*.ts"] and conditions["kind"]["alwaysApply"] is True


def test_show_names_the_folder_a_nested_rule_belongs_to(capsys, project):
    project.write({
        "packages/api/.pi/rules/routes.md": rule_text("Routes.", description="Routes", load="on-demand",
                                                      alwaysApply=True),
        "packages/api/.pi/rules/py.md": rule_text("Py.", description="Py", globs=["**/*.py"]),
        "packages/api/app.py": "x\n",
    })
    ids = {r["id"]: r["relativePath"] for r in json.loads(run(capsys, project, "--json", "list")[1])["rules"]}
    routes = next(i for i, p in ids.items() if p.endswith("routes.md"))
    py = next(i for i, p in ids.items() if p.endswith("py.md"))
    out = run(capsys, project, "show", routes)[1]
    assert "folder: packages/api/ (offered only while a touched path lies under it)" in out.splitlines()
    assert "folder: packages/api/ (its globs are relative to it)" in run(capsys, project, "show", py)[1]
    # Positive control: a rule of the project's own .pi/rules has no folder line.
    assert "folder:" not in run(capsys, project, "show", "kind")[1]


def test_show_json_carries_the_folder_of_a_nested_rule(capsys, project):
    project.write({
        "packages/api/.pi/rules/routes.md": rule_text("Routes.", description="Routes", load="on-demand",
                                                      alwaysApply=True),
        "packages/api/v2/.cursor/rules/py.mdc": "---\ndescription: Py\nglobs: \"**/*.py\"\n---\nPy.\n",
    })
    rules = json.loads(run(capsys, project, "--json", "list")[1])["rules"]
    shown = {r["relativePath"]: json.loads(run(capsys, project, "--json", "show", r["id"])[1]) for r in rules}
    assert shown["routes.md"]["folder"] == "packages/api"
    assert shown["py.mdc"]["folder"] == "packages/api/v2"
    # The key sits among the rule's keys, before its conditions and body (the text show's order).
    assert list(shown["routes.md"])[-3:] == ["folder", "conditions", "body"]
    # Positive control: a rule of the project's own .pi/rules has no folder, as in the text show.
    assert "folder" not in shown["kind.md"]


def test_explain_says_a_path_outside_the_project_is_outside(capsys, project):
    elsewhere = project.cwd.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file.py").write_text("x\n")
    code, out, err = run(capsys, project, "explain", "../elsewhere/file.py")
    assert code == 0 and "../elsewhere/file.py is outside the project" in err
    data = json.loads(run(capsys, project, "--json", "explain", "../elsewhere/file.py")[1])
    assert "outside the project" in data["outsideProject"]
    # Positive control: a path inside says nothing of the kind.
    code, out, err = run(capsys, project, "explain", "src/app.py")
    assert err == "" and "outsideProject" not in json.loads(run(capsys, project, "--json", "explain", "src/app.py")[1])
