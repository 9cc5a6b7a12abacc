"""Budget pools and pointers in selection (docs/format.md, "Budget pools" and "Pointers").

A pool is a budget of its own: rules in no pool keep RULE-SPEC §6 exactly, whatever the
pooled rules are; a pool holds at most its limit, nearest folder first, and lists the
rest in the index. A rule that points to another rule file keeps its pointer only while
that rule is delivered too.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from rules_core.model import BudgetPool, Rule, RuleFile
from rules_core.select import pool_admissions, select

POOL = BudgetPool("memory", 100)


def make(rule_id: str, index: int, size: int = 10, *, base: str = "/p", pool: BudgetPool | None = None,
         source: str = "project", priority: int = 0, points_to: tuple[str, ...] = (), inlined: str | None = None,
         body: str | None = None) -> Rule:
    file = RuleFile(f"{base}/{rule_id}.md", base, f"{rule_id}.md", base, "agents-md", "agents-md", source,  # type: ignore[arg-type]
                    (0, 0, "", rule_id))
    return Rule(file=file, description="d", body=body if body is not None else (rule_id + ":").ljust(size, "x"), always_apply=True,
                priority=priority, id=rule_id, index=index, pool=pool, points_to=points_to, inlined=inlined)


def cost(rule: Rule) -> int:
    return len(rule.body)


def ids(rules) -> list[str]:
    return [r.id for r in rules]


rule_sizes = st.lists(st.tuples(st.integers(4, 120), st.booleans(), st.integers(0, 4)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(rule_sizes, st.integers(1, 300))
def test_rules_in_no_pool_are_selected_as_if_the_pooled_ones_did_not_exist(spec, budget):
    rules = [make(f"r{i}", i, size, base="/p" + "/d" * depth, pool=POOL if pooled else None)
             for i, (size, pooled, depth) in enumerate(spec)]
    alone = select([r for r in rules if r.pool is None], budget, cost)
    together = select(rules, budget, cost)
    assert ids(r for r in together.active if r.pool is None) == ids(alone.active)
    assert together.budget_used == alone.budget_used
    assert ids(r for r in together.over_budget if r.pool is None) == ids(alone.over_budget)


@settings(max_examples=200, deadline=None)
@given(rule_sizes)
def test_a_pool_never_holds_more_than_its_limit_and_lists_the_rest(spec):
    rules = [make(f"r{i}", i, size, base="/p" + "/d" * depth, pool=POOL) for i, (size, _, depth) in enumerate(spec)]
    selection = select(rules, 10, cost)
    assert sum(cost(r) for r in selection.active) <= POOL.max_tokens
    assert selection.pools == ((POOL, sum(cost(r) for r in selection.active)),) if rules else selection.pools == ()
    # Nothing pooled is dropped silently: whatever the overflow setting, it is listed.
    assert ids(selection.listed("drop")) == ids(selection.over_budget)
    assert set(ids(selection.active)) | set(ids(selection.over_budget)) == set(ids(rules))


def test_the_nearer_folder_is_admitted_before_the_farther_and_global_last():
    root = make("root", 0, 60, base="/repo", pool=POOL)
    package = make("pkg", 1, 30, base="/repo/packages/a", pool=POOL)
    home = make("home", 2, 20, base="/repo/packages/a/src", pool=POOL, source="global")
    steps = pool_admissions([root, package, home], POOL.max_tokens, cost)
    assert [(s.rule.id, s.admitted) for s in steps] == [("pkg", True), ("root", True), ("home", False)]
    selection = select([root, package, home], 2000, cost)
    assert ids(selection.over_budget) == ["home"] and selection.dropped == {"home": "budget"}
    # The section's budget admits in discovery order instead (RULE-SPEC §6): a control.
    plain = select([make("root", 0, 60), make("pkg", 1, 30, base="/repo/packages/a")], 80, cost)
    assert ids(plain.active) == ["root"]


def test_a_pool_keeps_no_first_candidate_over_its_limit():
    selection = select([make("huge", 0, 150, pool=POOL)], 2000, cost)
    assert ids(selection.active) == [] and ids(selection.listed("drop")) == ["huge"]
    assert ids(select([make("huge", 0, 150)], 100, cost).active) == ["huge"]  # the section's budget keeps it


# -- pointers -------------------------------------------------------------------------


def bridge(index: int = 1, target: str = "/p/agents.md") -> Rule:
    return make("claude", index, body="(AGENTS.md reaches you as a rule of its own)", pool=POOL,
                points_to=(target,), inlined="the whole agents text, inlined")


def test_a_pointer_stays_while_its_rule_is_sent():
    selection = select([make("agents", 0, 20, pool=POOL), bridge()], 2000, cost)
    assert [r.body for r in selection.active if r.id == "claude"] == ["(AGENTS.md reaches you as a rule of its own)"]
    assert selection.inlined == ()


def test_a_pointer_to_a_rule_not_matched_is_replaced_by_the_text():
    selection = select([bridge()], 2000, cost)
    (claude,) = selection.active
    assert claude.body == "the whole agents text, inlined" and claude.points_to == () and claude.inlined is None
    assert selection.inlined == (claude,)


def test_a_pointer_stays_while_its_rule_is_an_index_line_or_read_by_the_host():
    listed = select([bridge(0), make("agents", 1, 80, pool=POOL)], 2000, cost)
    assert ids(listed.listed("drop")) == ["agents"] and listed.inlined == ()
    hosted = select([bridge()], 2000, cost, present=frozenset({"/p/agents.md"}))
    assert hosted.inlined == ()


def test_a_pointer_to_a_dropped_copy_stays_while_the_same_text_is_sent():
    original = make("agents", 0, body="same text", pool=POOL)
    copy = make("copy", 2, body="same text", pool=POOL)
    selection = select([original, bridge(), copy], 2000, cost)
    assert selection.dropped == {"agents": "duplicate"} and selection.inlined == ()


def test_a_section_budget_drop_without_index_is_not_a_delivery():
    target = make("agents", 0, 50)  # the section's budget, overflow = "drop": named nowhere
    first = make("first", 0, 60, priority=1)
    rules = [first, target, bridge(2)]
    assert ids(select(rules, 100, cost).inlined) == ["claude"]
    assert select(rules, 100, cost, "index").inlined == ()  # listed in the index: the pointer holds


# -- written against mutmut's last survivors (docs/mutation.md) ---------------------------


def test_a_pointer_to_a_dropped_copy_whose_text_is_not_sent_is_inlined():
    # The copy is a duplicate of a rule the section's budget then drops (overflow "drop"):
    # the text reaches the model nowhere, so the pointer must become the text.
    bridge_rule = make("claude", 0, body="(AGENTS.md reaches you as a rule of its own)",
                       points_to=("/p/agents.md",), inlined="the whole agents text, inlined")
    original = make("agents", 1, body="same text " * 20)
    copy = make("copy", 2, body="same text " * 20)
    selection = select([bridge_rule, original, copy], 100, cost)
    assert selection.dropped == {"agents": "duplicate", "copy": "budget"}
    assert ids(selection.inlined) == ["claude"]
    assert [r.body for r in selection.active] == ["the whole agents text, inlined"]


def test_every_rule_inlined_in_one_selection_is_named():
    one = make("one", 0, body="(see a)", points_to=("/p/a.md",), inlined="a's text")
    two = make("two", 1, body="(see b)", points_to=("/p/b.md",), inlined="b's text")
    selection = select([one, two], 2000, cost)
    assert ids(selection.inlined) == ["one", "two"]
    assert [r.body for r in selection.active] == ["a's text", "b's text"]


def test_a_folder_named_x_is_as_deep_as_its_path_says():
    # Depth is counted on the base with only its trailing slashes removed: a package folder
    # called "X" (or "XX") is one level below the repository, nearer than the root.
    root = make("root", 0, 60, base="/repo", pool=POOL)
    package = make("pkg", 1, 50, base="/repo/X", pool=POOL)
    steps = pool_admissions([root, package], POOL.max_tokens, cost)
    assert [(s.rule.id, s.admitted) for s in steps] == [("pkg", True), ("root", False)]
