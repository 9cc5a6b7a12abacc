"""Selection (RULE-SPEC §6): dedupe, budget, presentation order, PI_RULES_MAX_TOKENS."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from rules_core.model import Rule, RuleFile
from rules_core.select import dedupe, fill_budget, js_parse_int, parse_max_tokens, presentation_order, select, utf16_token_estimate


def make(rule_id: str, index: int, body: str = "", *, priority: int = 0, enforcement: str = "inform",
         load: str = "pinned", always: bool = False, globs: tuple[str, ...] = ("a",)) -> Rule:
    file = RuleFile(f"/p/{rule_id}.md", "/p", f"{rule_id}.md", "/p", "native", "v1", "project", (0, 0, "", rule_id))
    return Rule(file=file, description="d", body=body or f"body of {rule_id}", globs=globs, priority=priority,
                enforcement=enforcement, load=load, always_apply=always, id=rule_id, index=index)  # type: ignore[arg-type]


def cost(rule: Rule) -> int:
    return len(rule.body)


def test_dedupe_keeps_higher_priority_then_later_index():
    a, b, c = make("a", 0, "same", priority=1), make("b", 1, "same", priority=1), make("c", 2, "same")
    survivors, dropped = dedupe([a, b, c])
    assert [r.id for r in survivors] == ["b"] and dropped == {"a": "duplicate", "c": "duplicate"}
    survivors, _ = dedupe([make("x", 0, "same", priority=5), make("y", 1, "same")])
    assert [r.id for r in survivors] == ["x"]


def test_budget_skips_a_non_fitting_rule_and_continues():
    rules = [make("big", 0, "x" * 50), make("small", 1, "x" * 5), make("huge", 2, "x" * 100)]
    admitted, rejected, used = fill_budget(rules, 60, cost)
    assert [r.id for r in admitted] == ["big", "small"] and [r.id for r in rejected] == ["huge"] and used == 55


def test_first_candidate_is_kept_even_over_budget():
    admitted, rejected, used = fill_budget([make("a", 0, "x" * 100), make("b", 1, "x")], 10, cost)
    assert [r.id for r in admitted] == ["a"] and [r.id for r in rejected] == ["b"] and used == 100


def test_budget_order_priority_then_enforcement_then_index():
    rules = [
        make("inform", 0, "x" * 10),
        make("recommend", 1, "y" * 10, enforcement="recommend"),
        make("enforce", 2, "z" * 10, enforcement="enforce"),
        make("high", 3, "w" * 10, priority=1),
    ]
    admitted, _, _ = fill_budget(rules, 25, cost)
    assert [r.id for r in admitted] == ["high", "enforce"]


def test_presentation_unconditional_first_then_priority_desc_then_index():
    rules = [make("p0", 0), make("p5", 1, priority=5), make("always", 2, always=True), make("p5b", 3, priority=5)]
    assert [r.id for r in presentation_order(rules)] == ["always", "p5", "p5b", "p0"]


def test_on_demand_bypasses_budget_and_dedupe_among_itself():
    rules = [make("pin", 0, "other"), make("od", 1, "same", load="on-demand"),
             make("od1", 2, "same", load="on-demand"), make("od2", 3, "x" * 999, load="on-demand")]
    selection = select(rules, 5, cost)
    assert [r.id for r in selection.active] == ["pin"]
    assert [r.id for r in selection.on_demand] == ["od", "od1", "od2"]
    assert selection.dropped == {} and selection.budget_used == 5


def test_an_index_line_never_offers_a_text_the_section_sends():
    """Issue 24 (docs/format.md, "Selection and the section"): the one place selection
    departs from RULE-SPEC's "one index line per on-demand rule"."""
    rules = [make("pin", 0, "same"), make("od", 1, "same", load="on-demand"), make("od2", 2, "x" * 999, load="on-demand")]
    selection = select(rules, 5, cost)
    assert [r.id for r in selection.active] == ["pin"]
    assert [r.id for r in selection.on_demand] == ["od2"]
    assert selection.dropped == {"od": "duplicate"} and selection.budget_used == 4


