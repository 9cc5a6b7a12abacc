"""Every host call has a deadline: work past it is cut, reported once, and what overran is
not paid for again. Time is simulated (a clock that advances per reading), so nothing
here depends on how fast the machine is."""

from __future__ import annotations

import pytest

from rules_core import Engine, hookimpl
from rules_core import deadline as deadline_module
from rules_core.deadline import DEFAULT_MS, budget_ms, check, deadline
from rules_core.model import Facts
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text
from suite_helpers import StepClock


@pytest.fixture
def clock(monkeypatch):
    fake = StepClock(0.0)
    monkeypatch.setattr(deadline_module.time, "monotonic", fake)
    return fake


def _engine(project, plugins=(), blocked=(), ms: str = "1000") -> Engine:
    env = {"HOME": str(project.home), "PI_RULES_DEADLINE_MS": ms}
    return Engine(fresh_manager(plugins, blocked), home=str(project.home), env=env)


@pytest.mark.parametrize(("value", "expected"), [
    ("", DEFAULT_MS), ("2500", 2500), ("0", None), ("off", None), ("abc", DEFAULT_MS), ("-5", DEFAULT_MS),
])
def test_the_setting(value, expected):
    assert budget_ms({"PI_RULES_DEADLINE_MS": value}) == expected


def test_an_inner_deadline_never_extends_an_outer_one(clock):
    with deadline(100):
        with deadline(10_000):
            clock.now += 0.2
            with pytest.raises(deadline_module.DeadlineExceeded):
                check()


def test_discovery_past_the_deadline_reads_no_more_files_and_says_how_many(rule_project, clock):
    rule_project.write({f".pi/rules/r{n:02d}.md": rule_text(alwaysApply=True) for n in range(20)})
    clock.step = 0.1  # each reading of the clock: 100 ms of a 1,000 ms budget
    found = _engine(rule_project).discover(str(rule_project.cwd))
    assert 0 < len(found.rules) < 20
    (error,) = [e for e in found.errors if "time budget" in e.message]
    assert error.message.startswith(f"{20 - len(found.rules)} rule files not read: the call's time budget ran out "
                                    "(PI_RULES_DEADLINE_MS, default 10000 ms)")


def test_evaluation_past_the_deadline_leaves_the_rest_unjudged_and_inactive(rule_project, clock):
    rule_project.write({f".pi/rules/r{n:02d}.md": rule_text(globs=["src/**"]) for n in range(10)})
    engine = _engine(rule_project)
    discovery = engine.discover(str(rule_project.cwd))  # no time passes yet
    clock.step = 0.15
    evaluation = engine.evaluate(Facts(cwd=str(rule_project.cwd), touched=("src/a.ts",)), discovery)
    reasons = {o.rule.id: o.reasons for o in evaluation.outcomes if o.status == "inactive"}
    assert reasons and all(r == ("not judged: the evaluation ran out of time (PI_RULES_DEADLINE_MS)",)
                           for r in reasons.values())
    assert any("not judged: the call's time budget ran out" in e.message for e in evaluation.errors)


class _SlowScanner:
    """An exists scanner that spends the whole budget on the first directory it walks."""

    calls = 0

    @hookimpl
    def pi_rules_scan(self, root, queries, git_root):
        type(self).calls += 1
        deadline_module.time.monotonic.now += 60  # type: ignore[attr-defined]
        check()
        return {}


def test_a_scan_that_overruns_is_cut_and_not_run_again(rule_project, clock):
    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"), "src/a.ts": ""})
    _SlowScanner.calls = 0
    engine = _engine(rule_project, plugins=[("slow", _SlowScanner())], blocked=["scanner"])
    facts = Facts(cwd=str(rule_project.cwd))
    first = engine.evaluate(facts)
    assert any("the exists scan was cut" in e.message for e in first.errors)
    second = engine.evaluate(Facts(cwd=str(rule_project.cwd), prompt="again"))
    assert any("not scanned again in this session" in e.message for e in second.errors)
    assert _SlowScanner.calls == 1


def test_no_deadline_when_switched_off(rule_project, clock):
    rule_project.write({f".pi/rules/r{n:02d}.md": rule_text(alwaysApply=True) for n in range(5)})
    clock.step = 100.0
    assert len(_engine(rule_project, ms="off").discover(str(rule_project.cwd)).rules) == 5


def test_the_real_exists_scan_is_cut_inside_a_big_tree(rule_project, clock):
    files = {f"src/d{n:03d}/f.py": "" for n in range(60)}
    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"), **files})
    engine = _engine(rule_project)
    discovery = engine.discover(str(rule_project.cwd))
    clock.step = 0.05  # the 1,000 ms budget lasts about twenty directories
    evaluation = engine.evaluate(Facts(cwd=str(rule_project.cwd)), discovery)
    assert any("the exists scan was cut" in e.message for e in evaluation.errors)
    assert {o.rule.id: o.status for o in evaluation.outcomes} == {"e": "inactive"}


def test_the_claude_code_hook_remembers_a_cut_scan_for_its_later_processes(rule_project, clock, tmp_path):
    import io
    import json

    from rules_hosts.claude_code import hook

    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"), "src/a.ts": ""})
    env = {"HOME": str(rule_project.home), "XDG_STATE_HOME": str(tmp_path / "state"), "PI_RULES_DEADLINE_MS": "1000"}
    payload = json.dumps({"session_id": "s1", "cwd": str(rule_project.cwd), "hook_event_name": "UserPromptSubmit",
                          "prompt": "hi"})
    _SlowScanner.calls = 0
    for _ in range(2):  # two hook processes: a fresh engine each, as Claude Code starts them
        engine = _engine(rule_project, plugins=[("slow", _SlowScanner())], blocked=["scanner"])
        hook.main(io.StringIO(payload), io.StringIO(), io.StringIO(), engine=engine, cwd=str(rule_project.cwd), env=env)
    assert _SlowScanner.calls == 1


def test_the_users_own_rules_are_read_and_judged_before_the_deadline_cuts(rule_project, clock):
    rule_project.write({f".pi/rules/r{n:02d}.md": rule_text(alwaysApply=True) for n in range(20)})
    rule_project.write_global({"mine.md": rule_text("My own rule.", globs=["src/**"])})
    clock.step = 0.1
    evaluation = _engine(rule_project).evaluate(Facts(cwd=str(rule_project.cwd), touched=("src/a.ts",)))
    statuses = {o.rule.id: o.status for o in evaluation.outcomes}
    assert statuses["mine"] == "active"
    assert len(statuses) < 21  # the cut fell on project files
