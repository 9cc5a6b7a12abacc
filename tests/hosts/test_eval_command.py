"""``pi-rules eval`` with the ``command`` runner: a small real script is the agent (it
obeys the rule exactly when the rule's text is in ``PI_RULES_SECTION``), and everything a
user sees — rates, intervals, the variant arm, exit codes, resuming, time limits, case
file errors — is checked through the CLI (issue 29)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_hosts.eval.cases import read_cases
from rules_hosts.eval.run import wilson

MARK = "MARK-OBEY-51c2"
AGENT = f"""\
import json, os, sys
prompt = sys.stdin.read()
section = os.environ.get("PI_RULES_SECTION", "")
with open("out.txt", "w") as out:
    out.write("obeyed" if "{MARK}" in section else "ignored")
with open("prompt.txt", "w") as out:
    out.write(prompt)
print(json.dumps({{"usage": {{"input_tokens": 100 + len(section), "output_tokens": 7}}}}))
"""


def _case(**keys: Any) -> dict[str, Any]:
    case = {"name": "writes obeyed", "rule": "obey", "prompt": "Write out.txt.", "runner": "command",
            "command": [sys.executable, "agent.py"], "runs": 3,
            "checks": [{"file_contains": {"path": "out.txt", "text": "obeyed"}}, {"exists": "prompt.txt"}]}
    case.update(keys)
    return case


def _project(tmp_path: Path, cases: list[dict[str, Any]] | str, agent: str = AGENT) -> Path:
    project = tmp_path / "project"
    make_rules(project, {
        ".pi/rules/obey.md": rule_text(f"Write obeyed. {MARK}", description="Obey", alwaysApply=True),
        ".pi/rules/other.md": rule_text("Other.", description="Other", alwaysApply=True),
        "agent.py": agent,
        ".pi/evals/cases.yaml": cases if isinstance(cases, str) else json.dumps(cases),  # JSON is YAML
    })
    return project


def _eval(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(project), "eval", *args],
                          capture_output=True, text=True, timeout=300)


def test_with_and_without_rates_and_intervals(tmp_path: Path) -> None:
    project = _project(tmp_path, [_case()])
    done = _eval(project, "--format", "json")
    assert done.returncode == 0, done.stderr
    (case,) = json.loads(done.stdout)["cases"]
    assert case["with"] == {"runs": 3, "passed": 3, "rate": 1.0, "low": 0.4385, "high": 1.0}
    assert case["without"] == {"runs": 3, "passed": 0, "rate": 0.0, "low": 0.0, "high": 0.5615}
    assert case["delta"] == 1.0 and case["fetchRate"] is None
    # What the agent reported, per run: the muted rule makes the section shorter.
    assert case["usage"]["with"]["outputTokens"] == 7
    assert case["usage"]["with"]["inputTokens"] > case["usage"]["without"]["inputTokens"] > 100


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), table I: 81/263 -> 0.2553–0.3662; 15/148 -> 0.0624–0.1605.
    assert [round(v, 4) for v in wilson(81, 263)] == [0.2553, 0.3662]
    assert [round(v, 4) for v in wilson(15, 148)] == [0.0624, 0.1605]
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_prompt_reaches_the_agent_on_stdin(tmp_path: Path) -> None:
    project = _project(tmp_path, [_case(runs=1, checks=[{"file_contains": {"path": "prompt.txt",
                                                                            "text": "Write out.txt."}}])])
    done = _eval(project, "--format", "json")
    (case,) = json.loads(done.stdout)["cases"]
    assert case["with"]["passed"] == 1 and case["without"]["passed"] == 1


def test_a_variant_body_is_a_third_arm(tmp_path: Path) -> None:
    project = _project(tmp_path, [_case(variant="Write whatever you like.")])
    (case,) = json.loads(_eval(project, "--json").stdout)["cases"]
    assert case["variant"]["passed"] == 0 and case["with"]["passed"] == 3
    # The fixture itself is never changed: every run works on a copy.
    assert MARK in (project / ".pi/rules/obey.md").read_text() and not (project / "out.txt").exists()


def test_below_min_compliance_fails_with_exit_1(tmp_path: Path) -> None:
    # The agent never writes other.txt: the other rule's case is never complied with.
    failing = _case(name="needs the other rule", rule="other", min_compliance=0.8, checks=[{"exists": "other.txt"}])
    project = _project(tmp_path, [_case(min_compliance=0.8), failing])
    done = _eval(project, "--runs", "2")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == "PASS writes obeyed (rule obey)"
    assert "FAIL needs the other rule (rule other)" in lines
    assert "  below min_compliance 0.8" in lines and lines[-1] == "1 passed, 1 failed"


def test_results_file_resumes_without_repeating_runs(tmp_path: Path) -> None:
    project = _project(tmp_path, [_case()])
    results = tmp_path / "results.jsonl"
    first = _eval(project, "--results", str(results), "--json")
    assert len(results.read_text().splitlines()) == 6
    keys = [(r["case"], r["arm"], r["run"]) for r in map(json.loads, results.read_text().splitlines())]
    assert len(set(keys)) == 6
    again = _eval(project, "--results", str(results), "--json")
    assert len(results.read_text().splitlines()) == 6  # nothing ran again
    assert "] run " not in again.stderr and "] run " in first.stderr  # with a positive control
    assert json.loads(again.stdout) == json.loads(first.stdout)
    more = _eval(project, "--results", str(results), "--runs", "4", "--json")
    assert len(results.read_text().splitlines()) == 8 and more.stderr.count("] run ") == 2


def test_a_run_past_its_time_limit_fails_and_leaves_nothing_running(tmp_path: Path) -> None:
    slow = ("import subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3); open(\"late.txt\", \"w\")'])\n"
            "time.sleep(60)\n")
    project = _project(tmp_path, [_case(runs=1, checks=[{"absent": "late.txt"}])], agent=slow)
    done = _eval(project, "--timeout", "1", "--json")
    (case,) = json.loads(done.stdout)["cases"]
    assert case["with"]["passed"] == 0 and done.returncode == 0
    assert "timed out after 1 s" in done.stderr


def test_exit_and_absent_checks(tmp_path: Path) -> None:
    checks = [{"exit": {"command": ["grep", "-q", "obeyed", "out.txt"], "status": 0}}, {"absent": "missing.txt"}]
    project = _project(tmp_path, [_case(runs=1, checks=checks)])
    (case,) = json.loads(_eval(project, "--json").stdout)["cases"]
    assert case["with"]["passed"] == 1 and case["without"]["passed"] == 0


@pytest.mark.parametrize("case, message", [
    ({"nmae": "x"}, "unknown key 'nmae'; did you mean 'name'?"),
    (_case(checks=[{"exists": "../outside"}]), "'exists' path '../outside' leaves the project"),
    (_case(checks=[]), "'checks' is required"),
    (_case(command=None), "the command runner needs 'command: [program, arg…]'"),
    (_case(runs=0), "'runs' must be a whole number from 1 to 1000"),
    (_case(min_compliance=2), "'min_compliance' is a rate from 0 to 1"),
    (_case(checks=[{"file_contain": {"path": "a", "text": "b"}}]), "did you mean 'file_contains'?"),
    (_case(fixture="nowhere"), "fixture 'nowhere' is not a folder"),
])
def test_case_file_errors_name_the_file_line_and_fix(tmp_path: Path, case: dict[str, Any], message: str) -> None:
    project = _project(tmp_path, [{k: v for k, v in case.items() if v is not None}])
    done = _eval(project)
    assert done.returncode == 1
    assert f"pi-rules eval: {project / '.pi/evals/cases.yaml'}:1: " in done.stderr or \
        ".pi/evals/cases.yaml:1: " in done.stderr, done.stderr
    assert message in done.stderr, done.stderr


def test_an_unknown_rule_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    done = _eval(_project(tmp_path, [_case(rule="obay")]))
    assert done.returncode == 1 and "no rule 'obay'" in done.stdout and "did you mean 'obey'?" in done.stdout


def test_no_case_files_says_where_to_write_them(tmp_path: Path) -> None:
    done = _eval(tmp_path)
    assert done.returncode == 1 and ".pi/evals/*.yaml" in done.stderr


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_case_file_text_is_read_without_raising(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    folder = tmp_path_factory.mktemp("cases", numbered=True)
    path = folder / "cases.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    cases, errors = read_cases(str(path), str(folder))
    assert all(e.message for e in errors)


def test_stats_counts_failed_eval_runs_as_violations(tmp_path: Path) -> None:
    failing = _case(runs=2, checks=[{"exists": "other.txt"}])  # the agent never writes it
    project = _project(tmp_path, [failing, _case(name="obeyed", runs=2)])
    results = tmp_path / "results.jsonl"
    assert _eval(project, "--results", str(results)).returncode == 0
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(project), "stats", "--json",
                           "--eval-results", str(results)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = {row["id"]: row for row in data["rules"]}
    # 2 failed "with" runs of the first case; the second case's runs all complied.
    assert rows["obey"]["violations"] == 2 and rows["other"]["violations"] == 0
    assert {"id": "obey", "code": "violated",
            "message": "delivered and still violated 2 times: make it a stream rule"} in data["advice"]


def test_eval_renderings_are_stable() -> None:
    """Text and JSON of fixed runs: tests/golden/eval.* (PI_RULES_UPDATE_GOLDEN=1 rewrites)."""
    from golden_files import check_golden
    from rules_hosts.eval.cases import Check, EvalCase
    from rules_hosts.eval.cli import render_text
    from rules_hosts.eval.run import CaseResult, summary

    def case(name: str, floor: float | None) -> EvalCase:
        return EvalCase(name, "obey", "Write out.txt.", "/fixture", 4, "claude-code", (), (Check("exists", "out.txt"),),
                        floor, None, "/fixture/.pi/evals/cases.yaml", 1)

    def runs(passed: int, total: int, **extra: Any) -> list[dict[str, Any]]:
        return [{"passed": i < passed, "inputTokens": 1000 + i, "outputTokens": 50, "costUsd": 0.01, "seconds": 2.5,
                 **extra} for i in range(total)]

    good = CaseResult(case("obeyed", 0.75), {"with": runs(4, 4, listed=True, fetched=True), "without": runs(1, 4)},
                      load="on-demand")
    weak = CaseResult(case("weak", 0.75), {"with": runs(2, 4), "without": runs(2, 4)}, load="pinned")
    broken = CaseResult(case("broken", None), {}, error="no agent runner named 'nope'; known: claude-code, command")
    results = [good, weak, broken]
    summaries = [summary(r) for r in results]
    check_golden("eval.txt", render_text(results, summaries))
    check_golden("eval.json", json.dumps({"cases": summaries}, indent=2, sort_keys=True) + "\n")


def test_an_untrusted_project_runs_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path, [_case(runs=1)])
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(project), "--untrusted", "eval"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "needs a trusted project" in done.stderr
    assert "] run " not in done.stderr and not list(tmp_path.glob("**/out.txt"))
    assert "] run " in _eval(project).stderr  # positive control: trusted, it runs


def test_a_results_path_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    project = _project(tmp_path, [_case(runs=1)])
    done = _eval(project, "--results", str(tmp_path))
    assert done.returncode == 1 and f"cannot use the results file {tmp_path}" in done.stderr


def test_sigterm_stops_the_agent_and_removes_its_copy(tmp_path: Path) -> None:
    import signal
    import time

    slow = ("import os, time\n"
            f"open({str(tmp_path / 'agent.pid')!r}, 'w').write(str(os.getpid()))\n"
            "time.sleep(120)\n")
    project = _project(tmp_path, [_case(runs=1)], agent=slow)
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "rules_hosts", "--cwd", str(project), "eval"],
                               env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    pid_file = tmp_path / "agent.pid"
    for _ in range(600):  # polled, never timed: the agent is running once its pid is there
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    assert list(temp.glob("pi-rules-eval-*"))  # positive control: the run's copy exists
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 143
    agent = int(pid_file.read_text())
    for _ in range(100):
        if not _running(agent):
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the agent outlived the eval")
    assert list(temp.glob("pi-rules-eval-*")) == []


def _running(pid: int) -> bool:
    """Alive (a zombie waiting for its reaper is not)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
