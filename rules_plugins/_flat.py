"""The verdict shared by the ``model`` and ``branch`` matchers (RULE-SPEC §5)."""

from __future__ import annotations

from rules_core.globs.matching import Glob
from rules_core.model import Verdict


def flat_verdict(
    condition: str, session_value: str | None, pattern: str, compiled: Glob | None, rank: int
) -> Verdict:
    """Match one flat token; the mismatch names the session value (or ``absent``) and pattern."""
    if session_value is not None and compiled is not None and compiled.match(session_value):
        return Verdict(condition, True, (f"{condition} {session_value}",), rank)
    shown = session_value if session_value is not None else "absent"
    reason = (
        f"{condition} mismatch: session {condition} {shown} does not match the rule's "
        f"{condition} pattern {pattern}"
    )
    return Verdict(condition, False, (reason,), rank)
