"""Each rule delivered once per conversation: what a prompt adds to what was delivered.

For hosts whose rules land in the transcript and stay there (Claude Code's
``additionalContext``): re-sending the whole section whenever it changes repeats every
rule already in the conversation. A prompt instead adds the rules not yet delivered, in
the mid-run attachment's block shape (``attach.plan_batch``, measured against what the
conversation holds: ``attach.conversation_rooms``), and one
line per delivered rule that stopped applying. Pure: data in, data out; the renderer
(``markdown``) owns every byte. See docs/hosts.md, "Each rule delivered once".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rules_core.model import Evaluation, Outcome

import rules_hosts.session.attach as attach

# The condition a prompt can never satisfy: the tool fact is the tool event's own.
_TOOLS = "tools"


@dataclass(frozen=True)
class PromptUpdate:
    """``text`` to add (``None``: nothing new), the ids it delivers and those it withdraws."""

    text: str | None
    delivered: tuple[str, ...] = ()
    stopped: tuple[str, ...] = ()


def prompt_update(
    evaluation: Evaluation, delivered: Sequence[str], render: attach.Render, *, reference: str = ""
) -> PromptUpdate:
    """The rules ``evaluation`` selects that ``delivered`` lacks, and the delivered rules it
    no longer selects. A stopped rule is no longer counted as delivered, so it comes again
    in full if it applies again (the model was told to drop it)."""
    held = set(delivered)
    rooms = attach.conversation_rooms(evaluation, held)
    batch = attach.plan_batch(evaluation, held, render, reference=reference, origin="prompt", rooms=rooms)
    lines, stopped = _stopped_lines(evaluation, delivered, render)
    parts = (["\n".join(lines) + "\n"] if lines else []) + ([batch.block] if batch.block else [])
    return PromptUpdate("\n".join(parts) if parts else None, batch.delivered, stopped)


def _stopped_lines(
    evaluation: Evaluation, delivered: Sequence[str], render: attach.Render
) -> tuple[list[str], tuple[str, ...]]:
    selected = {o.rule.id for o in attach.selected(evaluation)}
    outcomes = {o.rule.id: o for o in evaluation.outcomes}
    lines: list[str] = []
    ids: list[str] = []
    for rule_id in delivered:
        outcome = outcomes.get(rule_id)
        if rule_id in selected or (outcome is not None and _event_bound(outcome)):
            continue
        line = _render_line(render, rule_id, _why_not(outcome))
        if line is not None:
            lines.append(line)
            ids.append(rule_id)
    return lines, tuple(ids)


def _event_bound(outcome: Outcome) -> bool:
    """Failed only on the tool fact, which a prompt never has (it is the tool event's own):
    the rule still applies at the next call of its tool, so nothing is withdrawn."""
    return outcome.status == "inactive" and outcome.failed == (_TOOLS,)


def _why_not(outcome: Outcome | None) -> str:
    if outcome is None:
        return "its rule file is gone"
    if outcome.status == "dropped":
        return "a rule with the same body applies" if outcome.cause == "duplicate" else "over the token budget"
    return "; ".join(outcome.reasons) or outcome.status


def _render_line(render: attach.Render, rule_id: str, reason: str) -> str | None:
    try:
        text = render("stopped-line", {"id": rule_id, "reason": reason})
    except Exception:  # a third-party renderer must not take the prompt down
        return None
    return text if isinstance(text, str) and text else None
