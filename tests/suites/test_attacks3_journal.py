"""Issue 26, attack 4: the Claude Code journal is bounded per event and compacts itself,
and when state cannot be read or written the deny still decides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.claude_code import state as state_module

AWS = "AKIA[0-9A-Z]{16}"
SESSION = "s-26"


def _hook(project, payload: dict) -> tuple[dict | None, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    env.update(HOME=str(project.home), XDG_STATE_HOME=str(project.home / "state"), PI_RULES_HOOK_SERVER="off")
    payload = {"session_id": SESSION, "cwd": str(project.cwd), **payload}
    done = subprocess.run([sys.executable, "-P", "-m", "rules_hosts", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=120)
    assert done.returncode == 0
    return (json.loads(done.stdout) if done.stdout else None), done.stderr.decode()


def _journal(project) -> Path:
    return project.home / "state" / "pi-rules" / "claude-code" / f"{SESSION}.jsonl"


def _write_key(project) -> dict | None:
    return _hook(project, {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {
        "file_path": str(project.cwd / "config.py"), "content": "key = 'AKIAABCDEFGHIJKLMNOP'\n"}})[0]


def _big_project(project) -> None:
    # A 12 MB section: what any max_tokens a project sets lets through.
    project.write({".pi/rules.toml": "max_tokens = 100000000\n"})
    project.write({f".pi/rules/big{i}.md": rule_text(f"{i} " + "word " * 200_000, alwaysApply=True)
                   for i in range(12)})
    project.write_global({"aws-keys.md": rule_text("Never write AWS keys.", condition=AWS)})


def test_five_session_starts_with_a_huge_section_keep_the_journal_small_and_the_deny(rule_project):
    _big_project(rule_project)
    for source in ("startup", "clear", "compact", "resume", "clear"):
        answer, _ = _hook(rule_project, {"hook_event_name": "SessionStart", "source": source})
        assert answer is not None and len(answer["hookSpecificOutput"]["additionalContext"]) > 12_000_000
    size = _journal(rule_project).stat().st_size
    assert size < 64 * 1024  # was: ~12 MB per event, 60 MB after five, refused after the sixth
    answer = _write_key(rule_project)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_unchanged_huge_section_is_not_delivered_twice(rule_project):
    _big_project(rule_project)
    first, _ = _hook(rule_project, {"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    again, _ = _hook(rule_project, {"hook_event_name": "UserPromptSubmit", "prompt": "and again"})
    assert first is not None and again is None  # positive control and the digest at work


def test_a_state_file_over_the_cap_is_set_aside_and_the_deny_still_decides(rule_project):
    rule_project.write_global({"aws-keys.md": rule_text("Never write AWS keys.", condition=AWS)})
    journal = _journal(rule_project)
    journal.parent.mkdir(parents=True)
    with open(journal, "wb") as handle:  # sparse: 64 MiB + 1 of zeros
        handle.truncate(state_module.MAX_STATE + 1)
    answer, stderr = _hook(rule_project, {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {
        "file_path": str(rule_project.cwd / "config.py"), "content": "key = 'AKIAABCDEFGHIJKLMNOP'\n"}})
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "set aside" in stderr and Path(str(journal) + ".over").exists()


def test_an_unwritable_journal_still_denies(rule_project):
    rule_project.write_global({"aws-keys.md": rule_text("Never write AWS keys.", condition=AWS)})
    journal = _journal(rule_project)
    journal.mkdir(parents=True)  # a directory where the file goes: nothing can be appended
    answer = _write_key(rule_project)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_long_journal_compacts_to_what_it_folds_to(tmp_path):
    path = str(tmp_path / "s.jsonl")
    journal = state_module.Journal(path, lambda message: None)
    for round_ in range(3000):
        journal.append({"type": state_module.SECTION_TYPE, "text": "x" * 2000 + str(round_)})
        journal.append({"type": state_module.DELIVERED_TYPE, "ids": [f"r{round_ % 50}"]})
    assert os.path.getsize(path) > state_module.COMPACT_AT
    before = state_module.load(path)
    state_module.load(path, compact=True)
    after = state_module.load(path)
    assert os.path.getsize(path) < 8 * 1024
    assert (after.section, after.delivered) == (before.section, before.delivered)
