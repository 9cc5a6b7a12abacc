"""``pi-rules eval --runner pi`` on the bundled demo with the real Pi 1.6.0 (issue 29).

Each run is a real ``pi --mode json`` (Pi 1.6.0 under Node 22, as .ci/install-pi installs
them) with the pi-rules extension loaded for that run, talking to the scripted Messages
API through Pi's own ``anthropic`` provider (its base URL moved to 127.0.0.1 by a
``models.json``). The scripted model (``PiRuleFollowingAPI``) obeys a rule exactly when
the rule's text reached it and fetches an on-demand rule with Pi's ``read_rule`` tool
when its index line is there, so what ``eval`` measures is whether pi-rules delivered each
rule through Pi: ~100% with it, ~0% without it, and a failed case when it is not delivered.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from claude_real import ProxyTrap
from eval_demo import cases_of, copy_demo, demo_cases_all_or_nothing, mute_in_both_arms, obligations, run_eval
from fake_messages_api import Obligation, RuleFollowingAPI
from pi_driver import EXTENSION, install, pi_command

NEEDS_NODE = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are needed to install and run Pi (the real-Pi eval tests run in .ci/run)",
)
# CONTRACT §6's on-demand index line, as the Pi host words it.
_PI_INDEX_LINE = re.compile(r"^- (\S+) — .*\(fetch with the read_rule tool\)$", re.M)


class PiRuleFollowingAPI(RuleFollowingAPI):
    """``RuleFollowingAPI`` with Pi's tools: it fetches every rule the on-demand index
    lists with ``read_rule {path}``, then writes each obligation's file with ``write {path,
    content}`` (relative to Pi's cwd), obeying when the rule's text has reached it."""

    index_line = _PI_INDEX_LINE
    fetch_tool = ("read_rule", "path")
    write_tool = ("write", "path", "content")
    call_suffix = "pirules"

    def target(self, seen: str, task: Obligation) -> str | None:
        return task.path


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment under which ``eval --runner pi`` drives Pi 1.6.0 against the
    rule-following model, offline: every other request goes to a proxy that refuses it."""
    install()
    models = tmp_path_factory.mktemp("pi-models") / "models.json"
    with PiRuleFollowingAPI(obligations=obligations()) as api, ProxyTrap() as trap:
        models.write_text(json.dumps({"providers": {"anthropic": {"baseUrl": api.url}}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PI_RULES_", "PI_CODING_"))}
        env.update(
            PI_RULES_EVAL_PI=shlex.join(pi_command("1.6.0")), PI_RULES_EVAL_PI_EXTENSION=str(EXTENSION),
            PI_RULES_EVAL_PI_MODELS=str(models),
            PI_RULES_EVAL_PI_ARGS="--provider anthropic --model claude-sonnet-4-5 --thinking off",
            ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
            HTTPS_PROXY=trap.url, HTTP_PROXY=trap.url, https_proxy=trap.url, http_proxy=trap.url,
            NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
        )
        yield env
        assert trap.attempts == []


@NEEDS_NODE
def test_demo_rules_are_obeyed_through_pi_with_and_ignored_without(agent: dict[str, str], tmp_path: Path) -> None:
    done = run_eval(copy_demo(tmp_path), agent, "--runner", "pi", "--runs", "2", "--format", "json")
    # The on-demand rule was listed and fetched with read_rule in every "with" run.
    cases = demo_cases_all_or_nothing(done, 2)
    for rule, case in cases.items():
        # Pi's session file reports every model call's usage: the scripted server answers
        # 10 input and 5 output tokens a call, and a run makes at least two calls.
        for arm in ("with", "without"):
            usage = case["usage"][arm]
            assert usage["inputTokens"] >= 20 and usage["outputTokens"] >= 10, (rule, arm, usage)
            assert usage["inputTokens"] == 2 * usage["outputTokens"]  # 10:5 a call, summed
            assert usage["costUsd"] > 0 and usage["seconds"] > 0


@NEEDS_NODE
def test_a_rule_pi_never_receives_fails_its_case(agent: dict[str, str], tmp_path: Path) -> None:
    project = copy_demo(tmp_path)
    mute_in_both_arms(project, "security")
    done = run_eval(project, agent, "--runner", "pi", "--runs", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "FAIL a debug line never logs the token (rule security)"
    assert "  with     0/2 0%" in done.stdout and "below min_compliance 0.8" in done.stdout
    # Positive control: the same project without the planted mute passes.
    (project / ".pi" / "rules.toml").unlink()
    again = run_eval(project, agent, "--runner", "pi", "--runs", "1")
    assert again.returncode == 0 and again.stdout.startswith("PASS "), again.stdout + again.stderr


@NEEDS_NODE
def test_a_model_pi_cannot_reach_is_a_failed_run_not_a_pass(agent: dict[str, str], tmp_path: Path) -> None:
    """Pi exits 0 when its model call fails; the runner reads the failure from the session
    file, so an `absent` check (which a silent agent would meet) does not pass."""
    project = copy_demo(tmp_path)
    (project / ".pi" / "evals" / "demo.yaml").write_text(
        "- name: nothing logged\n  rule: security\n  prompt: Say hello.\n  checks:\n    - absent: src/debug.ts\n")
    unreachable = tmp_path / "models.json"
    unreachable.write_text(json.dumps({"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:9"}}}))
    env = {**agent, "PI_RULES_EVAL_PI_MODELS": str(unreachable)}
    done = run_eval(project, env, "--runner", "pi", "--runs", "1", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr  # no min_compliance: the case ran
    case = cases_of(done)["security"]
    assert (case["with"]["passed"], case["without"]["passed"]) == (0, 0)
    assert done.stderr.count("(pi reported an error: ") == 2, done.stderr


def _processes_naming(folder: Path) -> list[str]:
    """The command lines of live processes that name ``folder`` (a run's copy, its sessions)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if entry.name.isdigit() and str(folder) in argv:
            found.append(argv)
    return found


@NEEDS_NODE
def test_a_run_past_its_time_limit_is_killed_with_what_it_started(agent: dict[str, str], tmp_path: Path) -> None:
    """A model that never answers: each run ends at --timeout, and Pi and the `pi-rules
    serve` its extension started are gone with it, their copy removed."""
    runs = tmp_path / "runs"  # the eval's TMPDIR: every run's folder is made here
    runs.mkdir()
    silent = socket.create_server(("127.0.0.1", 0))  # connections wait in its backlog, unanswered
    try:
        models = tmp_path / "silent-models.json"
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        models.write_text(json.dumps({"providers": {"anthropic": {"baseUrl": url}}}))
        project = copy_demo(tmp_path)
        (project / ".pi" / "evals" / "demo.yaml").write_text(
            "- name: a debug line never logs the token\n  rule: security\n  prompt: Add a debug line.\n"
            "  min_compliance: 0.8\n  checks:\n    - exists: src/debug.ts\n")
        env = {**agent, "PI_RULES_EVAL_PI_MODELS": str(models), "TMPDIR": str(runs)}
        done = run_eval(project, env, "--runner", "pi", "--runs", "1", "--timeout", "5")
    finally:
        silent.close()
    assert done.returncode == 1, done.stdout + done.stderr  # 0/1 is below min_compliance
    assert done.stderr.count("(timed out after 5 s)") == 2, done.stderr
    assert _processes_naming(runs) == [] and list(runs.iterdir()) == []
    # Positive control: a live process naming the folder is found.
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print(flush=True); time.sleep(60)", str(runs)],
                               stdout=subprocess.PIPE)
    try:
        assert sleeper.stdout is not None and sleeper.stdout.readline() == b"\n"  # past exec: argv is set
        assert len(_processes_naming(runs)) == 1
    finally:
        sleeper.kill()
        sleeper.wait()


def test_without_pi_the_runner_says_it_cannot_run(tmp_path: Path) -> None:
    """No `pi` on PATH, a PI_RULES_EVAL_PI that names nothing, arguments that do not
    split: the case could not run (exit 1, the reason and the fix), no run is recorded,
    nothing crashes."""
    empty = tmp_path / "bin"
    empty.mkdir()
    project = copy_demo(tmp_path)
    base = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    results = tmp_path / "results.jsonl"
    for extra, reason in (
        ({"PATH": str(empty)}, "the pi binary is not on PATH; install Pi"),
        ({"PI_RULES_EVAL_PI": str(tmp_path / "no-such-pi") + " --flag"}, "is not an executable program"),
        ({"PI_RULES_EVAL_PI": sys.executable, "PI_RULES_EVAL_PI_ARGS": "--model 'open"},
         "PI_RULES_EVAL_PI_ARGS is not a command line (No closing quotation)"),
    ):
        done = run_eval(project, {**base, **extra}, "--runner", "pi", "--results", str(results))
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == "FAIL a debug line never logs the token (rule security)"
        assert lines[1].startswith("  error: runner 'pi' cannot run here: ") and reason in lines[1], lines[1]
        assert lines[-1] == "0 passed, 3 failed"
        assert not results.exists()
    # Positive control: the same runner name resolves (a runner named wrongly is another error).
    wrong = run_eval(project, {**base, "PATH": str(empty)}, "--runner", "pi-typo")
    assert "no agent runner named 'pi-typo'" in wrong.stdout and "pi" in wrong.stdout.split("known: ")[1]


def test_an_extension_that_is_not_there_is_named(tmp_path: Path) -> None:
    project = copy_demo(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    env.update(PI_RULES_EVAL_PI=sys.executable, PI_RULES_EVAL_PI_EXTENSION=str(tmp_path / "nowhere"))
    done = run_eval(project, env, "--runner", "pi", "--format", "json")
    assert done.returncode == 1
    errors = {case["error"] for case in json.loads(done.stdout)["cases"]}
    assert errors == {f"runner 'pi' cannot run here: PI_RULES_EVAL_PI_EXTENSION={str(tmp_path / 'nowhere')!r} "
                      "is neither the extension's folder (hosts/pi) nor its index.ts"}
