"""Selection (RULE-SPEC §6): dedupe, budget and presentation order. Pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .model import Rule

ENFORCEMENT_RANK = {"enforce": 0, "recommend": 1, "inform": 2}


@dataclass(frozen=True)
class Selection:
    active: tuple[Rule, ...]  # pinned and admitted, in presentation order
    on_demand: tuple[Rule, ...]  # matched on-demand rules, in presentation order
    dropped: dict[str, str]  # rule id -> cause ("duplicate" or "budget")
    budget_used: int
    # Pinned rules the budget left out, in presentation order: ``overflow = "index"``
    # lists them after the on-demand rules (CONTRACT §6).
    over_budget: tuple[Rule, ...] = ()


@dataclass(frozen=True)
class Admission:
    """One budget candidate as selection met it: its cost, the room the budget still had
    (negative once the always-kept first candidate overran it), and the verdict."""

    rule: Rule
    cost: int
    room: int
    admitted: bool


def select(
    matched: Sequence[Rule], budget: int, estimate: Callable[[Rule], int]
) -> Selection:
    """Split matched rules into the section's pinned entries, the index, and the dropped."""
    pinned = [r for r in matched if r.load == "pinned"]
    on_demand = [r for r in matched if r.load == "on-demand"]
    survivors, dropped = dedupe(pinned)
    admitted, over_budget, used = fill_budget(survivors, budget, estimate)
    dropped.update({r.id: "budget" for r in over_budget})
    # An index line never offers a text the same section already sends whole.
    sent = {r.body for r in admitted}
    dropped.update({r.id: "duplicate" for r in on_demand if r.body in sent})
    on_demand = [r for r in on_demand if r.body not in sent]
    return Selection(
        active=tuple(presentation_order(admitted)),
        on_demand=tuple(presentation_order(on_demand)),
        dropped=dropped,
        budget_used=used,
        over_budget=tuple(presentation_order(over_budget)),
    )


def dedupe(rules: Sequence[Rule]) -> tuple[list[Rule], dict[str, str]]:
    """Byte-identical bodies keep one rule: higher priority, then the later index."""
    winners: dict[str, Rule] = {}
    for rule in rules:
        best = winners.get(rule.body)
        winners[rule.body] = rule if best is None else dedupe_winner((best, rule))
    keep = {id(r) for r in winners.values()}
    survivors = [r for r in rules if id(r) in keep]
    dropped = {r.id: "duplicate" for r in rules if id(r) not in keep}
    return survivors, dropped


def dedupe_winner(copies: Sequence[Rule]) -> Rule:
    """The copy dedupe keeps among rules with one body: higher priority, then later index."""
    return max(copies, key=lambda r: (r.priority, r.index))


def fill_budget(
    rules: Sequence[Rule], budget: int, estimate: Callable[[Rule], int]
) -> tuple[list[Rule], list[Rule], int]:
    """Greedy skip-and-continue fill; the first candidate is kept even when too large."""
    steps = admissions(rules, budget, estimate)
    admitted = [s.rule for s in steps if s.admitted]
    rejected = [s.rule for s in steps if not s.admitted]
    return admitted, rejected, sum(s.cost for s in steps if s.admitted)


def admissions(rules: Sequence[Rule], budget: int, estimate: Callable[[Rule], int]) -> list[Admission]:
    """Every candidate in budget order with the room it met. The report replays this over
    an evaluation's outcomes to say what was left when a rule was dropped."""
    steps: list[Admission] = []
    used, kept_one = 0, False
    for rule in sorted(rules, key=budget_key):
        cost = estimate(rule)
        admitted = not kept_one or used + cost <= budget
        steps.append(Admission(rule, cost, budget - used, admitted))
        if admitted:
            used, kept_one = used + cost, True
    return steps


def budget_key(rule: Rule) -> tuple[int, int, int]:
    return (-rule.priority, ENFORCEMENT_RANK.get(rule.enforcement, 2), rule.index)


def presentation_order(rules: Sequence[Rule]) -> list[Rule]:
    """Unconditional rules first, then priority DESC, then discovery index ASC."""
    return sorted(rules, key=lambda r: (not r.unconditional, -r.priority, r.index))


def utf16_token_estimate(text: str) -> int:
    """``ceil(n / 4)`` with ``n`` in UTF-16 code units, as JavaScript counts length."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    return -(-units // 4)


def parse_max_tokens(value: str | None, default: int = 2000) -> int:
    """``PI_RULES_MAX_TOKENS`` parsed like JavaScript ``parseInt(value)``."""
    parsed = js_parse_int(value) if value is not None else None
    return parsed if parsed is not None and parsed > 0 else default


def js_parse_int(text: str) -> int | None:
    """JavaScript ``parseInt(text)`` with no radix; ``None`` stands for NaN."""
    s = text.lstrip(" \t\n\r\v\f\u00a0\ufeff\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
    sign = 1
    if s and s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    radix, digits = 10, "0123456789"
    if s[:2].lower() == "0x":
        radix, digits, s = 16, "0123456789abcdef", s[2:]
    end = 0
    while end < len(s) and s[end].lower() in digits:
        end += 1
    if end == 0:
        return None
    return sign * int(s[:end], radix)
