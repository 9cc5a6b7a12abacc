"""What the model gets from one evaluation, rule by rule and source by source (issue 15).

Pure functions over an ``Evaluation``. The text report and the JSON shapes both read
them, so the two never disagree, and nothing new is stored on the evaluation: every
number is recomputed from its outcomes with the very admission order selection used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .model import Evaluation, Outcome
from .select import budget_steps, dedupe_winner, named_when_dropped

Delivery = Literal["section", "index", "none"]
# Why an on-demand rule is listed, said the same way by the report and by explain.
ON_DEMAND_NOTE = "listed in the index; the model fetches it when relevant"


@dataclass(frozen=True)
class SourceTokens:
    """Pinned (always-on) tokens of one source and plugin: what matched, what was sent."""

    source: str
    plugin: str
    matched: int
    sent: int


def over_budget(outcome: Outcome) -> bool:
    return outcome.status == "dropped" and outcome.cause == "budget"


def competing(outcome: Outcome) -> bool:
    """A pinned rule that went through the budget: admitted, or left out by it (a
    duplicate copy never competes — the copy dedupe kept carries its body)."""
    return outcome.status == "active" or over_budget(outcome)


def delivery(outcome: Outcome, overflow: str) -> Delivery:
    """``section`` (its body is sent), ``index`` (only its reference line) or ``none``. A
    budget pool's overflow is always indexed (``Selection.listed``)."""
    if outcome.status == "active":
        return "section"
    if outcome.status == "on-demand" or (over_budget(outcome) and named_when_dropped(outcome.rule, overflow)):
        return "index"
    return "none"


def rooms(evaluation: Evaluation) -> dict[str, int]:
    """For each budget-dropped rule, the tokens its budget (the section's, or its pool's)
    had left when selection reached it (never below 0: the always-kept first candidate may
    overrun the section's limit)."""
    candidates = [o for o in evaluation.outcomes if competing(o)]
    tokens = {o.rule.id: o.tokens for o in candidates}
    steps = budget_steps([o.rule for o in candidates], evaluation.facts.max_tokens, lambda r: tokens[r.id])
    return {s.rule.id: max(s.room, 0) for s in steps if not s.admitted}


def kept_copies(evaluation: Evaluation) -> dict[str, str]:
    """For each rule dropped as a duplicate, the id of the copy with the same body that
    selection kept."""
    kept = {o.rule.body: o.rule.id for o in evaluation.outcomes if competing(o)}
    return {
        o.rule.id: kept.get(o.rule.body, "")
        for o in evaluation.outcomes
        if o.status == "dropped" and o.cause == "duplicate"
    }


def revived_copy(evaluation: Evaluation, rule_id: str) -> str | None:
    """The rule that takes ``rule_id``'s place once it is muted: the copy dedupe would keep
    among the identical bodies it dropped for it, or ``None``."""
    kept = next((o.rule for o in evaluation.outcomes if o.rule.id == rule_id and competing(o)), None)
    if kept is None:
        return None
    copies = [
        o.rule
        for o in evaluation.outcomes
        if o.status == "dropped" and o.cause == "duplicate" and o.rule.body == kept.body
    ]
    return dedupe_winner(copies).id if copies else None


def pinned_by_source(evaluation: Evaluation) -> tuple[SourceTokens, ...]:
    """Matched and sent pinned tokens per (source, plugin), in discovery order."""
    rows: dict[tuple[str, str], list[int]] = {}
    for outcome in evaluation.outcomes:
        if competing(outcome):
            row = rows.setdefault((outcome.rule.source, outcome.rule.file.plugin), [0, 0])
            row[0] += outcome.tokens
            row[1] += outcome.tokens if outcome.status == "active" else 0
    return tuple(SourceTokens(source, plugin, m, s) for (source, plugin), (m, s) in rows.items())


def pinned_matched(evaluation: Evaluation) -> int:
    """Tokens of every pinned rule that competed for the section's budget (a pool has its
    own): a limit this large keeps them all."""
    return sum(o.tokens for o in evaluation.outcomes if competing(o) and o.rule.pool is None)


def pinned_sent(evaluation: Evaluation) -> int:
    """Tokens of the pinned bodies the section carries: the section's budget and every pool's."""
    return evaluation.budget_used + sum(used for _, used in evaluation.pools)
