"""The ``tools`` matcher: active when the session's tools intersect the rule's ``tools``."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import MatchContext, Rule, Verdict

RANK = 20


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if not rule.tools:
        return []
    session = context.facts.tools
    for tool in rule.tools:
        if tool in session:
            return [Verdict("tools", True, (f"tool {tool}",), RANK)]
    wanted = ", ".join(rule.tools)
    if session:
        reason = f"tools mismatch: session tools {', '.join(session)} include none of the rule's tools {wanted}"
    else:
        reason = f"tools mismatch: the session has no tools; the rule needs one of {wanted}"
    return [Verdict("tools", False, (reason,), RANK)]
