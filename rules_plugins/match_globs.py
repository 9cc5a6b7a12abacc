"""The ``globs`` matcher: path activation = touched OR exists OR intent (RULE-SPEC §5).

``match: touched`` looks only at touched paths, ``exists`` only at the exists scan,
``both`` at either; intent globs from the turn prompt satisfy any mode. A rule's globs
are relative to its base (§1): session paths are rebased onto it, absolute and
``..``-escaping globs are matched as written.
"""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.globs.compiled import EMPTY_GLOBSET, MAX_GLOBS, GlobSet
from rules_core.globs.matching import normalize_path
from rules_core.model import Intent, MatchContext, Rule, Verdict
from rules_core.paths import display_path, is_as_written

RANK = 10


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if not rule.globs:
        return []
    globset: GlobSet = rule.compiled.globs if rule.compiled is not None else EMPTY_GLOBSET
    cwd, base = context.cwd or context.facts.cwd, rule.file.base
    if rule.match in ("touched", "both"):
        hit = globset.first_session_match(context.touched, cwd, base)
        if hit is not None:
            return [Verdict("globs", True, (f"touched {hit}",), RANK)]
    if rule.match in ("exists", "both"):
        found = context.existing.get(base, {}).get(scan_query(rule))
        if found is not None:
            return [Verdict("globs", True, (f"exists {display_path(found, cwd, base)}",), RANK)]
    intent = _first_intent(globset, context.intents)
    if intent is not None:
        return [Verdict("globs", True, (f"intent {intent}",), RANK)]
    return [Verdict("globs", False, (_mismatch(rule, globset, context.touched, cwd),), RANK)]


def scan_query(rule: Rule) -> tuple[str, ...]:
    """The rule's globs an exists scan of its base can answer (as-written ones cannot),
    at most the ``MAX_GLOBS`` the rule compiled (the rest were reported and never match)."""
    return tuple(g for g in rule.globs[:MAX_GLOBS] if not is_as_written(g))


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


def _mismatch(rule: Rule, globset: GlobSet, touched: tuple[str, ...], cwd: str) -> str:
    globs = ", ".join(rule.globs)
    if rule.match == "exists":
        hit = globset.first_session_match(touched, cwd, rule.file.base)
        if hit is not None:
            # Say why a matching path did not count: the usual surprise with exists rules.
            return f"no existing path matches globs {globs} (touched {hit} matches, but match is exists)"
    where = {"touched": "touched", "exists": "existing", "both": "touched or existing"}[rule.match]
    return f"no {where} path matches globs {globs}{_rebased_note(rule, cwd)}"


def _rebased_note(rule: Rule, cwd: str) -> str:
    """Name the base when it is not the working directory: the globs are relative to it."""
    base = rule.file.base
    if base == cwd:
        return ""
    shown = display_path("", cwd, base).rstrip("/") or "."
    return f" (relative to {shown})"
