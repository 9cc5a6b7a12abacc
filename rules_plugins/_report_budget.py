"""The report's budget lines (issue 15): what the model gets, what it misses, and why.

Every rule in the report gets a detail line — its description and size, and what became
of it — and a rule the budget left out says why in numbers and what to do. A summary
gives the pinned tokens per source, and one line says what the ``budget:`` and
``section:`` counts each cover. The numbers come from ``rules_core.delivery``, which the
JSON shapes read too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from rules_core import delivery
from rules_core.model import Evaluation, Outcome, Rule
from rules_core.safe import safe_line
from rules_core.select import OVERFLOW_INDEX, named_when_dropped

NATIVE_SCHEMA = "v1"  # only a native rule has a ``load`` key to set
SETTINGS_FILE = ".pi/rules.toml"


@dataclass(frozen=True)
class Budget:
    """What the lines of one report share: the limit, the overflow setting, the room each
    budget-dropped rule met and the copy each duplicate lost to."""

    limit: int
    overflow: str
    fits_all: int
    rooms: Mapping[str, int]
    kept: Mapping[str, str]
    pools: Mapping[str, int] = field(default_factory=dict)  # each budget pool's limit by name

    @classmethod
    def of(cls, evaluation: Evaluation) -> Budget:
        return cls(
            limit=evaluation.facts.max_tokens,
            overflow=evaluation.facts.overflow,
            fits_all=delivery.pinned_matched(evaluation),
            rooms=delivery.rooms(evaluation),
            kept=delivery.kept_copies(evaluation),
            pools={pool.name: pool.max_tokens for pool, _ in evaluation.pools},
        )


def tokens(count: int) -> str:
    return f"{count} token{'s' if count != 1 else ''}"


def description_line(rule: Rule) -> str:
    """The description folded to one line, as in the index, and escaped."""
    return safe_line(" ".join(rule.description.split()))


def outcome_details(outcome: Outcome, budget: Budget) -> list[str]:
    """The indented lines under a rule's head line in the report."""
    size = f"  {description_line(outcome.rule)} · {tokens(outcome.tokens)}"
    status = outcome.status
    if status == "active" and outcome.rule.pool is not None:
        return [f"{size} in the section, from the {safe_line(outcome.rule.pool.name)} pool"]
    if status == "active":
        # Selection always keeps its first candidate: say so, or "budget: 2551/2000" looks wrong.
        over = " (over the limit: the first candidate is always kept)" if outcome.tokens > budget.limit else ""
        return [f"{size} in the section{over}"]
    if status == "on-demand":
        return [f"{size} when fetched; only its index line is sent"]
    if status == "dropped" and outcome.cause == "duplicate":
        kept = budget.kept.get(outcome.rule.id) or "another rule"
        return [f"{size}, not sent: same body as {safe_line(kept)}"]
    if status == "dropped":
        return _over_budget(outcome, budget, size)
    return [size]


def _over_budget(outcome: Outcome, budget: Budget, size: str) -> list[str]:
    if outcome.rule.pool is not None:
        return _over_pool(outcome, budget, size)
    by_setting = budget.overflow == OVERFLOW_INDEX
    indexed = named_when_dropped(outcome.rule, budget.overflow)
    room = budget.rooms.get(outcome.rule.id, 0)
    fixes = [f"raise PI_RULES_MAX_TOKENS or max_tokens in {SETTINGS_FILE} ({budget.fits_all} fits every "
             "matched pinned rule)"]
    if outcome.rule.file.schema == NATIVE_SCHEMA:  # an imported rule has no such key
        fixes.append("`load: on-demand` in its frontmatter")
    if not indexed:
        fixes.append(f'overflow = "index" in {SETTINGS_FILE}')
    why = 'overflow = "index"' if by_setting else "rules in other tools' formats are never dropped unnamed"
    return [
        f"{size}, not sent" + (f"; listed in the index instead ({why})" if indexed else ""),
        f"  over budget: needs {tokens(outcome.tokens)}, {room} of {budget.limit} left when selection reached it",
        f"  fix: {'; or '.join(fixes)}",
    ]


def _over_pool(outcome: Outcome, budget: Budget, size: str) -> list[str]:
    """A pool never drops silently: the rule is in the index, and the lines say so."""
    name = outcome.rule.pool.name if outcome.rule.pool is not None else ""
    pool, limit = safe_line(name), budget.pools.get(name, 0)
    room = budget.rooms.get(outcome.rule.id, 0)
    return [
        f"{size}, not sent; listed in the index instead (the {pool} pool is full)",
        f"  over budget: needs {tokens(outcome.tokens)}, {room} of {limit} left in the {pool} pool when "
        "selection reached it (nearest folder first)",
        f"  fix: shorten it or a nearer file of the pool; or `disable` one in {SETTINGS_FILE}",
    ]


def budget_summary(evaluation: Evaluation) -> list[str]:
    """The ``pinned:`` line with one line per source, and the ``tokens:`` line that says
    what the budget and the section each count (the section also carries framing)."""
    sources = delivery.pinned_by_source(evaluation)
    sent = delivery.pinned_sent(evaluation)
    dropped = [o for o in evaluation.outcomes if delivery.over_budget(o)]
    if not sources:
        lines = ["pinned: no pinned rule matched"]
    else:
        head = f"pinned: {sent} of {tokens(sum(s.matched for s in sources))} in the section"
        if dropped:
            indexed = [o for o in dropped if delivery.delivery(o, evaluation.facts.overflow) == "index"]
            where = "" if not indexed else ", listed in the index" if len(indexed) == len(dropped) else (
                f", {len(indexed)} of them listed in the index")
            count = f"{len(dropped)} rule{'s' if len(dropped) != 1 else ''}"
            head += f"; {count} ({tokens(sum(o.tokens for o in dropped))}) left out by the budget{where}"
        lines = [head]
        lines.extend(f"  {_source_label(s)}: {s.sent} of {tokens(s.matched)}" for s in sources)
    # Each budget pool (docs/format.md, "Budget pools"), beside the section's budget line below.
    lines.extend(f"pool {safe_line(pool.name)}: {used}/{pool.max_tokens} estimated tokens — "
                 f"{safe_line(pool.summary)}" for pool, used in evaluation.pools)
    if evaluation.section:
        extra = max(evaluation.section_tokens - sent, 0)
        lines.append(
            "tokens: the budget counts pinned bodies only; the section counts everything sent — "
            f"bodies, framing, headings, trigger lines and the index (~{extra} more)"
        )
    return lines


def _source_label(row: delivery.SourceTokens) -> str:
    """``project (cursor)``; just ``global`` when the plugin is named like its source."""
    plugin = safe_line(row.plugin)
    return row.source if plugin == row.source else f"{row.source} ({plugin})"
