"""``pi-rules eval`` on the bundled demo with the real ``claude`` binary (issue 29).

The scripted Messages API plays a model that obeys a rule exactly when the rule's text
reached it and reads an on-demand rule when its index line is there
(``fake_messages_api.RuleFollowingAPI``), so what ``eval`` measures is whether pi-rules
delivered each rule: ~100% with it, ~0% without it, and a failed case when delivery is
broken. Each run is a real ``claude -p`` with the hooks installed in a throw-away copy.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from fake_messages_api import Obligation, RuleFollowingAPI
from claude_real import ProxyTrap, claude_binary  # one place locates the pinned client

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
CASES = ".pi/evals/demo.yaml"
TIMEOUT = 300
# What the scripted model writes for each demo case, obeying the rule or not.
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


def _rule_body(rule_id: str) -> str:
    """The rule's text as pi-rules parses it: what must reach the model for it to obey."""
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(DEMO), "show", rule_id, "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["body"]


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment under which ``pi-rules eval`` drives the pinned client against the
    rule-following model, offline."""
    binary = claude_binary()
    obligations = [Obligation(prompt, _rule_body(rule), path, obeying, ignoring)
                   for rule, (prompt, path, obeying, ignoring) in TASKS.items()]
    with RuleFollowingAPI(obligations=obligations) as api, ProxyTrap() as trap:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PI_RULES_"))}
        env.update(
            PI_RULES_EVAL_CLAUDE=binary, PI_RULES_EVAL_CLAUDE_ARGS="--model claude-sonnet-4-5",
            ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1", DISABLE_BUG_COMMAND="1",
            HTTPS_PROXY=trap.url, HTTP_PROXY=trap.url, https_proxy=trap.url, http_proxy=trap.url,
            NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
        )
        yield env
        assert trap.attempts == []


def _demo(tmp_path: Path) -> Path:
    project = tmp_path / "demo"
    shutil.copytree(DEMO, project)
    return project


def _eval(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(project), "eval", "--timeout", "120",
                           *args], env=env, capture_output=True, text=True, timeout=TIMEOUT * 3)


def _cases(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    return {case["rule"]: case for case in json.loads(done.stdout)["cases"]}


def test_demo_rules_are_obeyed_with_and_ignored_without(agent: dict[str, str], tmp_path: Path) -> None:
    done = _eval(_demo(tmp_path), agent, "--runs", "2", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    cases = _cases(done)
    assert set(cases) == set(TASKS)
    for rule, case in cases.items():
        assert (case["with"]["passed"], case["with"]["runs"]) == (2, 2), (rule, done.stderr)
        assert (case["without"]["passed"], case["without"]["runs"]) == (0, 2), (rule, done.stderr)
        assert case["delta"] == 1.0
        assert case["with"]["low"] > case["without"]["high"] - 1  # an interval, not a point
        # The client reports its usage for every run.
        assert case["usage"]["with"]["inputTokens"] > 0 and case["usage"]["with"]["outputTokens"] > 0
    # The on-demand rule was listed and then read in every "with" run; pinned rules have no rate.
    assert cases["api-design"]["fetchRate"] == 1.0
    assert cases["security"]["fetchRate"] is None and cases["typescript"]["fetchRate"] is None


def test_a_rule_that_is_not_delivered_fails_its_case(agent: dict[str, str], tmp_path: Path) -> None:
    project = _demo(tmp_path)
    # Planted: the project's own settings mute the rule, so the "with" arm lacks it too.
    (project / ".pi" / "rules.toml").write_text('disable = ["security"]\n')
    cases = project / ".pi" / "evals" / "security.yaml"
    demo = (project / CASES).read_text()
    cases.write_text(demo.split("\n\n")[0] + "\n")
    (project / CASES).unlink()
    done = _eval(project, agent, "--runs", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "FAIL a debug line never logs the token (rule security)"
    assert "  with     0/2 0%" in done.stdout and "below min_compliance 0.8" in done.stdout
    # Positive control: the same project without the planted mute passes.
    (project / ".pi" / "rules.toml").unlink()
    again = _eval(project, agent, "--runs", "1")
    assert again.returncode == 0 and again.stdout.startswith("PASS "), again.stdout + again.stderr


def test_an_interrupted_eval_resumes_without_repeating_a_run(agent: dict[str, str], tmp_path: Path) -> None:
    project = _demo(tmp_path)
    results = tmp_path / "results.jsonl"
    argv = [sys.executable, "-m", "rules_hosts", "--cwd", str(project), "eval", "--timeout", "120", "--runs", "1",
            "--results", str(results), "--format", "json"]
    first = subprocess.Popen(argv, env=agent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        while len(_records(results)) < 2 and first.poll() is None:
            time.sleep(0.2)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # mid-way: the eval and the agent it runs
        first.wait()
    before = len(_records(results))
    assert 2 <= before < 6
    kept = results.read_bytes()
    done = subprocess.run(argv, env=agent, capture_output=True, text=True, timeout=TIMEOUT * 3)
    assert done.returncode == 0, done.stdout + done.stderr
    records = _records(results)
    keys = [(r["case"], r["arm"], r["run"]) for r in records]
    # 3 cases x 2 arms x 1 run, each once; the rerun started only the runs not recorded
    # (a run killed before its line was written counts as not recorded).
    assert len(set(keys)) == 6 and len(keys) == 6, keys
    assert results.read_bytes().startswith(kept.rsplit(b"\n", 1)[0])
    started = [line for line in done.stderr.splitlines() if "] run " in line]
    assert len(started) == 6 - before
    assert all(c["with"]["passed"] == 1 and c["without"]["passed"] == 0 for c in _cases(done).values())


def _records(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a results file (a killed eval may leave its last one torn)."""
    found: list[dict[str, Any]] = []
    for line in (path.read_bytes() if path.exists() else b"").splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found

