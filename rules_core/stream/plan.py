"""How the watcher searches a set of candidate stream rules: per tier — the user's own
(global) rules first, then the project's — the patterns that can share one alternation
are joined into two (short, bounded ones and long ones), so a delta that matches nothing
costs two small searches per tier however many rules there are; the rest are searched
one by one. Split out of ``rules_core.stream.watcher``, which runs the plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Sequence

from rules_core.stream.budget import GLOBAL, PROJECT, Member, tier_of
from rules_core.stream.model import StreamSpec

# The longest match the per-delta search looks for; longer matches of unbounded
# patterns are found by the whole-stream search when the stream ends.
WINDOW = 256


@dataclass(frozen=True)
class TierPlan:
    """``groups`` are alternations (regex, the widest match it needs to look back for, its
    members); ``alone`` the patterns that cannot join one. Members are (order, spec,
    pattern), order = discovery order, so firings are reported in it whatever the tier."""

    tier: int
    groups: tuple[tuple[Any, int, tuple[Member, ...]], ...]
    alone: tuple[Member, ...]


@dataclass(frozen=True)
class Plan:
    tiers: tuple[TierPlan, ...]  # the global tier first


def make_plan(specs: Sequence[StreamSpec], solo: Collection[str]) -> Plan:
    """``solo``: rules never joined (an alternation holding them overran its budget
    without showing which member was slow)."""
    members: dict[int, list[Member]] = {GLOBAL: [], PROJECT: []}
    for order, spec in enumerate(specs):
        for pattern in spec.patterns:
            members[tier_of(spec)].append((order, spec, pattern))
    tiers = tuple(_tier_plan(tier, members[tier], solo) for tier in (GLOBAL, PROJECT) if members[tier])
    return Plan(tiers)


def _tier_plan(tier: int, members: list[Member], solo: Collection[str]) -> TierPlan:
    short: list[Member] = []
    long: list[Member] = []
    alone: list[Member] = []
    for member in members:
        pattern = member[2]
        if not pattern.joinable or member[1].rule.id in solo:
            alone.append(member)
        elif pattern.width is not None and pattern.width <= WINDOW:
            short.append(member)
        else:
            long.append(member)
    groups = []
    for group, width in ((short, max((m[2].width or 0 for m in short), default=0)), (long, WINDOW)):
        if len(group) < 2:
            alone += group  # an alternation of one is the pattern itself
            continue
        import regex  # here: slow to import, and only armed stream rules need it

        try:
            union = regex.compile("|".join(m[2].scoped for m in group), cache_pattern=False)
        except (regex.error, RecursionError, OverflowError, MemoryError):
            alone += group  # too big or too odd to join: search each on its own
            continue
        groups.append((union, max(width, 1), tuple(group)))
    return TierPlan(tier, tuple(groups), tuple(alone))


def lookback(pattern_width: int | None) -> int:
    """How far before a delta a match ending in it may start (capped at ``WINDOW``)."""
    return pattern_width if pattern_width is not None and pattern_width <= WINDOW else WINDOW
