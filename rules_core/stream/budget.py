"""What the conditions of stream rules may cost (issue 14), and what happens when one
costs more: it is switched off for the session, reported in one line, and remembered.

A condition is a regex from a repository nobody vetted, run on every delta the model
streams. Three bounds, each on time actually spent searching:

- **one search**: ``SEARCH_SECONDS`` (the ``regex`` module's own timeout), so nothing hangs;
- **one call** (a delta, a stream's end, a snapshot check): the user's own (global) rules
  and the project's rules each get ``PI_RULES_STREAM_BUDGET_MS`` (default 1000 ms). The
  global rules are searched first, so a repository can never crowd them out; once the
  project's rules have spent their budget the rest of them are not searched in that call
  (cut), and the rules that spent it are switched off;
- **a session**: every search is allowed ``ALLOWANCE_SECONDS`` plus ``ALLOWANCE_PER_CHAR``
  per character searched, and time over that is debt that the next searches pay back (a
  leaky bucket, so a loaded machine's hiccup is forgiven). A rule whose debt passes
  ``RULE_DEBT_SECONDS`` is switched off; when the rules of one tier together owe more than
  ``TIER_DEBT_SECONDS``, every rule among them that owes ``BLAME_SECONDS`` is. (Debts
  live as long as the watcher: a per-process host keeps only the switch-offs.)

An alternation of many rules that overran is followed by each member on its own, each
under ``SUSPECT_SECONDS``, so the slow ones are named without paying 0.1 s apiece. So a
hundred conditions that each take 40 ms — under the limit of one search — cost at
most about a call budget per delta until they are off, instead of seconds on every delta.
A switch-off is keyed by rule id and a fingerprint of its conditions; ``Meter.export_off``
and ``import_off`` let a host that starts a process per event (Claude Code) keep it in
its state file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from rules_core.stream.model import StreamPattern, StreamSpec

BUDGET_ENV = "PI_RULES_STREAM_BUDGET_MS"
DEFAULT_BUDGET_MS = 1000  # per call and tier; Claude Code allows a hook 30 s in our config
SEARCH_SECONDS = 0.1
ALLOWANCE_SECONDS = 0.001  # a plain condition searches a 300-character window in microseconds
ALLOWANCE_PER_CHAR = 1e-6
RULE_DEBT_SECONDS = 0.25
TIER_DEBT_SECONDS = 1.0
BLAME_SECONDS = 0.005
# A member of an alternation that overran, or a rule proven slow, may take this long (or ten
# allowances, for long texts) before it counts as slow: 300 catastrophic conditions are then
# found in a few calls, not 0.1 s each.
SUSPECT_SECONDS = 0.02
MAX_FAULTS = 16
MAX_OFF = 4096  # switch-offs remembered (the oldest forgotten first: it may be tried again)
MAX_DEBTS = 4096
FIX_ONE = "simplify its nested or overlapping repetitions"
FIX_MANY = "simplify their nested or overlapping repetitions"
GLOBAL, PROJECT = 0, 1
_TIER_NAMES = ("global", "project")


@dataclass(frozen=True)
class StreamBudget:
    """``call_seconds``: what each tier's searches may spend in one call (None: no limit).
    ``clock``: what every cost is measured with (seconds); a test gives a clock that moves
    a fixed step per reading, so what a search costs is a count, the same on any machine.
    One search's own limit stays the regex module's, on real time."""

    call_seconds: float | None = DEFAULT_BUDGET_MS / 1000
    search_seconds: float = SEARCH_SECONDS
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False, repr=False)


def budget_from_env(env: Mapping[str, str]) -> StreamBudget:
    """``PI_RULES_STREAM_BUDGET_MS``: positive milliseconds, ``0``/``off`` for no call budget
    (one search stays limited); anything else is the default, so a typo cannot switch the
    protection off."""
    raw = (env.get(BUDGET_ENV) or "").strip().lower()
    if raw in ("0", "off", "none"):
        return StreamBudget(call_seconds=None)
    if raw.isdigit() and int(raw) > 0:
        return StreamBudget(call_seconds=int(raw) / 1000)
    return StreamBudget()


def tier_of(spec: StreamSpec) -> int:
    return GLOBAL if spec.is_global else PROJECT


Member = tuple[int, StreamSpec, StreamPattern]  # (discovery order, spec, pattern)


@dataclass
class _Debt:
    seconds: float
    spec: StreamSpec
    pattern: StreamPattern


class _Tier:
    """One tier within one call (a plain class with slots: two are made per delta)."""

    __slots__ = ("spent", "cut", "skipped", "costs", "unions", "suspects")

    def __init__(self) -> None:
        self.spent = 0.0
        self.cut = False
        self.skipped = 0
        # Per rule, what it spent in this call and the pattern it spent it on (for blame).
        self.costs: dict[str, tuple[float, StreamSpec, StreamPattern]] = {}
        self.unions: list[Sequence[Member]] = []  # alternations that overran
        self.suspects: set[str] = set()  # their members


@dataclass
class _Off:
    spec: StreamSpec
    pattern: StreamPattern
    why: str  # the whole reason, when it is the only rule of the report
    short: str  # the figure, in a report naming several


class Meter:
    """Per watcher: times every search against the budgets, switches off, reports.

    ``version`` changes whenever a rule is switched off or must no longer share an
    alternation, so the watcher knows to recompute what it searches."""

    def __init__(self, budget: StreamBudget | None = None) -> None:
        self.budget = budget or StreamBudget()
        self._clock = self.budget.clock
        self.off: dict[str, str] = {}  # rule id -> fingerprint of the conditions switched off
        self.solo: set[str] = set()  # rules searched on their own, never in an alternation
        self.version = 0
        self.searches = 0  # individual rule searches run, for tests and diagnostics
        self.faults: list[str] = []  # the latest MAX_FAULTS report lines
        self.fault_count = 0
        self._debts: dict[str, _Debt] = {}
        self._tier_debt = [0.0, 0.0]
        self._depth = 0
        self._tiers: list[_Tier] | None = None  # this call's, made by its first search
        self._call_start = 0.0  # when the current public call began (issue 26: it bounds the whole call)
        self._switched: list[_Off] = []
        self._notes: list[str] = []  # other things this call must report (a cap reached)

    # -- what is off ------------------------------------------------------------------

    def is_off(self, spec: StreamSpec) -> bool:
        return spec.rule.id in self.off and self.off[spec.rule.id] == spec.fingerprint

    def export_off(self) -> dict[str, str]:
        return dict(self.off)

    def import_off(self, known: Any) -> None:
        """Switch-offs an earlier process reported (hostile shapes are ignored)."""
        if not isinstance(known, Mapping):
            return
        for rule_id, fingerprint in list(known.items())[:MAX_OFF]:
            if isinstance(rule_id, str) and isinstance(fingerprint, str) and self.off.get(rule_id) != fingerprint:
                self._remember_off(rule_id, fingerprint)

    # -- calls ------------------------------------------------------------------------

    # ``with meter:`` brackets one public call of the watcher; nested calls (``check`` =
    # feed + end) share it. A class, not a generator: it runs on every delta.

    def __enter__(self) -> Meter:
        if self._depth == 0:
            self._call_start = self._clock()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and (self._tiers is not None or self._notes):
            tiers, self._tiers = self._tiers or [], None
            if self._switched or self._notes or any(t.cut for t in tiers) or max(self._tier_debt) > TIER_DEBT_SECONDS:
                self._finish(tiers)
                self._switched, self._notes = [], []

    def note(self, line: str) -> None:
        """Something else the current call reports, in its one line (a cap reached)."""
        self._notes.append(line)
        if self._depth == 0:
            self._finish([])
            self._notes = []

    def search(self, spec: StreamSpec, pattern: StreamPattern, text: str, pos: int) -> Any:
        """One rule's search within the budgets; ``None`` when it is off, cut or too slow."""
        if self.is_off(spec):
            return None
        tier_index = tier_of(spec)
        tier = self._tier(tier_index)
        if tier_index == PROJECT:
            self._whole_call(tier)
        chars = max(0, len(text) - pos)
        allowance = ALLOWANCE_SECONDS + ALLOWANCE_PER_CHAR * chars
        suspect = max(SUSPECT_SECONDS, 10 * allowance)
        if tier.cut:
            # Past the budget only one search is left, and only when an alternation used it
            # all before any rule was timed: its first member, so every cut names a culprit.
            if tier.costs or spec.rule.id not in tier.suspects:
                tier.skipped += 1
                return None
            limit = min(suspect, self.budget.search_seconds)
        else:
            limit = self._limit(tier, tier_index)
            if spec.rule.id in tier.suspects or spec.rule.id in self.solo:
                limit = min(limit, suspect)
        start = self._clock()
        try:
            found = pattern.regex.search(text, pos, timeout=limit)
            timed_out = False
        except TimeoutError:
            found, timed_out = None, True
        cost = self._clock() - start
        self.searches += 1
        rule_id = spec.rule.id
        before = tier.costs.get(rule_id, (0.0, spec, pattern))[0]
        tier.costs[rule_id] = (before + cost, spec, pattern)
        debt = self._owe(tier_index, tier, spec, pattern, cost, allowance)
        if debt >= BLAME_SECONDS and rule_id not in self.solo:
            # Proven slow on its own: it no longer shares an alternation, whose overrun
            # would make every member be searched again one by one.
            if len(self.solo) >= MAX_DEBTS:
                self.solo.clear()  # only a cost: they share alternations again
            self.solo.add(rule_id)
            self.version += 1
        if timed_out and limit >= self.budget.search_seconds:
            self._switch_off(spec, pattern, f"took over {limit:g} s on {chars} characters (catastrophic backtracking?)",
                             f"over {limit:g} s")
        elif debt > RULE_DEBT_SECONDS:
            over = f"{debt * 1000:.0f} ms over"
            self._switch_off(spec, pattern, f"has taken {debt * 1000:.0f} ms more than its searches warrant", over)
        return found

    def search_union(self, tier_index: int, union: Any, members: Sequence[Member], text: str, pos: int) -> bool | None:
        """An alternation of several rules: True (a member matches), False (none does, or
        the tier is cut), None (it overran: search the members one by one to learn which)."""
        # Runs twice per tier on every delta: _tier, _limit and the tier's part of _owe inline.
        tiers = self._tiers
        if tiers is None:
            tiers = self._tiers = [_Tier(), _Tier()]
        tier = tiers[tier_index]
        if tier_index == PROJECT:
            self._whole_call(tier)
        if tier.cut:
            tier.skipped += len(members)
            return False
        limit = self._limit(tier, tier_index)
        call = self.budget.call_seconds
        start = self._clock()
        try:
            hit: bool | None = union.search(text, pos, timeout=limit) is not None
        except TimeoutError:
            hit = None
        cost = self._clock() - start
        allowance = len(members) * (ALLOWANCE_SECONDS + ALLOWANCE_PER_CHAR * (len(text) - pos))
        tier.spent += cost
        if call is not None and tier.spent >= call:
            tier.cut = True
        debt = self._tier_debt[tier_index] + cost - allowance
        self._tier_debt[tier_index] = debt if debt > 0.0 else 0.0
        if hit is None or cost > allowance:
            tier.unions.append(members)
            tier.suspects.update(member[1].rule.id for member in members)
            return None
        return hit

    # -- internals --------------------------------------------------------------------

    def _tier(self, index: int) -> _Tier:
        tiers = self._tiers
        if tiers is None:
            tiers = self._tiers = [_Tier(), _Tier()]
        return tiers[index]

    def _limit(self, tier: _Tier, tier_index: int = GLOBAL) -> float:
        """What one search of the tier may take now: the search limit, or what is left of
        the call's budget (positive: a tier with nothing left is cut and searches nothing).
        The project's searches also stop where the whole call's budget ends."""
        call = self.budget.call_seconds
        if call is None:
            return self.budget.search_seconds
        left = call - tier.spent
        if tier_index == PROJECT and self._depth:
            left = min(left, call - (self._clock() - self._call_start))
        return self.budget.search_seconds if left >= self.budget.search_seconds else max(left, 1e-4)

    def _whole_call(self, tier: _Tier) -> None:
        """Cut the project's tier once the whole call — the user's rules, every search,
        alternation and overhead since it began — has used the call budget (issue 26: the
        limit bounds the call, not each condition's searches)."""
        call = self.budget.call_seconds
        if call is not None and self._depth and not tier.cut and self._clock() - self._call_start >= call:
            tier.cut = True

    def _owe(
        self, tier_index: int, tier: _Tier, spec: StreamSpec, pattern: StreamPattern, cost: float, allowance: float
    ) -> float:
        """Charge one rule's search to the call's tier, the tier's debt and the rule's debt;
        return the rule's debt."""
        tier.spent += cost
        if self.budget.call_seconds is not None and tier.spent >= self.budget.call_seconds:
            tier.cut = True
        self._tier_debt[tier_index] = max(0.0, self._tier_debt[tier_index] + cost - allowance)
        entry = self._debts.get(spec.rule.id)
        debt = max(0.0, (entry.seconds if entry else 0.0) + cost - allowance)
        if debt == 0.0:
            self._debts.pop(spec.rule.id, None)  # only rules that owe are kept
        else:
            self._debts[spec.rule.id] = _Debt(debt, spec, pattern)
            if len(self._debts) > MAX_DEBTS:
                self._debts.pop(next(iter(self._debts)))
        return debt

    def _switch_off(self, spec: StreamSpec, pattern: StreamPattern, why: str, short: str) -> None:
        if self.is_off(spec):
            return
        self._remember_off(spec.rule.id, spec.fingerprint)
        self._debts.pop(spec.rule.id, None)
        self._switched.append(_Off(spec, pattern, why, short))

    def _remember_off(self, rule_id: str, fingerprint: str) -> None:
        self.off.pop(rule_id, None)
        self.off[rule_id] = fingerprint
        if len(self.off) > MAX_OFF:
            self.off.pop(next(iter(self.off)))
        self.version += 1

    def _finish(self, tiers: list[_Tier]) -> None:
        """End of a call: blame the tiers that ran over, then report in one line."""
        for index, tier in enumerate(tiers):
            if tier.cut or self._tier_debt[index] > TIER_DEBT_SECONDS:
                self._blame(index, tier)
        cut = [(index, tier) for index, tier in enumerate(tiers) if tier.cut]
        if self._switched or cut or self._notes:
            self._report(self._switched, cut, self._notes)

    def _blame(self, index: int, tier: _Tier) -> None:
        """The tier ran over: switch off every rule of it that owes, or failing that the
        one that spent most in this call. The members of alternations that overran are
        searched on their own from now on, so the next call times each of them."""
        self._tier_debt[index] = 0.0
        if tier.cut and tier.unions:
            if len(self.solo) >= MAX_DEBTS:
                self.solo.clear()
            self.solo.update(member[1].rule.id for members in tier.unions for member in members)
            self.version += 1
        owing = [d for d in self._debts.values() if tier_of(d.spec) == index and d.seconds >= BLAME_SECONDS]
        together = f"while the {_TIER_NAMES[index]} stream rules together ran over budget"
        for debt in owing:
            over = f"{debt.seconds * 1000:.0f} ms over"
            self._switch_off(debt.spec, debt.pattern, f"ran {over} its allowance {together}", over)
        if not owing and not any(tier_of(o.spec) == index for o in self._switched) and tier.costs:
            cost, spec, pattern = max(tier.costs.values(), key=lambda entry: entry[0])
            took = f"took {cost * 1000:.0f} ms"
            self._switch_off(spec, pattern, f"{took}, the most of a call that ran over budget", took)

    def _report(self, switched: Sequence[_Off], cut: Sequence[tuple[int, _Tier]], notes: Sequence[str]) -> None:
        parts: list[str] = []
        if not switched and not cut:
            line = "; ".join(notes)
        elif len(switched) == 1 and not cut and not notes:
            off = switched[0]
            line = f"stream rule {_name(off)} {off.why}; it is off for this session — {FIX_ONE}"
        else:
            if switched:
                named = ", ".join(
                    f"{off.spec.rule.id} ({off.spec.rule.relative_path}) /{off.pattern.source}/ {off.short}"
                    for off in switched[:3]
                )
                more = f" and {len(switched) - 3} more" if len(switched) > 3 else ""
                count = "1 stream rule is" if len(switched) == 1 else f"{len(switched)} stream rules are"
                parts.append(f"{count} off for this session, too slow: {named}{more}")
            for index, tier in cut:
                parts.append(
                    f"the {_TIER_NAMES[index]} stream rules ran over the budget of one call "
                    f"({self.budget.call_seconds or 0:g} s, {BUDGET_ENV}) and {tier.skipped} searches were cut"
                )
            line = "; ".join(parts + list(notes)) + f" — {FIX_MANY}"
        self.fault_count += 1
        self.faults = self.faults[-(MAX_FAULTS - 1):] + [line]


def _name(off: _Off) -> str:
    return f"{off.spec.rule.id} ({off.spec.rule.relative_path}): condition /{off.pattern.source}/"
