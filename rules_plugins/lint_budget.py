"""The ``lint-budget`` plugin: ``budget-overflow`` warnings (docs/lint.md).

Always-on rules (no condition, pinned) are active in every session, so when together
they need more than the budget, the selection drops some of them every time — the
failure issue 15 found first: rules vanishing without a word. The check runs the
engine's own selection (``rules_core.select``: dedupe, then the greedy fill in budget
order) with the engine's own token estimate over exactly those rules, so the rules it
names are the ones a session without any touched file drops. A budget pool (memory files,
docs/format.md "Budget pools") is checked against its own limit: what it cannot hold is
listed in the index instead of sent, in every session, and the warning says so.
"""

from __future__ import annotations

from typing import Callable, Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext
from rules_core.model import BudgetPool, Discovery, Rule, RuleWarning
from rules_core.select import select

CODE = "budget-overflow"
FIXES = (
    "raise the budget (PI_RULES_MAX_TOKENS, or max_tokens in .pi/rules.toml), give some of them "
    "load: on-demand or a condition, or set overflow = \"index\" so the dropped ones are listed for the model"
)
MAX_NAMED = 8  # a message stays one readable line: the rest are counted


POOL_FIXES = "shorten the files, or disable the ones the agent can do without in .pi/rules.toml"


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    rules = list(context.always_on)
    if not rules:
        return ()
    cost = {rule.id: context.tokens(rule) for rule in rules}
    selection = select(rules, context.max_tokens, lambda rule: cost[rule.id])
    # Byte-identical copies cost nothing more: one of them is sent (duplicate-body says which).
    counted = [r for r in rules if selection.dropped.get(r.id) != "duplicate"]
    warnings = _section_budget([r for r in counted if r.pool is None], selection.active, selection.dropped, cost,
                               context.max_tokens)
    pools: dict[str, tuple[BudgetPool, list[Rule]]] = {}
    for rule in counted:
        if rule.pool is not None:
            pools.setdefault(rule.pool.name, (rule.pool, []))[1].append(rule)
    for pool, members in pools.values():
        warnings += _pool(pool, members, selection.dropped, cost)
    return tuple(warnings)


def _section_budget(
    counted: list[Rule], active: Sequence[Rule], dropped_by: dict[str, str], cost: dict[str, int], limit: int
) -> list[RuleWarning]:
    """The section's budget (RULE-SPEC §6): rules in no pool."""
    total = sum(cost[r.id] for r in counted)
    if total <= limit:
        return []
    kept_rules = [r for r in active if r.pool is None]
    dropped = [r for r in counted if dropped_by.get(r.id) == "budget"]
    if not dropped:
        # One rule alone over the budget is still sent (the first candidate always is);
        # then it is every other matching pinned rule that loses.
        alone = kept_rules[0]
        return [RuleWarning(CODE, alone.file.path, (
            f"always-on rule {alone.id} alone needs ~{cost[alone.id]} estimated tokens, over the budget of "
            f"{limit}: it is always sent and leaves no room, so every other pinned rule that "
            f"matches is dropped — {FIXES}"
        ), "lint-budget")]
    kept, lost = _named(kept_rules, cost), _named(dropped, cost)
    summary = (f"{len(counted)} always-on rules need ~{total} estimated tokens together, over the budget of "
               f"{limit}: every session that activates nothing else sends {kept} and drops {lost} — {FIXES}")
    return _summary_then_each(dropped, summary, lambda rule: (
        f"always-on rule {rule.id} (~{cost[rule.id]} tokens) is dropped by the budget of {limit} "
        "(the budget-overflow summary says why and what to do)"))


def _pool(pool: BudgetPool, members: list[Rule], dropped_by: dict[str, str], cost: dict[str, int]) -> list[RuleWarning]:
    """A budget pool: what it cannot hold is named in the index, never sent whole."""
    total = sum(cost[r.id] for r in members)
    if total <= pool.max_tokens:
        return []
    listed = [r for r in members if dropped_by.get(r.id) == "budget"]
    kept, lost = _named([r for r in members if r not in listed], cost), _named(listed, cost)
    summary = (f"{len(members)} always-on rules of the {pool.name} pool need ~{total} estimated tokens together, "
               f"over its {pool.max_tokens}: every session sends {kept or 'none'} and lists {lost} in the index "
               f"instead — {POOL_FIXES}")
    return _summary_then_each(listed, summary, lambda rule: (
        f"always-on rule {rule.id} (~{cost[rule.id]} tokens) does not fit the {pool.name} pool: it is listed "
        "in the index, not sent (the budget-overflow summary says why and what to do)"))


def _summary_then_each(rules: Sequence[Rule], summary: str, line: Callable[[Rule], str]) -> list[RuleWarning]:
    """One summary per budget, then a short line per rule (issue 34: the long message was
    repeated for every dropped rule). The summary goes on the file that sorts first, and
    starts with a digit, so ``check``'s order (path, code, message) shows it first."""
    first = min(rules, key=lambda r: r.file.path)
    return [RuleWarning(CODE, first.file.path, summary, "lint-budget"),
            *(RuleWarning(CODE, rule.file.path, line(rule), "lint-budget") for rule in rules)]


def _named(rules: Sequence[Rule], cost: dict[str, int]) -> str:
    """``a (~500), b (~900)`` in the given order, the tail counted."""
    shown = ", ".join(f"{r.id} (~{cost[r.id]})" for r in rules[:MAX_NAMED])
    rest = len(rules) - MAX_NAMED
    return shown + (f" and {rest} more" if rest > 0 else "")
