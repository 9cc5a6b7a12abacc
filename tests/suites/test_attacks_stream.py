"""Issue 14, attacks 4, 6, 13 and 14: stream conditions a repository supplies can neither
crowd out the user's own deny rules, nor slow every delta down, nor dodge a split, nor
fill memory. No wall-clock thresholds: each test counts rules switched off, searches run,
bytes held — or, for the hang, runs the real hook within the host's own time limit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tracemalloc
from dataclasses import replace
from pathlib import Path

import rules_core.stream.watcher as stream_module
import rules_core.stream.buffer as stream_buffer
import rules_hosts.session.stream as session_stream
from rules_core.stream.budget import budget_from_env
from rules_core.stream.watcher import StreamWatcher, globs_gate
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.claude_code.install import config
from rules_hosts.session.runtime import Session
from suite_helpers import hook_env

ROOT = Path(__file__).resolve().parent.parent.parent
CATASTROPHIC = "(a|aa)+$"  # backtracks exponentially on a run of a's that does not end the text


def watcher(project) -> StreamWatcher:
    engine = project.engine()
    facts = project.facts()
    return StreamWatcher(engine.stream_specs(facts), gate=globs_gate(str(project.cwd)), touched=facts.touched)


# -- attack 4: the user's global deny under 300 catastrophic project conditions --------------------

HOST_TIMEOUT = config()["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"]  # what Claude Code allows a hook


def _pre_tool_use(project, content: str) -> tuple[dict | None, str]:
    env = hook_env(HOME=str(project.home), XDG_STATE_HOME=str(project.home / "state"), PYTHONPATH=str(ROOT))
    payload = {"session_id": "s-4", "cwd": str(project.cwd), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(project.cwd / "src" / "config.py"), "content": content}}
    # Claude Code kills a hook after HOST_TIMEOUT seconds and lets the write through: the
    # hang detector is the host's own limit, not a threshold of ours.
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=HOST_TIMEOUT)
    assert done.returncode == 0
    return (json.loads(done.stdout) if done.stdout else None), done.stderr.decode()


def _switch_off_records(project) -> list[dict[str, str]]:
    """What the state file remembers as switched off, one record per hook that did it."""
    state = project.home / "state" / "pi-rules" / "claude-code" / "s-4.jsonl"
    records = [json.loads(line) for line in state.read_text().splitlines()]
    return [r["rules"] for r in records if r.get("type") == "pi-rules/stream-off"]


def _reported(report: str) -> int:
    """How many rules the hook's one report line says it switched off."""
    found = re.search(r"(\d+) stream rules? (?:is|are) off for this session", report)
    return int(found.group(1)) if found else 0


