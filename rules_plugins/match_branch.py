"""The ``branch`` matcher: the session's git branch against the rule's flat glob (§5)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import MatchContext, Rule, Verdict

RANK = 40


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if rule.branch is None:
        return []
    branch = context.facts.branch
    pattern = rule.compiled.branch if rule.compiled is not None else None
    if branch is not None and pattern is not None and pattern.match(branch):
        return [Verdict("branch", True, (f"branch {branch}",), RANK)]
    shown = branch if branch is not None else "absent"
    reason = (
        f"branch mismatch: session branch {shown} does not match the rule's branch "
        f"pattern {rule.branch}"
    )
    return [Verdict("branch", False, (reason,), RANK)]
