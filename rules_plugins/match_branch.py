"""The ``branch`` matcher: the session's git branch against the rule's flat glob (§5).

The branch itself is resolved live by the host or CLI (``rules_core.current_branch``);
``None`` (no repository, detached HEAD, git failure) never matches.
"""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import MatchContext, Rule, Verdict

from ._flat import flat_verdict

RANK = 40


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if rule.branch is None:
        return []
    # Without a session branch nothing is matched, so a lazily compiled pattern stays uncompiled.
    value = context.facts.branch
    compiled = rule.compiled.branch if rule.compiled is not None and value is not None else None
    return [flat_verdict("branch", value, rule.branch, compiled, RANK)]
