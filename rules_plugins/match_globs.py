"""The ``globs`` matcher: path activation = touched OR exists OR intent (RULE-SPEC §5).

``match: touched`` looks only at touched paths, ``exists`` only at the exists scan,
``both`` at either; intent globs from the turn prompt satisfy any mode.
"""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator, Mapping

from rules_core import hookimpl
from rules_core.compiled import EMPTY_GLOBSET, GlobSet
from rules_core.globs import normalize_path
from rules_core.model import Intent, MatchContext, Rule, Verdict

RANK = 10


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if not rule.globs:
        return []
    globset: GlobSet = rule.compiled.globs if rule.compiled is not None else EMPTY_GLOBSET
    if rule.match in ("touched", "both"):
        hit = globset.first_match(context.touched)
        if hit is not None:
            return [Verdict("globs", True, (f"touched {hit}",), RANK)]
    if rule.match in ("exists", "both"):
        hit = globset.first_match(_existing_candidates(rule, context.existing))
        if hit is not None:
            return [Verdict("globs", True, (f"exists {hit}",), RANK)]
    intent = _first_intent(globset, context.intents)
    if intent is not None:
        return [Verdict("globs", True, (f"intent {intent}",), RANK)]
    return [Verdict("globs", False, (_mismatch(rule, globset, context.touched),), RANK)]


def _existing_candidates(rule: Rule, existing: Mapping[str, tuple[str, ...]]) -> Iterator[str]:
    """The scan's files for this rule's positive globs, merged in sorted order, once each."""
    lists: Iterable[tuple[str, ...]] = (existing.get(g, ()) for g in rule.positive_globs)
    previous = None
    for path in heapq.merge(*lists):
        if path != previous:
            previous = path
            yield path


def _first_intent(globset: GlobSet, intents: tuple[Intent, ...]) -> str | None:
    for intent in intents:
        if intent.kind == "keyword":
            if normalize_path(intent.glob) in globset.positive_texts:
                return intent.glob
        else:
            probe = "intent." + intent.glob.rsplit(".", 1)[-1]
            if any(segment.match_normalized(probe) for segment in globset.last_segments):
                return intent.glob
    return None


def _mismatch(rule: Rule, globset: GlobSet, touched: tuple[str, ...]) -> str:
    globs = ", ".join(rule.globs)
    if rule.match == "exists":
        hit = globset.first_match(touched)
        if hit is not None:
            # Say why a matching path did not count: the usual surprise with exists rules.
            return f"no existing path matches globs {globs} (touched {hit} matches, but match is exists)"
    where = {"touched": "touched", "exists": "existing", "both": "touched or existing"}[rule.match]
    return f"no {where} path matches globs {globs}"
