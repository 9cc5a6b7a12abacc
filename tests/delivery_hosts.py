"""The hosts the delivery audit replays its session through (tests/delivery_audit.py):
Claude Code's hook as one real subprocess per event, and Pi as one ``serve`` process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from delivery_layouts import Project, Step, env

PAYLOADS = Path(__file__).resolve().parent / "fixtures" / "claude_code_payloads"


class ClaudeHost:
    """Claude Code: one hook process per event, payloads shaped like the real client's."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.templates = {p.stem: p.read_text() for p in PAYLOADS.glob("*.json")}
        self.calls = 0

    def _payload(self, key: str, **fields: Any) -> dict[str, Any]:
        raw = self.templates[key].replace("/home/user/project", str(self.project.root))
        raw = raw.replace("/home/user", str(self.project.home))
        return {**json.loads(raw), **fields}

    def _send(self, payload: dict[str, Any]) -> str:
        done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"],
                              input=json.dumps(payload), capture_output=True, text=True,
                              env=env(self.project.home), cwd=self.project.home, timeout=60)
        assert done.returncode == 0, f"{self.project.name}: hook {payload['hook_event_name']}: {done.stderr}"
        if not done.stdout.strip():
            return ""
        return str(json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext") or "")

    def run(self, step: Step) -> str:
        if step.kind in ("start", "compact"):
            return self._send(self._payload("SessionStart", source="startup" if step.kind == "start" else "compact"))
        if step.kind == "prompt":
            return self._send(self._payload("UserPromptSubmit", prompt=step.arg))
        self.calls += 1
        path = str(self.project.root / step.arg)
        call = f"toolu_audit{self.calls:02d}"
        tool = "Read" if step.kind == "read" else "Write"
        content = f"// written by the audit, step {self.calls}\n"
        tool_input = {"file_path": path} if tool == "Read" else {"file_path": path, "content": content}
        pre = self._send(self._payload(f"PreToolUse-{tool}", tool_input=tool_input, tool_use_id=call))
        if tool == "Write":
            Path(path).write_text(content)
            response: dict[str, Any] = {"type": "update", "filePath": path, "content": content,
                                        "structuredPatch": [], "originalFile": "", "userModified": False}
        else:
            response = {"type": "text", "file": {"filePath": path, "content": "", "numLines": 1, "startLine": 1,
                                                 "totalLines": 1}}
        post = self._send(self._payload(f"PostToolUse-{tool}", tool_input=tool_input, tool_response=response,
                                        tool_use_id=call))
        return "\n".join(t for t in (pre, post) if t)

    def close(self) -> None:
        pass


class PiHost:
    """Pi: one ``serve --host pi`` process; the section is replaced each turn, tool results
    carry mid-run attachments."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.proc = subprocess.Popen([sys.executable, "-m", "rules_hosts", "serve", "--host", "pi"],
                                     cwd=project.root, env=env(project.home), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.ids = 0
        self.section = ""

    def call(self, method: str, **params: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids += 1
        self.proc.stdin.write(json.dumps({"id": self.ids, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert "result" in answer, f"{self.project.name}: serve {method}: {answer}"
        return answer["result"]

    def run(self, step: Step) -> str:
        if step.kind == "start":
            self.call("session_start", reason="startup", entries=[])
            return ""
        if step.kind == "compact":
            self.call("compact")
            return ""
        if step.kind == "prompt":
            turn = self.call("before_agent_start", prompt=step.arg, model=None, tools=["read", "write", "edit"])
            if turn["action"] == "patch":
                self.section = turn["section"]
            elif turn["action"] == "remove":
                self.section = ""
            return ""
        tool = "read" if step.kind == "read" else "write"
        self.call("tool_start", tool=tool, args={"path": step.arg})
        if tool == "write":
            (self.project.root / step.arg).write_text("// written by the audit\n")
        parts = [{"type": "text", "text": "ok"}]
        effect = self.call("tool_result", tool=tool, content=parts, is_error=False)
        added = (effect.get("content") or parts)[len(parts):]
        return "\n".join(str(p.get("text", "")) for p in added)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
