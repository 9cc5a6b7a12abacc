"""Selection (RULE-SPEC §6): dedupe, budget and presentation order. Pure functions."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

from .model import BudgetPool, Rule

ENFORCEMENT_RANK = {"enforce": 0, "recommend": 1, "inform": 2}
OVERFLOW_INDEX = "index"


@dataclass(frozen=True)
class Selection:
    active: tuple[Rule, ...]  # pinned and admitted, in presentation order
    on_demand: tuple[Rule, ...]  # matched on-demand rules, in presentation order
    dropped: dict[str, str]  # rule id -> cause ("duplicate" or "budget")
    budget_used: int  # the section's budget (RULE-SPEC §6); pools count apart
    # Pinned rules a budget left out, in presentation order: ``overflow = "index"`` lists
    # the section budget's after the on-demand rules (CONTRACT §6), a pool's always.
    over_budget: tuple[Rule, ...] = ()
    # Each budget pool a candidate competed in, with the tokens it admitted.
    pools: tuple[tuple[BudgetPool, int], ...] = ()
    # Rules sent with their pointed-to text inlined (``Rule.inlined``), as selected.
    inlined: tuple[Rule, ...] = ()

    def listed(self, overflow: str) -> tuple[Rule, ...]:
        """The budget-dropped rules the index names (``named_when_dropped``)."""
        return tuple(r for r in self.over_budget if named_when_dropped(r, overflow))


def named_when_dropped(rule: Rule, overflow: str) -> bool:
    """Whether the index names ``rule`` when its budget leaves it out: a pool's always (a
    pool never drops silently), one whose importer asks for it always (``Rule.overflow``),
    the rest with ``overflow = "index"``."""
    return rule.pool is not None or rule.overflow == OVERFLOW_INDEX or overflow == OVERFLOW_INDEX


@dataclass(frozen=True)
class Admission:
    """One budget candidate as selection met it: its cost, the room the budget still had
    (negative once the always-kept first candidate overran it), and the verdict."""

    rule: Rule
    cost: int
    room: int
    admitted: bool


def select(
    matched: Sequence[Rule], budget: int, estimate: Callable[[Rule], int], overflow: str = "drop",
    present: frozenset[str] = frozenset(),
) -> Selection:
    """Split matched rules into the section's pinned entries, the index, and the dropped.

    A selected rule whose body points to other rule files (``Rule.points_to``) keeps its
    pointers only while each of them is delivered too — as an entry or an index line, or
    by the host itself (``present``: files its agent reads) —; otherwise it is selected
    again with their text inlined (``Rule.inlined``). Each pass inlines one more rule at
    least, so this ends.
    """
    rules = list(matched)
    inlined: dict[int, Rule] = {}
    selection = _select_once(rules, budget, estimate)
    for _ in range(len(rules)):
        stale = _stale_pointers(selection, rules, overflow, present)
        if not stale:
            break
        swapped = [_inline(r) if id(r) in stale else r for r in rules]
        inlined.update({id(new): new for old, new in zip(rules, swapped) if new is not old})
        rules = swapped
        selection = _select_once(rules, budget, estimate)
    return dataclasses.replace(selection, inlined=tuple(inlined.values())) if inlined else selection


def _select_once(matched: Sequence[Rule], budget: int, estimate: Callable[[Rule], int]) -> Selection:
    pinned = [r for r in matched if r.load == "pinned"]
    on_demand = [r for r in matched if r.load == "on-demand"]
    survivors, dropped = dedupe(pinned)
    steps = budget_steps(survivors, budget, estimate)
    admitted = [s.rule for s in steps if s.admitted]
    over_budget = [s.rule for s in steps if not s.admitted]
    dropped.update({r.id: "budget" for r in over_budget})
    used = {name: 0 for name in declared_pools(survivors)}
    for step in steps:
        if step.rule.pool is not None and step.admitted:
            used[step.rule.pool.name] += step.cost
    # An index line never offers a text the same section already sends whole.
    sent = {r.body for r in admitted}
    dropped.update({r.id: "duplicate" for r in on_demand if r.body in sent})
    on_demand = [r for r in on_demand if r.body not in sent]
    return Selection(
        active=tuple(presentation_order(admitted)),
        on_demand=tuple(presentation_order(on_demand)),
        dropped=dropped,
        budget_used=sum(s.cost for s in steps if s.admitted and s.rule.pool is None),
        over_budget=tuple(presentation_order(over_budget)),
        pools=tuple((pool, used[name]) for name, pool in declared_pools(survivors).items()),
    )


def _stale_pointers(selection: Selection, matched: Sequence[Rule], overflow: str, present: frozenset[str]) -> set[int]:
    """The selected rules (by object identity) pointing to a rule file this delivery
    does not carry: neither entry nor index line, nor a copy with the same body sent,
    nor a file the host reads itself."""
    sent = {*present, *(r.file.path for r in (*selection.active, *selection.on_demand, *selection.listed(overflow)))}
    bodies = {r.body for r in selection.active}
    copies = {r.file.path for r in matched if selection.dropped.get(r.id) == "duplicate" and r.body in bodies}
    return {id(r) for r in selection.active
            if r.inlined is not None and any(p not in sent and p not in copies for p in r.points_to)}


def _inline(rule: Rule) -> Rule:
    return dataclasses.replace(rule, body=rule.inlined or rule.body, points_to=(), inlined=None)


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


def budget_steps(rules: Sequence[Rule], budget: int, estimate: Callable[[Rule], int]) -> list[Admission]:
    """Every candidate as its budget met it: the section's (RULE-SPEC §6) for rules in no
    pool, then each pool's, by the pool name's first appearance. The report replays this
    over an evaluation's outcomes to say what was left when a rule was dropped."""
    steps = admissions([r for r in rules if r.pool is None], budget, estimate)
    for name, pool in declared_pools(rules).items():
        members = [r for r in rules if r.pool is not None and r.pool.name == name]
        steps += pool_admissions(members, pool.max_tokens, estimate)
    return steps


