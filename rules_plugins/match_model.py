"""The ``model`` matcher: the session model id against the rule's flat glob (RULE-SPEC §5)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import MatchContext, Rule, Verdict

RANK = 30


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if rule.model is None:
        return []
    model = context.facts.model
    pattern = rule.compiled.model if rule.compiled is not None else None
    if model is not None and pattern is not None and pattern.match(model):
        return [Verdict("model", True, (f"model {model}",), RANK)]
    shown = model if model is not None else "absent"
    reason = f"model mismatch: session model {shown} does not match the rule's model pattern {rule.model}"
    return [Verdict("model", False, (reason,), RANK)]
