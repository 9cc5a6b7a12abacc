"""Issue 26, attacks 1 and 2: a rule's patterns cost a bounded time per call and a
bounded size when compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import rules_importers.continue_rules as continue_rules
from rules_core import deadline as deadline_module
from rules_core.model import Facts
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_plugins._stream_grammar import MAX_EXPANSION, compile_condition, expanded_size
from suite_helpers import StepClock

AWS_PATTERN = "AKIA[0-9A-Z]{16}"
BOMB = "(?:(?:a{100}){100}){100}"  # 24 bytes; ~150 MB once compiled by the regex module


@pytest.fixture(autouse=True)
def fresh_verdicts():
    continue_rules._seen.clear()
    yield
    continue_rules._seen.clear()


def _continue_rule(patterns: list[str]) -> str:
    return "---\n" + "regex: " + json.dumps(patterns) + "\n---\nA Continue rule.\n"


def _verdict(project, rule_id: str, touched: list[str]):
    evaluation = project.engine().evaluate(Facts(cwd=str(project.cwd), touched=tuple(touched)))
    return next(o for o in evaluation.outcomes if o.rule.id == rule_id)


# -- attack 1: any number of Continue patterns ----------------------------------------------------


def test_two_hundred_continue_patterns_stop_at_the_rules_budget(rule_project, monkeypatch):
    clock = StepClock(0.01)  # each reading: 10 ms of the rule's 250 ms
    monkeypatch.setattr(deadline_module.time, "monotonic", clock)
    rule_project.write({"a.txt": "plain text\n",
                        ".continue/rules/many.md": _continue_rule([f"needle{i}x" for i in range(200)])})
    judged = _verdict(rule_project, "many", ["a.txt"])
    assert judged.status == "inactive"
    note = next(r for r in judged.reasons if "not run" in r)
    skipped = int(note.split(" ", 1)[0])
    assert skipped >= 180  # at most ~13 of the 200 searched
    assert "the rule's search budget (0.25 s) or the call's deadline (PI_RULES_DEADLINE_MS) ran out" in note


def test_the_calls_deadline_also_stops_the_patterns(rule_project, monkeypatch):
    clock = StepClock(0.01)
    monkeypatch.setattr(deadline_module.time, "monotonic", clock)
    monkeypatch.setattr(continue_rules, "RULE_SEARCH_SECONDS", 1000.0)  # only the deadline is left
    rule_project.env["PI_RULES_DEADLINE_MS"] = "300"
    rule_project.write({"a.txt": "plain text\n",
                        ".continue/rules/many.md": _continue_rule([f"needle{i}x" for i in range(200)])})
    judged = _verdict(rule_project, "many", ["a.txt"])
    skipped = [int(r.split(" ", 1)[0]) for r in judged.reasons if "not run" in r]
    assert skipped and skipped[0] >= 150


def test_a_matching_pattern_within_the_budget_still_fires(rule_project):
    # Positive control: ten patterns, the last one matches.
    rule_project.write({"a.txt": "NEEDLE\n",
                        ".continue/rules/few.md": _continue_rule([f"miss{i}" for i in range(9)] + ["NEEDLE"])})
    judged = _verdict(rule_project, "few", ["a.txt"])
    assert judged.status == "active" and judged.reasons == ("touched a.txt matches regex /NEEDLE/",)


# -- attack 2: counted repetitions that unroll ---------------------------------------------------


@pytest.mark.parametrize(("pattern", "size"), [
    (BOMB, MAX_EXPANSION + 1), ("(?:a{100}){100}", 10_000), ("x{4}y", 5), ("(a|aa)+$", 4),
    ("[0-9a-f]{40}", 40), ("(?:ab){2,}c", 5), ("(?:(?:a{1,100}){1,100}){10}", 10), ("(?i)foo|ba{3}", 7),
])
def test_the_expanded_size_multiplies_nested_counts(pattern, size):
    assert expanded_size(pattern) == size


def test_compile_refuses_a_bomb_naming_the_cap():
    with pytest.raises(ValueError, match=r"would unroll to more than 10,000 items when compiled \(the limit"):
        compile_condition(BOMB)
    assert compile_condition("AKIA[0-9A-Z]{16}").search("x AKIAABCDEFGHIJKLMNOP")  # ordinary ones compile


def _check_in_child(project, home) -> tuple[dict, int]:
    # VmHWM (the peak of this process's own memory; ru_maxrss can carry a forking parent's).
    script = ("import re, sys\nfrom rules_hosts.cli import main\n"
              "code = main(['--json', 'check'])\n"
              "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
              "sys.stderr.write('\\nMAXRSS ' + peak)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")} | {"HOME": str(home)}
    done = subprocess.run([sys.executable, "-P", "-c", script], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)
    return json.loads(done.stdout), int(done.stderr.rsplit("MAXRSS ", 1)[1])


def test_a_bomb_in_a_stream_condition_and_a_continue_regex_is_invalid_value(rule_project):
    rule_project.write({".pi/rules/bomb.md": rule_text(condition=BOMB),
                        ".pi/rules/fine.md": rule_text(condition="AKIA[0-9A-Z]{16}"),
                        ".continue/rules/cbomb.md": _continue_rule([BOMB])})
    report, maxrss_kib = _check_in_child(rule_project.cwd, rule_project.home)
    capped = {(os.path.basename(e["path"]), e["kind"]) for e in report["errors"]
              if "would unroll to more than 10,000 items" in e["message"]}
    assert capped == {("bomb.md", "invalid-value"), ("cbomb.md", "invalid-value")}
    assert not any(e["path"].endswith("fine.md") for e in report["errors"])
    assert maxrss_kib < 120 * 1024  # was: ~150 MB held per bomb, twice


# -- stream_delta: the per-call limit bounds the whole call -----------------------------------------


class _SlowRegex:
    """A condition whose every search costs ``cost`` seconds of a simulated clock."""

    def __init__(self, clock: list[float], cost: float, runs: list[str], name: str) -> None:
        self.clock, self.cost, self.runs, self.name = clock, cost, runs, name

    def search(self, text: str, pos: int = 0, timeout: float | None = None) -> None:
        self.clock[0] += self.cost  # the time the call spends here (the search and what surrounds it)
        self.runs.append(self.name)
        return None


def test_the_call_budget_bounds_the_whole_call_not_each_tier(rule_project):
    import dataclasses

    from rules_core.stream.budget import Meter, StreamBudget

    rule_project.write({f".pi/rules/p{i:03}.md": rule_text(condition=f"P{i}X") for i in range(100)})
    rule_project.write_global({"aws-keys.md": rule_text(condition=AWS_PATTERN)})
    specs = rule_project.engine().stream_specs(rule_project.facts())
    clock, runs = [0.0], []

    def slowed(spec, cost: float):
        pattern = dataclasses.replace(spec.patterns[0], regex=_SlowRegex(clock, cost, runs, spec.rule.id))
        return dataclasses.replace(spec, patterns=(pattern,))

    users = [slowed(s, 0.9) for s in specs if s.is_global]
    project = [slowed(s, 0.05) for s in specs if not s.is_global]
    assert len(users) == 1 and len(project) == 100
    meter = Meter(StreamBudget(call_seconds=1.0, clock=lambda: clock[0]))  # moved by the searches alone
    with meter:  # one delta: the user's rules first, then the project's
        for spec in [*users, *project]:
            meter.search(spec, spec.patterns[0], "some streamed text", 0)
    assert runs[0] == "aws-keys"  # the user's rule is always searched, first
    project_runs = len(runs) - 1
    assert project_runs <= 3  # 0.1 s of the call is left for them (was 20: a budget of their own)
    assert clock[0] <= 1.0 + 0.05 + 1e-9  # the whole call stays within its budget plus one search
