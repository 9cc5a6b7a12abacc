"""Mid-run attachment, the pure core (RULE-SPEC §6 "Mid-run attachment").

Golden files ``tests/golden/attach-*.md`` hold whole blocks; refresh on purpose with
``PI_RULES_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import copy

import pytest

from rules_hosts.session.attach import (
    ATTACHING_TOOLS,
    append_block,
    attach_enabled,
    newly_activated,
    plan_batch,
    remaining_budget,
)
from rules_core.model import Evaluation, Facts, Outcome, Rule, RuleFile
from rules_core.rule_tests.pytest_plugin import fresh_manager
from rules_core.plugins.hooks import Hooks
from rules_plugins.markdown import BLOCK_HEADING, render_attachment, render_entry, render_index_line
from golden_files import check_golden as assert_golden

RENDER = Hooks(fresh_manager()).render


def rule(rule_id: str, body: str = "Body.", *, load: str = "pinned", relative_path: str | None = None, **keys) -> Rule:
    rel = f"{rule_id}.md" if relative_path is None else relative_path
    rule_file = RuleFile(
        path=f"/p/.pi/rules/{rel or rule_id}", rules_root="/p/.pi/rules", relative_path=rel, base="/p",
        plugin="native", schema="v1", source="project", order=(0, 0, "", rel),
    )
    keys.setdefault("description", f"The {rule_id} rule")
    return Rule(file=rule_file, body=body, load=load, id=rule_id, **keys)  # type: ignore[arg-type]


def outcome(r: Rule, tokens: int, reasons: tuple[str, ...] = ()) -> Outcome:
    return Outcome(r, "on-demand" if r.load == "on-demand" else "active", reasons, None, tokens)


def evaluation(active=(), on_demand=(), budget: int = 100) -> Evaluation:
    facts = Facts(cwd="/p", max_tokens=budget)
    outcomes = (*active, *on_demand)
    return Evaluation(facts, outcomes, (), tuple(active), tuple(on_demand), "", 0, sum(o.tokens for o in active))


# -- candidates and budget -------------------------------------------------------------


def test_candidates_are_pinned_then_on_demand_in_selection_order():
    a, b, c = outcome(rule("a"), 1), outcome(rule("b"), 1), outcome(rule("c", load="on-demand"), 0)
    assert [o.rule.id for o in newly_activated(evaluation([b, a], [c]), set())] == ["b", "a", "c"]


def test_candidates_exclude_the_delivered_set():
    a, b, c = outcome(rule("a"), 1), outcome(rule("b"), 1), outcome(rule("c", load="on-demand"), 0)
    assert [o.rule.id for o in newly_activated(evaluation([a, b], [c]), {"a", "c"})] == ["b"]


def test_remaining_budget_subtracts_the_fresh_pinned_bodies_only():
    trace = evaluation([outcome(rule("a"), 30), outcome(rule("b"), 20)], [outcome(rule("c", load="on-demand"), 500)])
    assert remaining_budget(trace) == 50


def test_remaining_budget_is_plain_arithmetic_and_can_go_negative():
    assert remaining_budget(evaluation([outcome(rule("a"), 130)], budget=100)) == -30


# -- planning ----------------------------------------------------------------------------


def test_pinned_rule_that_fits_gets_the_section_entry_bytes():
    fits = outcome(rule("a", "Do it.", enforcement="enforce"), 2, ("touched src/a.ts",))
    batch = plan_batch(evaluation([fits], budget=10), set(), RENDER)
    assert batch.delivered == ("a",)
    assert batch.block == f"{BLOCK_HEADING}\n\n{render_entry(fits)}\n"


def test_pinned_rule_that_does_not_fit_degrades_to_its_reference_line():
    big = outcome(rule("big", "x" * 40), 10, ("touched src/a.ts",))
    pinned = outcome(rule("pinned"), 95)
    batch = plan_batch(evaluation([pinned, big], budget=100), {"pinned"}, RENDER)
    assert batch.block == f"{BLOCK_HEADING}\n\n{render_index_line(big.rule)}\n"
    assert batch.delivered == ("big",)  # a pointer still counts as delivered


def test_running_budget_is_decremented_by_each_attached_body():
    first, second = outcome(rule("first"), 60), outcome(rule("second"), 60)
    batch = plan_batch(evaluation([first, second], budget=180), set(), RENDER)
    # remaining = 180 - 120 = 60: the first fits and uses it up, the second degrades.
    assert batch.block is not None
    assert "## first" in batch.block and render_index_line(second.rule) in batch.block
    assert "## second" not in batch.block


def test_on_demand_rule_contributes_its_reference_line_only_and_charges_nothing():
    ref = outcome(rule("ref", "SECRET BODY", load="on-demand"), 0)
    pinned = outcome(rule("pinned", "Tiny."), 2)
    batch = plan_batch(evaluation([pinned], [ref], budget=4), set(), RENDER)
    assert batch.block is not None and "SECRET BODY" not in batch.block
    assert render_index_line(ref.rule) in batch.block and "## pinned" in batch.block


def test_rule_without_relative_path_is_skipped_and_not_delivered():
    bare = outcome(rule("bare", load="on-demand", relative_path=""), 0)
    assert plan_batch(evaluation([], [bare]), set(), RENDER).block is None
    assert plan_batch(evaluation([], [bare]), set(), RENDER).delivered == ()


def test_degraded_pinned_rule_without_relative_path_is_skipped():
    bare = outcome(rule("bare", relative_path=""), 500)
    ok = outcome(rule("ok", load="on-demand"), 0)
    batch = plan_batch(evaluation([bare], [ok], budget=100), set(), RENDER)
    assert batch.delivered == ("ok",)


def test_fitting_pinned_rule_without_relative_path_still_gets_its_entry():
    # The spec skips only what would need a fetchable reference.
    bare = outcome(rule("bare", relative_path=""), 1)
    assert plan_batch(evaluation([bare]), set(), RENDER).delivered == ("bare",)


def test_empty_batch_renders_no_block():
    a = outcome(rule("a"), 1)
    assert plan_batch(evaluation([a]), {"a"}, RENDER).block is None
    assert plan_batch(evaluation(), set(), RENDER).block is None


def test_a_part_the_renderer_cannot_produce_is_left_out_and_not_delivered():
    a, b = outcome(rule("a"), 1), outcome(rule("b", load="on-demand"), 0)

    def render(kind, data):
        if kind == "entry":
            raise RuntimeError("broken renderer")
        return None

    assert plan_batch(evaluation([a], [b]), set(), render).delivered == ()


# -- block shape and delivery ------------------------------------------------------------


def test_block_shape_is_exact():
    appended = append_block([], render_attachment(["A", "B"]))
    assert appended == [{"type": "text", "text": "\n\n---\n\n## Rules newly activated by this tool result\n\nA\n\n---\n\nB\n"}]


def test_block_ends_with_exactly_one_newline():
    assert render_attachment(["A\n\n\n"]).endswith("A\n")


def test_no_parts_no_block():
    assert plan_batch(evaluation(), set(), RENDER).block is None


def test_append_block_returns_a_new_list_and_never_mutates_the_input():
    parts = [{"type": "text", "text": "file contents"}]
    before = copy.deepcopy(parts)
    result = append_block(parts, "BLOCK")
    assert parts == before
    assert result is not parts
    assert result == [*before, {"type": "text", "text": "\n\n---\n\nBLOCK"}]


@pytest.mark.parametrize(
    "content",
    [None, "text", 3, {"type": "text"}, [1], ["x"], [{"text": "no type"}], [{"type": 3}], [None]],
)
def test_foreign_result_shapes_get_no_block(content):
    assert append_block(content, "BLOCK") is None


def test_an_empty_part_list_is_a_valid_shape():
    assert append_block([], "B") == [{"type": "text", "text": "\n\n---\n\nB"}]


@pytest.mark.parametrize("value, enabled", [
    (None, True), ("", True), ("on", True), ("0", True), ("false", True),
    ("off", False), ("OFF", False), ("  Off \n", False),
])
def test_pi_rules_attach_toggle(value, enabled):
    assert attach_enabled(value) is enabled


def test_only_read_edit_write_bash_attach():
    assert ATTACHING_TOOLS == {"read", "edit", "write", "bash"}


# -- golden blocks -----------------------------------------------------------------------


def _golden_rules() -> dict[str, Outcome]:
    return {
        "pinned": outcome(
            rule("typescript", "Use `const` by default.\n\nExported functions declare return types.",
                 enforcement="enforce"),
            12, ("touched src/app.ts",),
        ),
        "degraded": outcome(rule("big", "x" * 400, description="A long rule"), 100, ("touched src/app.ts",)),
        "on-demand": outcome(rule("design", load="on-demand", relative_path="api/design.md",
                                  description="REST   conventions\nfor handlers"), 0, ("touched src/api/x.ts",)),
        "on-demand-2": outcome(rule("db", load="on-demand", relative_path="db.md", description="Migrations"), 0),
    }


@pytest.mark.parametrize("name, active, on_demand, budget", [
    ("attach-pinned.md", ["pinned"], [], 2000),
    ("attach-degraded.md", ["degraded"], [], 60),
    ("attach-on-demand.md", [], ["on-demand", "on-demand-2"], 2000),
    ("attach-mixed.md", ["pinned", "degraded"], ["on-demand"], 130),
])
def test_attachment_block_matches_golden(name, active, on_demand, budget):
    rules = _golden_rules()
    trace = evaluation([rules[k] for k in active], [rules[k] for k in on_demand], budget=budget)
    batch = plan_batch(trace, set(), RENDER)
    assert batch.block is not None
    # What the model reads: the block as appended to the tool's output, separator first.
    assert_golden(name, append_block([], batch.block)[-1]["text"])
