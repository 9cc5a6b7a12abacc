"""The ``lint-budget`` plugin: ``budget-overflow`` warnings (docs/lint.md).

Always-on rules (no condition, pinned) are active in every session, so when together
they need more than the budget, the selection drops some of them every time — the
failure issue 15 found first: rules vanishing without a word. The check runs the
engine's own selection (``rules_core.select``: dedupe, then the greedy fill in budget
order) with the engine's own token estimate over exactly those rules, so the rules it
names are the ones a session without any touched file drops.
"""

from __future__ import annotations

from typing import Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext
from rules_core.model import Discovery, Rule, RuleWarning
from rules_core.select import select

CODE = "budget-overflow"
FIXES = (
    "raise the budget (PI_RULES_MAX_TOKENS, or max_tokens in .pi/rules.toml), give some of them "
    "load: on-demand or a condition, or set overflow = \"index\" so the dropped ones are listed for the model"
)
MAX_NAMED = 8  # a message stays one readable line: the rest are counted


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    rules = list(context.always_on)
    if not rules:
        return ()
    cost = {rule.id: context.tokens(rule) for rule in rules}
    selection = select(rules, context.max_tokens, lambda rule: cost[rule.id])
    # Byte-identical copies cost nothing more: one of them is sent (duplicate-body says which).
    counted = [r for r in rules if selection.dropped.get(r.id) != "duplicate"]
    total = sum(cost[r.id] for r in counted)
    if total <= context.max_tokens:
        return ()
    dropped = [r for r in rules if selection.dropped.get(r.id) == "budget"]
    together = (f"the {len(counted)} always-on rules need ~{total} estimated tokens together, over the "
                f"budget of {context.max_tokens}")
    if not dropped:
        # One rule alone over the budget is still sent (the first candidate always is);
        # then it is every other matching pinned rule that loses.
        alone = selection.active[0]
        return (RuleWarning(CODE, alone.file.path, (
            f"always-on rule {alone.id} alone needs ~{cost[alone.id]} estimated tokens, over the budget of "
            f"{context.max_tokens}: it is always sent and leaves no room, so every other pinned rule that "
            f"matches is dropped — {FIXES}"
        ), "lint-budget"),)
    kept = _named(selection.active, cost)
    lost = _named(dropped, cost)
    return tuple(
        RuleWarning(CODE, rule.file.path, (
            f"always-on rule {rule.id} (~{cost[rule.id]} tokens) is dropped in every session that "
            f"activates nothing else: {together}; sent: {kept}; dropped: {lost} — {FIXES}"
        ), "lint-budget")
        for rule in dropped
    )


def _named(rules: Sequence[Rule], cost: dict[str, int]) -> str:
    """``a (~500), b (~900)`` in the given order, the tail counted."""
    shown = ", ".join(f"{r.id} (~{cost[r.id]})" for r in rules[:MAX_NAMED])
    rest = len(rules) - MAX_NAMED
    return shown + (f" and {rest} more" if rest > 0 else "")
