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
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from eval_demo import cases_of, copy_demo, demo_cases_all_or_nothing, mute_in_both_arms, obligations, run_eval
from fake_messages_api import RuleFollowingAPI
from claude_real import ProxyTrap, claude_binary  # one place locates the pinned client

TIMEOUT = 300


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment under which ``pi-rules eval`` drives the pinned client against the
    rule-following model, offline."""
    binary = claude_binary()
    with RuleFollowingAPI(obligations=obligations()) as api, ProxyTrap() as trap:
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


def test_demo_rules_are_obeyed_with_and_ignored_without(agent: dict[str, str], tmp_path: Path) -> None:
    done = run_eval(copy_demo(tmp_path), agent, "--runs", "2", "--format", "json")
    # The on-demand rule was listed and then read in every "with" run; pinned rules have no rate.
    cases = demo_cases_all_or_nothing(done, 2)
    for case in cases.values():  # the client reports its usage for every run
        assert case["usage"]["with"]["inputTokens"] > 0 and case["usage"]["with"]["outputTokens"] > 0


def test_a_rule_that_is_not_delivered_fails_its_case(agent: dict[str, str], tmp_path: Path) -> None:
    project = copy_demo(tmp_path)
    mute_in_both_arms(project, "security")
    done = run_eval(project, agent, "--runs", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "FAIL a debug line never logs the token (rule security)"
    assert "  with     0/2 0%" in done.stdout and "below min_compliance 0.8" in done.stdout
    # Positive control: the same project without the planted mute passes.
    (project / ".pi" / "rules.toml").unlink()
    again = run_eval(project, agent, "--runs", "1")
    assert again.returncode == 0 and again.stdout.startswith("PASS "), again.stdout + again.stderr


def test_an_interrupted_eval_resumes_without_repeating_a_run(agent: dict[str, str], tmp_path: Path) -> None:
    project = copy_demo(tmp_path)
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
    assert all(c["with"]["passed"] == 1 and c["without"]["passed"] == 0 for c in cases_of(done).values())


def _records(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a results file (a killed eval may leave its last one torn)."""
    found: list[dict[str, Any]] = []
    for line in (path.read_bytes() if path.exists() else b"").splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found

