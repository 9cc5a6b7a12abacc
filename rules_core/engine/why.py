"""Texts of the ``why <path>`` report (``Engine.explain``) that do not come from a matcher."""

from __future__ import annotations

from rules_core.model import Rule

ALWAYS_APPLY = "alwaysApply"


def describe_condition(rule: Rule, condition: str) -> str:
    """A declared condition other than ``globs``, as a caveat on a path's verdict."""
    if condition == "tools":
        return f"only when the session's tools include one of: {', '.join(rule.tools)}"
    if condition == "model":
        return f"only when the session model matches {rule.model}"
    if condition == "branch":
        return f"only when the git branch matches {rule.branch}"
    return f"only when {condition} holds"


def independent_reason(rule: Rule) -> str:
    """Why a rule's verdict does not depend on the path: every rule gets a reason, so a
    user never meets a bare id (issue 15)."""
    if rule.always_apply:
        return ALWAYS_APPLY
    if not rule.declared_conditions:
        return "no conditions: it applies wherever the agent works"
    return "no globs: its other conditions decide, not the path"
