"""Running one preview: discover with the agent's importers alone, evaluate as the
importers read the agent's files (no budget of pi-rules' own), let the profile judge,
order and cap what its agent would load."""

from __future__ import annotations

import dataclasses
import os

from rules_core.engine.core import Engine
from rules_core.model import Discovery, Evaluation, Facts, Outcome

from .model import Entry, Preview, Profile
from .profiles import PROFILES

NO_BUDGET = 1 << 30  # a preview adds nothing of pi-rules' own, its token budget included


def profile_of(host: str | None) -> Profile | None:
    return PROFILES.get(host) if host is not None else None


def agent_discovery(engine: Engine, cwd: str, trusted: bool, profile: Profile) -> Discovery:
    """The agent's files only, listed by its importers whatever pi-rules' settings choose."""
    saved = engine.options.get("import")
    engine.options["import"] = profile.importers
    try:
        found = engine.discover(cwd, trusted)
    finally:
        if saved is None:
            engine.options.pop("import", None)
        else:
            engine.options["import"] = saved
    return Discovery(tuple(r for r in found.rules if r.file.plugin in profile.importers),
                     tuple(e for e in found.errors if e.plugin in profile.importers))


def agent_facts(facts: Facts) -> Facts:
    return dataclasses.replace(facts, cwd=os.path.abspath(facts.cwd), host=None, max_tokens=NO_BUDGET,
                               mutes=frozenset())


def judged(evaluation: Evaluation, facts: Facts, profile: Profile) -> tuple[list[Entry], list[str], str]:
    entries = [profile.judge(outcome, facts) for outcome in evaluation.outcomes]
    if profile.order is not None:
        entries.sort(key=profile.order)
    return profile.finish(entries, facts)


def preview(engine: Engine, facts: Facts, profile: Profile) -> Preview:
    facts = agent_facts(facts)
    found = agent_discovery(engine, facts.cwd, facts.trusted, profile)
    entries, warnings, context = judged(engine.evaluate(facts, found), facts, profile)
    warnings = [*warnings, *(f"{e.path}: {e.kind}: {e.message}" for e in found.errors)]
    return Preview(profile.name, profile.title, profile.unit, tuple(entries), tuple(warnings), context)


_STATUS = {"loaded": "active", "cut": "active", "on-demand": "on-demand"}


def as_outcomes(evaluation: Evaluation, facts: Facts, profile: Profile) -> tuple[Outcome, ...]:
    """The evaluation's outcomes restated as the agent judges them (for ``map``): what it
    loads is active, what it offers is on-demand, the rest inactive — each with its reason."""
    entries, _, _ = judged(evaluation, facts, profile)
    by_id = {e.rule_id: e for e in entries}
    restated = []
    for outcome in evaluation.outcomes:
        item = by_id.get(outcome.rule.id)
        if item is None:
            continue
        status = _STATUS.get(item.state, "inactive")
        restated.append(dataclasses.replace(outcome, status=status, reasons=(item.reason,), cause=None))
    return tuple(restated)
