"""Drive ``pi-rules hook claude-code`` as Claude Code does: one real subprocess per hook
event, one JSON payload on stdin (shared by test_claude_code_facts.py and _once.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rules_core.rule_tests.pytest_plugin import make_rules

SID = "7a2b3c4d-0000-4000-8000-00000000feed"


class ClaudeDriver:
    """One Claude Code session: a git project, a HOME, a state dir and a payload runner."""

    sid = SID

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.cwd = tmp_path / "project"
        self.home = tmp_path / "home"
        self.state = tmp_path / "state"
        for d in (self.cwd, self.home, self.state):
            d.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.cwd)], check=True)
        # PI_RULES_HOOK_SERVER stays: the suite runs the hook in process (tests/conftest.py).
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_") or k == "PI_RULES_HOOK_SERVER"}
        self.env.update(HOME=str(self.home), XDG_STATE_HOME=str(self.state))

    def write(self, files: dict[str, str | bytes]) -> None:
        make_rules(self.cwd, files)

    def raw(self, data: str | bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
        """One hook process fed ``data`` as is (hostile payloads included)."""
        return subprocess.run(
            [sys.executable, "-m", "rules_hosts", "hook", "claude-code", *args],
            input=data.encode() if isinstance(data, str) else data,
            capture_output=True, env=self.env, cwd=str(self.tmp), timeout=60,
        )

    def send(self, event: str, sid: str | None = None, **fields: Any) -> dict[str, Any] | None:
        payload = {"session_id": sid or self.sid, "cwd": str(self.cwd), "hook_event_name": event,
                   "transcript_path": str(self.home / "t.jsonl"), **fields}
        done = self.raw(json.dumps(payload))
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        if not done.stdout:
            return None
        output = json.loads(done.stdout)
        assert output["hookSpecificOutput"]["hookEventName"] == event
        return output

    def context(self, event: str, **fields: Any) -> str | None:
        output = self.send(event, **fields)
        return None if output is None else output["hookSpecificOutput"]["additionalContext"]

    def start(self, source: str = "startup", **fields: Any) -> str | None:
        return self.context("SessionStart", source=source, **fields)

    def prompt(self, text: str, **fields: Any) -> str | None:
        return self.context("UserPromptSubmit", prompt=text, **fields)

    def tool(self, name: str, tool_input: dict[str, Any], response: Any = None, **fields: Any) -> str | None:
        """PreToolUse then PostToolUse of one call (successful unless ``response`` says
        otherwise); the PostToolUse context."""
        assert self.send("PreToolUse", tool_name=name, tool_input=tool_input, **fields) is None
        if response is None:
            response = {"filePath": tool_input.get("file_path"), "success": True}
        return self.context("PostToolUse", tool_name=name, tool_input=tool_input, tool_response=response, **fields)

    def path(self, relative: str) -> str:
        return str(self.cwd / relative)

    def state_file(self, sid: str | None = None) -> Path:
        return self.state / "pi-rules" / "claude-code" / f"{sid or self.sid}.jsonl"

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.state_file().read_text().splitlines() if line.strip()]

    def portable(self, text: str) -> str:
        """``text`` with this run's project folder as ``<project>`` (golden files)."""
        return text.replace(str(self.cwd), "<project>")


def ids(text: str | None) -> list[str]:
    """The rule ids of a section or block, in order (``## <id>`` headings)."""
    return [line[3:] for line in (text or "").splitlines() if line.startswith("## ") and "Rules" not in line]