def test_an_on_demand_copy_of_a_text_the_budget_left_out_keeps_its_index_line():
    rules = [make("big", 0, "a" * 40), make("same", 1, "b" * 40), make("od", 2, "b" * 40, load="on-demand")]
    selection = select(rules, 12, cost)
    assert [r.id for r in selection.active] == ["big"]
    assert [r.id for r in selection.on_demand] == ["od"]
    assert selection.dropped == {"same": "budget"}


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("12abc", 12), ("1e3", 1), ("1.5", 1), ("0x10", 16), ("  42", 42), ("\t\n7", 7), ("+5", 5),
        ("-5", 2000), ("0", 2000), ("abc", 2000), ("", 2000), (None, 2000), ("0x", 2000), ("0xZ", 2000),
        ("3000", 3000), ("-0x10", 2000), ("\u00a09", 9), ("٣", 2000),
    ],
)
def test_max_tokens_is_parsed_like_javascript_parseint(raw, expected):
    assert parse_max_tokens(raw) == expected


@given(st.text())
def test_js_parse_int_never_raises(text):
    value = js_parse_int(text)
    assert value is None or isinstance(value, int)


@pytest.mark.parametrize("text, tokens", [("", 0), ("abcd", 1), ("abcde", 2), ("😀", 1), ("😀😀😀", 2), ("é" * 8, 2)])
def test_token_estimate_counts_utf16_units(text, tokens):
    assert utf16_token_estimate(text) == tokens


@given(st.text())
def test_token_estimate_matches_ceil_of_utf16_length(text):
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert utf16_token_estimate(text) == math.ceil(units / 4)


def test_js_parse_int_answers_as_node_parse_int_does():
    """Differential data recorded once from node's own parseInt (tests/data/parseint-node.json):
    leading whitespace of every kind JavaScript strips, signs, hex, stops at the first
    non-digit, NaN (``None``) when no digit leads. Written to kill mutmut's survivors."""
    import json
    from pathlib import Path

    from rules_core.select import js_parse_int

    data = json.loads((Path(__file__).parents[1] / "data" / "parseint-node.json").read_text(encoding="utf-8"))
    assert [[text, js_parse_int(text)] for text, _ in data["cases"]] == data["cases"]


# -- written against mutmut's survivors (docs/mutation.md) -----------------------------------


def test_admissions_fill_to_exactly_the_budget_and_report_the_room_each_met():
    from rules_core.select import admissions, pool_admissions

    rules = [make("a", 0, "x" * 6), make("b", 1, "x" * 4), make("c", 2, "x" * 1)]
    steps = admissions(rules, 10, cost)
    assert [(s.rule.id, s.cost, s.room, s.admitted) for s in steps] == [
        ("a", 6, 10, True), ("b", 4, 4, True), ("c", 1, 0, False)]  # 6 + 4 == 10 fits exactly
    pooled = pool_admissions(rules, 10, cost)
    assert [(s.rule.id, s.room, s.admitted) for s in pooled] == [("a", 10, True), ("b", 4, True), ("c", 0, False)]
    skipped = pool_admissions([make("a", 0, "x" * 11), make("b", 1, "x" * 10)], 10, cost)
    assert [(s.rule.id, s.room, s.admitted) for s in skipped] == [("a", 10, False), ("b", 10, True)]


def test_an_unknown_enforcement_ranks_with_inform_after_enforce_and_recommend():
    from rules_core.select import budget_key

    ranks = sorted([make("x", 3, enforcement="unknown"), make("i", 2, enforcement="inform"),
                    make("r", 1, enforcement="recommend"), make("q", 0, enforcement="enforce")], key=budget_key)
    assert [r.id for r in ranks][-1] == "x"
    assert budget_key(make("x", 3, enforcement="unknown"))[1] == 2


def test_the_token_estimate_is_an_integer():
    assert utf16_token_estimate("abcde") == math.ceil(5 / 4) and isinstance(utf16_token_estimate("abcde"), int)
    assert isinstance(utf16_token_estimate("abc"), int)
