"""Tokens the Claude Code hook adds to a conversation: each rule once, versus the old re-sends.

Drives the real ``pi-rules hook claude-code`` subprocess through SessionStart and 50
prompts, with tool calls touching new files now and then (a Read or Write, which may
attach, or a Grep, whose rules wait for the next prompt), and sums the tokens — the
engine's own estimator — of every ``additionalContext`` the hook emitted.

"Before" is what the old behaviour sent in the same run: the whole section at every
prompt where it changed (the hook still journals each changed section as a
``pi-rules/section`` record, so the script reads them from the state file), plus the
same attachments. Run: ``python benchmarks/claude_deliver_once.py [--prompts 50]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rules_core.engine.core import Engine
from rules_core.plugins.manager import make_plugin_manager
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

AREAS = ("api", "web", "db", "cli", "docs", "infra", "auth", "jobs", "mail", "search")
SID = "bench-deliver-once"


def _project(root: Path) -> Path:
    cwd = root / "project"
    files = {
        ".pi/rules/always.md": rule_text("Keep changes small and explain them.\n" * 4, alwaysApply=True),
        ".pi/rules/style.md": rule_text("Prefer clear names over comments.\n" * 4, alwaysApply=True),
    }
    for area in AREAS:
        body = f"Conventions for {area}: validate inputs, log failures, test the edges.\n" * 6
        files[f".pi/rules/{area}.md"] = rule_text(body, description=f"{area} rules", globs=[f"{area}/**"])
    make_rules(cwd, files)
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    return cwd


def _send(cwd: Path, env: dict[str, str], event: str, **fields: Any) -> str | None:
    payload = {"session_id": SID, "cwd": str(cwd), "hook_event_name": event, **fields}
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60)
    if done.stderr:
        sys.stderr.write(done.stderr.decode(errors="replace"))
    if not done.stdout:
        return None
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def run(prompts: int) -> dict[str, int]:
    estimate = Engine(make_plugin_manager()).hooks.estimate_tokens
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cwd = _project(root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
        env.update(HOME=str(root), XDG_STATE_HOME=str(root / "state"))
        sent: list[str] = []
        attachments: list[str] = []
        first = _send(cwd, env, "SessionStart", source="startup", model="claude-sonnet-4-5")
        sent += [first] if first else []
        for n in range(prompts):
            text = _send(cwd, env, "UserPromptSubmit", prompt=f"step {n}: carry on")
            sent += [text] if text else []
            if n % 5 == 2:  # now and then the agent reaches a new area of the tree
                area = AREAS[(n // 5) % len(AREAS)]
                tool = ("Read", "Write", "Grep")[(n // 5) % 3]
                args: dict[str, Any] = {"file_path": str(cwd / area / f"f{n}.py"), "content": "x = 1\n"}
                if tool == "Grep":
                    args = {"pattern": "x", "path": str(cwd / area / f"f{n}.py")}
                _send(cwd, env, "PreToolUse", tool_name=tool, tool_input=args)
                block = _send(cwd, env, "PostToolUse", tool_name=tool, tool_input=args,
                              tool_response={"success": True})
                if block:
                    sent.append(block)
                    attachments.append(block)
        journal = root / "state" / "pi-rules" / "claude-code" / f"{SID}.jsonl"
        records = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
        sections = [r["text"] for r in records if r.get("type") == "pi-rules/section" and r["text"]]
    after = sum(estimate(t) for t in sent)
    before = sum(estimate(t) for t in sections) + sum(estimate(t) for t in attachments)
    return {"prompts": prompts, "contexts": len(sent), "sections_before": len(sections),
            "tokens_after": after, "tokens_before": before, "saved": before - after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=50)
    result = run(parser.parse_args().prompts)
    print(json.dumps(result))
    share = result["saved"] / result["tokens_before"] if result["tokens_before"] else 0.0
    print(f"tokens sent: {result['tokens_after']} (old behaviour: {result['tokens_before']}; "
          f"saved {result['saved']}, {share:.0%})")


if __name__ == "__main__":
    main()
