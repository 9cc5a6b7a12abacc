"""The ``model`` matcher: the session model id against the rule's flat glob (RULE-SPEC §5)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import MatchContext, Rule, Verdict

from ._flat import flat_verdict

RANK = 30


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if rule.model is None:
        return []
    # Without a session model nothing is matched, so a lazily compiled pattern stays uncompiled.
    value = context.facts.model
    compiled = rule.compiled.model if rule.compiled is not None and value is not None else None
    return [flat_verdict("model", value, rule.model, compiled, RANK)]
