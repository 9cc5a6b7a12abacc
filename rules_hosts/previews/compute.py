"""Running one preview: discover with the agent's importers alone, evaluate as the
importers read the agent's files (no budget of pi-rules' own), let the profile judge,
order and cap what its agent would load."""

from __future__ import annotations

import dataclasses
import os

from rules_core.engine import Engine
from rules_core.model import Discovery, Facts

from .model import Preview, Profile

NO_BUDGET = 1 << 30  # a preview adds nothing of pi-rules' own, its token budget included


def preview(engine: Engine, facts: Facts, profile: Profile) -> Preview:
    cwd = os.path.abspath(facts.cwd)
    saved = engine.options.get("import")
    engine.options["import"] = profile.importers  # the agent's files, whatever pi-rules' settings choose
    try:
        found = engine.discover(cwd, facts.trusted)
    finally:
        if saved is None:
            engine.options.pop("import", None)
        else:
            engine.options["import"] = saved
    rules = tuple(r for r in found.rules if r.file.plugin in profile.importers)
    errors = tuple(e for e in found.errors if e.plugin in profile.importers)
    facts = dataclasses.replace(facts, cwd=cwd, host=None, max_tokens=NO_BUDGET, mutes=frozenset())
    evaluation = engine.evaluate(facts, Discovery(rules, errors))
    entries = [profile.judge(outcome, facts) for outcome in evaluation.outcomes]
    if profile.order is not None:
        entries.sort(key=profile.order)
    entries, warnings, context = profile.finish(entries, facts)
    warnings = [*warnings, *(f"{e.path}: {e.kind}: {e.message}" for e in errors)]
    return Preview(profile.name, profile.title, tuple(entries), tuple(warnings), context)
