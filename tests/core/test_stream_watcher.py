"""The stream watcher (issue 6, item 3): scope, path gate, interrupt modes, repeat policy,
per-turn buffers, golden interrupt/reminder blocks, and split-invariance (hypothesis)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules_core.stream.watcher import WINDOW, StreamWatcher, globs_gate
from golden_files import check_golden
from rules_core.rule_tests.pytest_plugin import rule_text



def watcher(project, **facts) -> StreamWatcher:
    engine = project.engine()
    facts_ = project.facts(**facts)
    return StreamWatcher(
        engine.stream_specs(facts_), gate=globs_gate(str(project.cwd)), touched=facts_.touched,
        render=engine.hooks.render,
    )


def feed_chars(w: StreamWatcher, source: str, text: str, **where) -> list[str]:
    fired = []
    for char in text:
        fired += [f.rule.id for f in w.feed(source, char, **where).fired]
    fired += [f.rule.id for f in w.end(source, **where).fired]
    return fired


@pytest.fixture
def project(rule_project):
    rule_project.write({
        ".pi/rules/no-console.md": rule_text(
            "Use the logger from src/log.ts.", description="No console.log",
            condition="console\\.log\\(", scope="tool:edit(*.ts), tool:write(*.ts)", interruptMode="tool-only"),
        ".pi/rules/pre.md": rule_text(
            "Do not blame pre-existing issues.", description="No excuses",
            condition="(?i)pre.existing", repeat="after-gap 2"),
        ".pi/rules/think.md": rule_text(
            "Do not plan to skip tests.", description="No skipping", condition="skip (the )?tests",
            scope="thinking", interruptMode="never"),
        ".pi/rules/prose.md": rule_text(
            "Say it plainly.", description="No hedging", condition="\\bperhaps\\b", interruptMode="prose-only"),
    })
    return rule_project


# -- scope ----------------------------------------------------------------------------------------


def test_no_scope_watches_prose_and_every_tool_but_not_thinking(project):
    w = watcher(project)
    assert feed_chars(w, "thinking", "a pre-existing bug") == []
    assert feed_chars(w, "text", "a pre-existing bug") == ["pre"]
    w.reset()
    assert feed_chars(w, "tool", '{"command": "echo pre-existing"}', tool="bash", call_id="c1") == ["pre"]


def test_a_tool_scope_with_a_glob_matches_the_path_or_its_base_name(project):
    w = watcher(project)
    assert feed_chars(w, "tool", "console.log(1)", tool="edit", call_id="1", path="src/deep/a.ts") == ["no-console"]
    assert feed_chars(w, "tool", "console.log(1)", tool="edit", call_id="2", path="src/a.js") == []
    assert feed_chars(w, "tool", "console.log(1)", tool="read", call_id="3", path="src/a.ts") == []
    assert feed_chars(w, "text", "console.log(1)") == []


def test_a_path_that_arrives_late_catches_up_on_the_text_so_far(project):
    w = watcher(project)
    first = w.feed("tool", "console.log(1)", tool="write", call_id="9")
    assert first.fired == ()
    late = w.feed("tool", ";", tool="write", call_id="9", path="b.ts")
    assert [f.rule.id for f in late.fired] == ["no-console"]


def test_the_globs_of_a_stream_rule_gate_by_path(rule_project):
    rule_project.write({".pi/rules/gated.md": rule_text(condition="TODO", globs=["src/**"])})
    w = watcher(rule_project, touched=["docs/a.md"])
    assert feed_chars(w, "tool", "TODO", tool="edit", call_id="1", path="docs/x.md") == []
    assert feed_chars(w, "tool", "TODO", tool="edit", call_id="2", path="src/x.py") == ["gated"]
    # Prose has no path of its own: the session's touched paths open the gate.
    assert feed_chars(w, "text", "TODO") == []
    assert feed_chars(watcher(rule_project, touched=["src/a.py"]), "text", "TODO") == ["gated"]


# -- interrupt modes and blocks ----------------------------------------------------------------------


def test_interrupt_modes(project):
    w = watcher(project)
    tool = w.check("tool", "console.log(x)", tool="edit", path="a.ts")
    assert tool.interrupt and tool.fired[0].interrupt
    prose = w.check("text", "perhaps")
    assert prose.interrupt
    w.reset()
    hedged_tool = w.check("tool", "perhaps", tool="bash")
    assert [f.rule.id for f in hedged_tool.fired] == ["prose"] and not hedged_tool.interrupt
    thought = w.check("thinking", "I will skip the tests")
    assert [f.rule.id for f in thought.fired] == ["think"] and not thought.interrupt


def test_interrupt_block_is_golden(project):
    result = watcher(project).check("tool", "x = 1;\nconsole.log(x)", tool="edit", path="src/a.ts")
    assert result.interrupt
    check_golden("stream-interrupt.md", result.block)


def test_reminder_block_is_golden(project):
    result = watcher(project).check("thinking", "Maybe I should skip tests here.")
    assert not result.interrupt
    check_golden("stream-reminder.md", result.block)


def test_result_json_shape(project):
    result = watcher(project).check("text", "It was perhaps pre-existing.")
    # Rules that fire on one delta are listed in discovery order.
    assert result.to_json()["fired"] == [
        {"id": "pre", "source": "text", "interrupt": True, "reason": 'matched /(?i)pre.existing/: "pre-existing"'},
        {"id": "prose", "source": "text", "interrupt": True, "reason": 'matched /\\bperhaps\\b/: "perhaps"'},
    ]
    assert result.to_json()["interrupt"] is True and result.to_json()["block"].startswith("# Rule interrupt\n")


# -- repeat and buffers ------------------------------------------------------------------------------


def test_repeat_once_fires_once_per_session_until_a_compaction(project):
    w = watcher(project)
    assert feed_chars(w, "text", "perhaps") == ["prose"]
    w.turn()
    assert feed_chars(w, "text", "perhaps") == []
    w.reset()
    assert feed_chars(w, "text", "perhaps") == ["prose"]


def test_repeat_after_gap_fires_again_after_n_turns(project):
    w = watcher(project)
    assert feed_chars(w, "text", "pre-existing") == ["pre"]
    assert feed_chars(w, "text", "pre-existing") == []  # same turn
    w.turn()
    assert feed_chars(w, "text", "pre-existing") == []  # one turn later
    w.turn()
    assert feed_chars(w, "text", "pre-existing") == ["pre"]  # two turns later


def test_buffers_are_per_stream_key_and_cleared_per_turn(project):
    w = watcher(project)
    w.feed("tool", "console.lo", tool="edit", call_id="a", path="a.ts")
    other = w.feed("tool", "g(", tool="edit", call_id="b", path="a.ts")
    assert other.fired == ()  # another call's buffer
    w.turn()
    assert w.feed("tool", "g(", tool="edit", call_id="a", path="a.ts").fired == ()
    assert [f.rule.id for f in w.feed("text", "pre-exi").fired + w.feed("text", "sting").fired] == ["pre"]


def test_hostile_inputs_are_ignored(project):
    w = watcher(project)
    assert w.feed("nonsense", "perhaps").fired == ()
    assert w.feed("text", None).fired == ()  # type: ignore[arg-type]
    assert w.feed("tool", "perhaps", tool={"x": 1}, call_id=[1]).fired != ()  # odd ids still key a stream
    assert w.end("text").fired == ()


def test_a_match_longer_than_the_window_fires_by_the_end_of_the_stream(rule_project):
    rule_project.write({".pi/rules/long.md": rule_text(condition="BEGIN[^!]*END")})
    w = watcher(rule_project)
    text = "BEGIN" + "x" * (WINDOW * 3) + "END"
    fired = []
    for start in range(0, len(text), 7):
        fired += [f.rule.id for f in w.feed("text", text[start:start + 7]).fired]
    assert fired == []  # too long for the per-delta window …
    assert [f.rule.id for f in w.end("text").fired] == ["long"]  # … found over the whole stream


# -- split invariance ----------------------------------------------------------------------------------

PATTERNS = ["ab+c", "(?i)todo", "x[0-9]{2,3}y", "foo|bar", "a.{0,40}z", "(?s)b.*q", "\\d\\s+\\d", "(?m)^k"]


@pytest.fixture(scope="module")
def split_project(tmp_path_factory):
    from rules_core.rule_tests.pytest_plugin import RuleProject

    project = RuleProject(tmp_path_factory.mktemp("split"), tmp_path_factory.mktemp("home"))
    project.write({f".pi/rules/p{i}.md": rule_text(condition=p, repeat="after-gap 1") for i, p in enumerate(PATTERNS)})
    return project


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet="abcqxyzfoTODkr0123 \n", max_size=300),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=40),
)
def test_random_splits_fire_exactly_the_rules_the_whole_text_fires(split_project, text, cuts):
    whole = watcher(split_project)
    expected = sorted(f.rule.id for f in whole.check("text", text).fired)
    # The oracle: a plain search of each pattern over the whole text.
    assert expected == sorted(f"p{i}" for i, p in enumerate(PATTERNS) if re.search(p, text))
    split = watcher(split_project)
    points = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    fired = []
    for start, stop in zip(points, points[1:]):
        fired += [f.rule.id for f in split.feed("text", text[start:stop]).fired]
    fired += [f.rule.id for f in split.end("text").fired]
    assert sorted(fired) == expected


# -- hostile deltas ----------------------------------------------------------------------------------

_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(
    st.sampled_from(["feed", "end", "check", "turn", "reset"]),
    st.one_of(st.sampled_from(["text", "thinking", "tool"]), _JSONISH),
    st.one_of(st.text(max_size=200), _JSONISH),
    _JSONISH, _JSONISH, _JSONISH,
), max_size=30))
def test_any_sequence_of_hostile_calls_never_raises(split_project, calls):
    w = watcher(split_project)
    for verb, source, text, tool, call_id, path in calls:
        if verb == "feed":
            result = w.feed(source, text, tool=tool, call_id=call_id, path=path)
        elif verb == "end":
            result = w.end(source, tool=tool, call_id=call_id, path=path)
        elif verb == "check":
            result = w.check(source, text, tool=tool, path=path)
        else:
            getattr(w, verb)()
            continue
        assert isinstance(result.to_json()["fired"], list)


def test_a_huge_single_delta_is_searched_once(split_project):
    w = watcher(split_project)
    text = "x" * 3_000_000 + "ab" + "c"
    assert [f.rule.id for f in w.feed("text", text).fired] == ["p0"]


def test_open_streams_are_bounded(split_project):
    from rules_core.stream.watcher import MAX_STREAMS

    w = watcher(split_project)
    for n in range(MAX_STREAMS * 3):
        w.feed("tool", "a", tool="edit", call_id=n)
    assert len(w._streams) == MAX_STREAMS  # the oldest were dropped, the newest kept
    assert ("tool", "edit", str(MAX_STREAMS * 3 - 1)) in w._streams


def test_a_catastrophically_backtracking_condition_is_switched_off_not_waited_for(rule_project):
    rule_project.write({
        ".pi/rules/slow.md": rule_text(condition="(a|aa)+$"),
        ".pi/rules/fine.md": rule_text(condition="TODO"),
    })
    w = watcher(rule_project)
    result = w.check("text", "a" * 80 + "b TODO")
    assert [f.rule.id for f in result.fired] == ["fine"]
    assert len(w.faults) == 1 and w.faults[0].startswith("stream rule slow (slow.md): condition /(a|aa)+$/ took over")
    assert w.feed("text", "a" * 80 + "b").fired == ()  # off for the rest of the session
