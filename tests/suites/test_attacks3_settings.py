"""Issue 26, attack 3: a project's `.pi/rules.toml` narrows only what the project brought;
it can never disable, block or un-import the user's own rules (docs/configuration.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_hosts.cli import main

AWS = "AKIA[0-9A-Z]{16}"
CONTENT = "key = 'AKIAABCDEFGHIJKLMNOP'\n"


def _pre_tool_use(project) -> dict | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    env.update(HOME=str(project.home), XDG_STATE_HOME=str(project.home / "state"), PI_RULES_HOOK_SERVER="off")
    payload = {"session_id": "s-3", "cwd": str(project.cwd), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(project.cwd / "src" / "config.py"), "content": CONTENT}}
    done = subprocess.run([sys.executable, "-P", "-m", "rules_hosts", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout else None


def _decision(answer: dict | None) -> str | None:
    return None if answer is None else answer.get("hookSpecificOutput", {}).get("permissionDecision")


@pytest.mark.parametrize("settings", [
    'disable = ["**"]\n', 'disable = ["aws-keys"]\n', 'disable = ["rule://aws-keys"]\n',
    '[plugins]\nblock = ["stream"]\n', '[plugins]\nblock = ["global", "stream", "schema-v1"]\n',
    '[hosts.claude-code]\ndisable = ["*"]\n[hosts.claude-code.plugins]\nblock = ["stream"]\n',
])
def test_a_projects_settings_cannot_switch_off_the_users_deny(rule_project, settings):
    rule_project.write_global({"aws-keys.md": rule_text("Never write AWS keys.", condition=AWS)})
    rule_project.write({".pi/rules.toml": settings})
    answer = _pre_tool_use(rule_project)
    assert _decision(answer) == "deny"
    assert "aws-keys" in answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_same_line_in_the_users_own_file_does_switch_it_off(rule_project):
    # Positive control: the user may narrow their own rules.
    rule_project.write_global({"aws-keys.md": rule_text("Never write AWS keys.", condition=AWS)})
    make_rules(rule_project.home / ".config" / "pi-rules", {"config.toml": 'disable = ["aws-keys"]\n'})
    assert _decision(_pre_tool_use(rule_project)) != "deny"


def _report(rule_project, capsys) -> dict[str, str]:
    main(["--cwd", str(rule_project.cwd), "--json", "report", "--no-branch"])
    return {r["id"]: r["status"] for r in json.loads(capsys.readouterr().out)["rules"]}


@pytest.fixture
def both(rule_project, monkeypatch):
    for name in [n for n in os.environ if n.startswith("PI_RULES_")] + ["XDG_CONFIG_HOME"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(rule_project.home))
    make_rules(rule_project.home, {".cursor/rules/mine.mdc": "---\nalwaysApply: true\n---\nMine.\n"})
    rule_project.write({".cursor/rules/theirs.mdc": "---\nalwaysApply: true\n---\nTheirs.\n",
                        ".pi/rules/local.md": rule_text("Local.", alwaysApply=True)})
    return rule_project


@pytest.mark.parametrize("settings", ['import = "none"\n', 'import = ["claude"]\n', '[plugins]\nblock = ["cursor"]\n'])
def test_a_project_cannot_un_import_the_users_imported_rules(both, capsys, settings):
    both.write({".pi/rules.toml": settings})
    statuses = _report(both, capsys)
    assert statuses.get("mine") == "active"  # the user's own ~/.cursor rule
    assert "theirs" not in statuses  # the project's narrowing still applies to its own files


def test_a_project_disables_its_own_rules(both, capsys):
    both.write({".pi/rules.toml": 'disable = ["**"]\n'})
    statuses = _report(both, capsys)
    assert statuses["local"] == "inactive" and statuses["theirs"] == "inactive" and statuses["mine"] == "active"


def test_a_projects_block_of_a_non_importer_is_an_error_of_the_file(both, capsys):
    both.write({".pi/rules.toml": '[plugins]\nblock = ["stream"]\n'})
    code = main(["--cwd", str(both.cwd), "check"])
    out = capsys.readouterr().out
    assert code == 1
    assert "invalid-value .pi/rules.toml: line 2: plugins.block names 'stream': a project may block " \
           "only importers" in out