def declared_pools(rules: Sequence[Rule]) -> dict[str, BudgetPool]:
    """Each pool the rules name, by name; the first declaration of a name wins."""
    pools: dict[str, BudgetPool] = {}
    for rule in rules:
        if rule.pool is not None:
            pools.setdefault(rule.pool.name, rule.pool)
    return pools


def admissions(rules: Sequence[Rule], budget: int, estimate: Callable[[Rule], int]) -> list[Admission]:
    """The section budget's candidates in budget order with the room each met."""
    steps: list[Admission] = []
    used, kept_one = 0, False
    for rule in sorted(rules, key=budget_key):
        cost = estimate(rule)
        admitted = not kept_one or used + cost <= budget
        steps.append(Admission(rule, cost, budget - used, admitted))
        if admitted:
            used, kept_one = used + cost, True
    return steps


def pool_admissions(rules: Sequence[Rule], limit: int, estimate: Callable[[Rule], int]) -> list[Admission]:
    """A pool's candidates, most specific first (``pool_key``), skip-and-continue. Unlike
    the section's budget a pool keeps no candidate past its limit: that one is indexed."""
    steps: list[Admission] = []
    used = 0
    for rule in sorted(rules, key=pool_key):
        cost = estimate(rule)
        admitted = used + cost <= limit
        steps.append(Admission(rule, cost, limit - used, admitted))
        used += cost if admitted else 0
    return steps


def pool_key(rule: Rule) -> tuple[int, int, bool, int, int]:
    """Priority and enforcement as in the section's budget, then the nearer rule first: a
    project rule whose base (the folder its scope is relative to) lies deeper before one
    whose base is shallower, and the user's global rules last."""
    priority, enforcement, index = budget_key(rule)
    return (priority, enforcement, rule.source == "global", -rule.file.base.rstrip("/").count("/"), index)


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
