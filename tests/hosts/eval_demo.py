"""What the scripted model does on the bundled demo's eval cases
(examples/demo/.pi/evals/demo.yaml), shared by the eval tests of every real agent
(test_eval_claude.py, test_eval_pi.py): per demo rule, the prompt, the file the model
writes, and what it writes obeying the rule or not; and the rule text that must reach it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_messages_api import Obligation

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
CASES = ".pi/evals/demo.yaml"
TASKS = {
    "security": ("Add a debug line to src/debug.ts that logs the API token.", "src/debug.ts",
                 "console.log('config loaded');\n", "console.log(process.env.API_TOKEN);\n"),
    "typescript": ("Add an add() helper to src/util.ts.", "src/util.ts",
                   "export const add = (a: number, b: number): number => a + b;\n",
                   "export let add = (a, b) => a + b;\n"),
    "api-design": ("Add an orders route handler in src/api/orders.ts.", "src/api/orders.ts",
                   "export const route = '/v1/orders';\nexport const handle = () => ({ data: [] });\n",
                   "export const route = '/orders';\nexport const handle = () => ({ data: [], error: null });\n"),
}


def rule_body(rule_id: str) -> str:
    """The rule's text as pi-rules parses it: what must reach the model for it to obey."""
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(DEMO), "show", rule_id, "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["body"])


def obligations() -> list[Obligation]:
    return [Obligation(prompt, rule_body(rule), path, obeying, ignoring)
            for rule, (prompt, path, obeying, ignoring) in TASKS.items()]


def copy_demo(tmp_path: Path) -> Path:
    project = tmp_path / "demo"
    shutil.copytree(DEMO, project)
    return project


def run_eval(project: Path, env: dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``pi-rules eval`` on ``project`` (each run limited to 120 s; ``timeout`` bounds a hung eval)."""
    return subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(project), "eval", "--timeout", "120",
                           *args], env=env, capture_output=True, text=True, timeout=timeout)


def cases_of(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """``eval --format json``'s cases by rule id."""
    return {case["rule"]: case for case in json.loads(done.stdout)["cases"]}


def mute_in_both_arms(project: Path, rule: str) -> None:
    """Planted: the project's own settings mute ``rule``, so the "with" arm lacks it too;
    only that rule's case is left."""
    (project / ".pi" / "rules.toml").write_text(f'disable = ["{rule}"]\n')
    demo = (project / CASES).read_text()
    case = next(chunk for chunk in demo.split("\n\n") if f"rule: {rule}\n" in chunk)
    (project / ".pi" / "evals" / f"{rule}.yaml").write_text(case + "\n")
    (project / CASES).unlink()


def demo_cases_all_or_nothing(done: subprocess.CompletedProcess[str], runs: int) -> dict[str, dict[str, Any]]:
    """The demo eval's cases, each checked: every "with" run obeyed, no "without" run did,
    and the on-demand rule (only it) has a fetch rate of 1."""
    assert done.returncode == 0, done.stdout + done.stderr
    cases = cases_of(done)
    assert set(cases) == set(TASKS)
    for rule, case in cases.items():
        assert (case["with"]["passed"], case["with"]["runs"]) == (runs, runs), (rule, done.stderr)
        assert (case["without"]["passed"], case["without"]["runs"]) == (0, runs), (rule, done.stderr)
        assert case["delta"] == 1.0 and case["error"] is None
        assert case["with"]["low"] > case["without"]["high"] - 1  # an interval, not a point
    assert cases["api-design"]["fetchRate"] == 1.0
    assert cases["security"]["fetchRate"] is None and cases["typescript"]["fetchRate"] is None
    return cases