def test_a_global_deny_still_denies_with_300_catastrophic_project_conditions(rule_project):
    rule_project.write({f".pi/rules/slow{i:03}.md": rule_text(condition=CATASTROPHIC) for i in range(300)})
    rule_project.write_global({"aws-keys.md": rule_text("Never write AWS keys.", condition="AKIA[0-9A-Z]{16}")})
    content = "a" * 80 + "b\nkey = 'AKIAABCDEFGHIJKLMNOP'\n"

    first, report = _pre_tool_use(rule_project, content)
    assert first["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Blocked by global rule aws-keys" in first["hookSpecificOutput"]["permissionDecisionReason"]
    assert len(report.splitlines()) == 1
    [off_first] = _switch_off_records(rule_project)
    assert 1 <= len(off_first) < 300 and _reported(report) == len(off_first)  # cut within the budget

    second, report = _pre_tool_use(rule_project, content)
    assert second["hookSpecificOutput"]["permissionDecision"] == "deny"
    [_, off_second] = _switch_off_records(rule_project)
    # The second process read the first one's switch-offs and ran none of them again:
    # what it switched off — and reported — is all new.
    assert off_second and not set(off_second) & set(off_first) and _reported(report) == len(off_second)


class _Ticks:
    """A clock that moves ``step`` seconds at every reading: what the searches of a call
    cost is then a count of readings, the same on any machine (StreamBudget.clock)."""

    def __init__(self, step: float) -> None:
        self.step, self.now, self.readings = step, 0.0, 0

    def __call__(self) -> float:
        self.now += self.step
        self.readings += 1
        return self.now


def test_the_budget_of_one_call_is_settable_and_the_user_rules_keep_their_own(rule_project, monkeypatch):
    ticks = _Ticks(0.01)  # every search costs readings of 10 ms; 0.2 s is 20 of them
    # The session's budget as PI_RULES_STREAM_BUDGET_MS sets it, measured on that clock.
    monkeypatch.setattr(session_stream, "budget_from_env", lambda env: replace(budget_from_env(env), clock=ticks))
    rule_project.env["PI_RULES_STREAM_BUDGET_MS"] = "200"
    rule_project.write({f".pi/rules/slow{i:02}.md": rule_text(condition=CATASTROPHIC) for i in range(50)})
    rule_project.write_global({"aws-keys.md": rule_text(condition="AKIA[0-9A-Z]{16}")})
    session = Session(rule_project.engine(), str(rule_project.cwd), trusted=True)
    off = 0
    for _ in range(2):  # the first call may spend its budget on the alternation of all 50
        session.stream.reset()  # repeat: once — each check as a new conversation's
        before = ticks.readings
        result = session.stream.check("tool", "a" * 80 + "b AKIAABCDEFGHIJKLMNOP\n", tool="write", path="src/x.py")
        assert [f.rule.id for f in result.fired] == ["aws-keys"]
        assert "the project stream rules ran over the budget of one call (0.2 s, PI_RULES_STREAM_BUDGET_MS)" \
            in session.last_fault
        # The call stopped searching at 0.2 s: 20 readings, plus the call's start, the user
        # rule's search and the one search that crossed the line (1 s would be 100).
        assert ticks.readings - before <= 20 + 5
        assert len(session.stream.switched_off()) > off  # each call named new culprits
        off = len(session.stream.switched_off())
    assert off < 50


def test_a_budget_setting_that_is_not_a_number_keeps_the_default():
    from rules_core.stream.budget import StreamBudget, budget_from_env

    assert budget_from_env({"PI_RULES_STREAM_BUDGET_MS": "250"}).call_seconds == 0.25
    assert budget_from_env({"PI_RULES_STREAM_BUDGET_MS": "off"}).call_seconds is None
    assert budget_from_env({"PI_RULES_STREAM_BUDGET_MS": "-5"}) == budget_from_env({}) == StreamBudget()


# -- attack 6: slow-but-under-limit conditions ------------------------------------------------------

# Each delta holds a run of 19 a's: one search of the window (four such runs) costs tens of
# milliseconds on the project's machine — under the 0.1 s limit of one search, and far
# over what a condition needs.
SLOW_DELTA = "a" * 19 + "b" + "c" * 53  # 73 characters


def test_a_hundred_slow_conditions_are_switched_off_and_reported(rule_project):
    rule_project.write({f".pi/rules/slow{i:03}.md": rule_text(condition=CATASTROPHIC) for i in range(100)})
    rule_project.write({".pi/rules/fine.md": rule_text(condition="TODO")})
    w = watcher(rule_project)
    deltas = 0
    while len(w.switched_off()) < 100 and deltas < 40:
        w.feed("text", SLOW_DELTA)
        deltas += 1
    assert len(w.switched_off()) == 100 and "fine" not in w.switched_off()
    assert 1 <= w.fault_count <= deltas  # at most one line per delta
    searches = w.searches
    assert [f.rule.id for f in w.feed("text", SLOW_DELTA + " TODO").fired] == ["fine"]
    assert w.searches - searches <= 2  # the switched-off hundred cost nothing any more


def test_one_slow_condition_is_switched_off_by_its_cumulative_budget(rule_project):
    rule_project.write({".pi/rules/slow.md": rule_text(condition=CATASTROPHIC)})
    w = watcher(rule_project)
    for _ in range(1000):  # a step bound, not a time: about ten deltas here
        if w.switched_off():
            break
        w.feed("text", SLOW_DELTA)
    assert list(w.switched_off()) == ["slow"] and w.fault_count == 1
    assert w.faults[-1].startswith("stream rule slow (slow.md): condition /(a|aa)+$/ ")
    assert w.faults[-1].endswith("it is off for this session — simplify its nested or overlapping repetitions")
    searches = w.searches
    for _ in range(20):
        w.feed("text", SLOW_DELTA)
    assert w.searches == searches


def test_the_session_reports_the_switch_off_in_one_line(rule_project):
    rule_project.write({f".pi/rules/slow{i}.md": rule_text(condition=CATASTROPHIC) for i in range(30)})
    session = Session(rule_project.engine(), str(rule_project.cwd), trusted=True)
    for _ in range(200):
        if len(session.stream.switched_off()) == 30:
            break
        session.stream.delta("text", SLOW_DELTA)
    assert len(session.stream.switched_off()) == 30
    assert session.last_fault is not None and "\n" not in session.last_fault
    assert " off for this session" in session.last_fault


# -- attack 13: fuzzy width -------------------------------------------------------------------------


def test_a_fuzzy_match_split_across_deltas_fires(rule_project):
    rule_project.write({".pi/rules/fuzzy.md": rule_text(condition="(?:password){i<=30}")})
    text = "xx p" + "-" * 20 + "assword yy"
    assert [f.rule.id for f in watcher(rule_project).check("text", text).fired] == ["fuzzy"]
    w = watcher(rule_project)
    fired = [f.rule.id for f in w.feed("text", text[:24]).fired] + [f.rule.id for f in w.feed("text", text[24:]).fired]
    assert fired == ["fuzzy"]  # the moment the match completes, not never


def test_the_width_comes_from_the_engine_that_runs_the_pattern():
    from rules_plugins._stream_grammar import compile_condition, max_width

    assert max_width(compile_condition("(?:password){i<=30}")) is None  # fuzzy: unbounded
    assert max_width(compile_condition("(?i)pre.existing")) == 12
    assert max_width(compile_condition("x[0-9]{2,3}y")) == 5


# -- attack 14: stream memory -----------------------------------------------------------------------

# Two CJK characters, decoded afresh for every delta as a host's JSON reader would: a
# watcher that keeps each delta object holds all of them.
DELTA = "日本".encode()


def test_small_non_latin1_deltas_cost_bytes_not_objects(rule_project):
    rule_project.write({".pi/rules/todo.md": rule_text(condition="TODO")})
    w = watcher(rule_project)
    deltas = 10_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(deltas):
            w.feed("text", DELTA.decode())
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # 20,000 characters of 3 UTF-8 bytes each, held as bytes: a few per character (was
    # one str object per delta, about 43 bytes per character).
    assert held < 4 * 2 * deltas + 64 * 1024


def _buffers(w: StreamWatcher) -> int:
    """Bytes of every open stream's buffers: each attribute, and each item of a list."""
    total = 0
    for stream in w._streams.values():
        for name, value in vars(stream).items():
            if name not in ("eligible", "fired", "cache"):
                total += sys.getsizeof(value) + (sum(map(sys.getsizeof, value)) if isinstance(value, list) else 0)
    return total


def test_stream_memory_is_capped_by_bytes_across_every_open_stream(rule_project, monkeypatch):
    cap = 4 * 1024
    monkeypatch.setattr(stream_buffer, "STORE_BYTES", cap)  # the cap, made small to fill
    rule_project.write({".pi/rules/todo.md": rule_text(condition="TODO")})
    w = watcher(rule_project)
    for call in range(stream_module.MAX_STREAMS):
        for _ in range(1_000):  # 6,000 bytes each, over the cap
            w.feed("tool", DELTA.decode(), tool="write", call_id=call)
    assert len(w._streams) == stream_module.MAX_STREAMS
    assert _buffers(w) < stream_module.MAX_STREAMS * (cap * 1.25 + 2 * 1024)
    # Never a silent truncation: each stream that reached the cap said so, once.
    assert w.fault_count == stream_module.MAX_STREAMS
    assert w.faults[-1].startswith("stream tool:write passed 4 KiB: the rest is searched as it streams")


def test_the_kept_text_is_an_exact_prefix_cut_on_a_character_boundary(monkeypatch):
    monkeypatch.setattr(stream_buffer, "STORE_BYTES", 10)
    buffer = stream_buffer.StreamBuffer("text", None, None, [])
    assert [buffer.keep(d) for d in ("ab", "\udc80", "日本", "x")] == [False, False, True, False]
    assert buffer.whole() == "ab\udc80日"  # 2 + 3 + 3 bytes; 本 would pass 10
