"""Started in a sub-directory, rules the spec reads from cwd only are not loaded — and
`check`/`report` say so in one line with the command to run, without reading them."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from suite_helpers import run_in

CLAUDE_RULE = "---\npaths: src/**\n---\n# Claude rule\n\nPrefer small functions.\n"


@pytest.fixture
def repo(rule_project, monkeypatch):
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    rule_project.write({".claude/rules/style.md": CLAUDE_RULE, "services/api/main.py": ""})
    monkeypatch.setenv("HOME", str(rule_project.home))
    monkeypatch.delenv("PI_RULES_IMPORT", raising=False)
    return rule_project


def _run(capsys, cwd, *args: str) -> tuple[int, str]:
    code, out, _ = run_in(capsys, cwd, *args)
    return code, out


def test_check_from_a_subdirectory_names_the_root_only_files_and_the_command(repo, capsys):
    sub = repo.cwd / "services" / "api"
    code, out = _run(capsys, sub, "check")
    assert code == 0
    assert out == (
        "ok: 0 rules, no errors\n"
        f"warning cwd-only {repo.cwd / '.claude/rules'}: claude reads .claude/rules only from the working "
        f"directory, so these rules are not loaded here; run from {repo.cwd} "
        f"(pi-rules --cwd {repo.cwd} check) or start the agent there\n"
    )


def test_check_json_lists_the_warning_in_the_contract_shape(repo, capsys):
    code, out = _run(capsys, repo.cwd / "services", "--json", "check")
    assert code == 0
    data = json.loads(out)
    assert data["errors"] == []
    assert [(w["code"], w["path"]) for w in data["warnings"]] == [("cwd-only", str(repo.cwd / ".claude/rules"))]


def test_report_shows_the_warning_line(repo, capsys):
    code, out = _run(capsys, repo.cwd / "services", "report")
    assert code == 0
    assert f"warning cwd-only {repo.cwd / '.claude/rules'}: claude reads" in out


def test_no_warning_at_the_root_or_when_cwd_has_its_own(repo, capsys):
    # Only cwd-only is this test's: the rules' globs name no file, a dead-glob warning.
    assert "warning cwd-only" not in _run(capsys, repo.cwd, "check")[1]
    repo.write({"services/.claude/rules/local.md": CLAUDE_RULE})
    assert "warning cwd-only" not in _run(capsys, repo.cwd / "services", "check")[1]


def test_no_warning_when_the_importer_is_off_or_the_project_untrusted(repo, capsys, monkeypatch):
    sub = repo.cwd / "services"
    assert "warning" not in _run(capsys, sub, "--untrusted", "check")[1]
    assert "warning" not in _run(capsys, sub, "-p", "no:claude", "check")[1]
    monkeypatch.setenv("PI_RULES_IMPORT", "none")
    assert "warning" not in _run(capsys, sub, "check")[1]


def test_the_root_only_files_are_never_read(repo, capsys, monkeypatch):
    opened: list[str] = []
    real_open = os.open

    def spy(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    _run(capsys, repo.cwd / "services", "check")
    assert not any(".claude/rules/style.md" in path for path in opened)
    _run(capsys, repo.cwd, "check")  # the spy sees what a read from the root opens
    assert any(".claude/rules/style.md" in path for path in opened)


def test_outside_a_repository_nothing_above_cwd_is_looked_at(rule_project, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    rule_project.write({".claude/rules/style.md": CLAUDE_RULE, "sub/x.py": ""})
    assert "warning" not in _run(capsys, rule_project.cwd / "sub", "check")[1]
