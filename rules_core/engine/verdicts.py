"""Combining the matchers' verdicts on one rule: every declared condition must be judged,
and every judged one must pass (docs/architecture.md, "One evaluation")."""

from __future__ import annotations

from typing import Sequence

from rules_core.model import Rule, Verdict


Judgement = tuple[bool, tuple[str, ...], tuple[str, ...]]
"""Whether a rule matched, the reasons, and the conditions it failed (``Outcome.failed``)."""


def combine_verdicts(rule: Rule, verdicts: Sequence[Verdict]) -> Judgement:
    """AND the matchers' verdicts; a declared condition nobody judged fails."""
    applicable = [v for v in verdicts if v.ok is not None]
    judged = {v.condition for v in applicable}
    unjudged = [c for c in rule.declared_conditions if c not in judged]
    failed = [v for v in applicable if not v.ok]
    if failed or unjudged:
        reasons = [r for v in failed for r in v.reasons]
        reasons += [f"no plugin judges {c!r} (is its matcher plugin blocked?)" for c in unjudged]
        conditions = dict.fromkeys([*(v.condition for v in failed), *unjudged])
        return False, tuple(reasons), tuple(conditions)
    return True, tuple(r for v in applicable for r in v.reasons), ()
