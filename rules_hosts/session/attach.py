"""Mid-run attachment, the pure core (RULE-SPEC §6 "Mid-run attachment").

A rule that only became active because of a tool result is appended to that result
instead of waiting for the next turn. These functions decide what one batch says; the
session (``rules_core.session``) decides when a batch is built and keeps the delivered
set. Nothing here reads a file or mutates its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping

from rules_core import delivery
from rules_core.model import Evaluation, Outcome, Rule

# Between a tool's own output and the block appended to it.
SEPARATOR = "\n\n---\n\n"
ATTACH_ENV = "PI_RULES_ATTACH"
# Only these results can name a file the agent is about to work on (bash: the paths its
# command names, docs/shell.md); grep/find/ls and custom tools are left byte-identical.
ATTACHING_TOOLS = frozenset({"read", "edit", "write", "bash"})

Render = Callable[[str, Any], "str | None"]


@dataclass(frozen=True)
class Batch:
    """One attachment: the block to append (``None``: nothing) and the ids it delivers."""

    block: str | None
    delivered: tuple[str, ...] = ()


def attach_enabled(value: str | None) -> bool:
    """``PI_RULES_ATTACH=off`` (trimmed, any case) disables; anything else keeps it on."""
    return not (isinstance(value, str) and value.strip().lower() == "off")


def selected(evaluation: Evaluation) -> tuple[Outcome, ...]:
    """What the evaluation hands the model, in selection order: pinned ``active``, then
    ``on_demand``, then the budget-dropped rules the index names (a budget pool's, and
    with ``overflow = "index"`` the section's: ``rules_core.delivery``)."""
    overflow = evaluation.facts.overflow
    listed = (o for o in evaluation.outcomes if delivery.over_budget(o) and delivery.delivery(o, overflow) == "index")
    return (*evaluation.active, *evaluation.on_demand, *listed)


def newly_activated(evaluation: Evaluation, delivered: Collection[str]) -> tuple[Outcome, ...]:
    """Selected rules (``selected``) not yet delivered.

    Rules the budget dropped without listing them and muted rules never reach the
    section, so neither can be a candidate.
    """
    return tuple(o for o in selected(evaluation) if o.rule.id not in delivered)


def remaining_budget(evaluation: Evaluation) -> int:
    """Budget minus the pinned bodies the fresh evaluation would render in the section.

    Plain arithmetic on purpose: a section that overran its budget leaves zero or
    negative room, so every pinned candidate degrades to its reference line.
    """
    return section_rooms(evaluation, ())[None]


Rooms = Mapping[str | None, int]  # budget (None: the section's; else a pool's name) -> tokens left


def section_rooms(evaluation: Evaluation, held: Collection[str]) -> dict[str | None, int]:
    """RULE-SPEC's arithmetic, for hosts that send the section again every turn (Pi): each
    budget minus every pinned body the fresh evaluation puts in it. The new rule's own
    body is in that sum, so a rule that only just fits degrades to its reference line —
    the next turn's section carries the text anyway. ``held`` plays no part."""
    rooms = _limits(evaluation)
    for outcome in evaluation.active:
        rooms[_budget(outcome.rule)] = rooms.get(_budget(outcome.rule), 0) - outcome.tokens
    return rooms


def conversation_rooms(evaluation: Evaluation, held: Collection[str]) -> dict[str | None, int]:
    """Deliver-once (Claude Code: nothing is sent again, so a pointer is final): each budget
    minus the bodies of the rules it admits that the conversation already holds (``held``).
    So every rule the fresh evaluation admits — status ``active`` in ``report`` for the
    same facts — fits, the section's always-kept first candidate included; a pinned rule
    degrades only when its text does not fit what is left."""
    rooms = _limits(evaluation)
    rooms[None] = max(rooms[None], evaluation.budget_used)  # the first candidate is always kept
    for outcome in evaluation.active:
        if outcome.rule.id in held:
            rooms[_budget(outcome.rule)] = rooms.get(_budget(outcome.rule), 0) - outcome.tokens
    return rooms


# ``HostInfo.delivery`` -> how an attachment measures the room a rule needs (docs/hosts.md).
ROOMS: dict[str, Callable[[Evaluation, Collection[str]], dict[str | None, int]]] = {
    "per-turn": section_rooms, "once": conversation_rooms,
}


def _limits(evaluation: Evaluation) -> dict[str | None, int]:
    return {None: evaluation.facts.max_tokens, **{pool.name: pool.max_tokens for pool, _ in evaluation.pools}}


def _budget(rule: Rule) -> str | None:
    return rule.pool.name if rule.pool is not None else None


def plan_batch(
    evaluation: Evaluation, delivered: Collection[str], render: Render, *, reference: str = "", origin: str = "",
    rooms: Rooms | None = None,
) -> Batch:
    """The block for the rules ``evaluation`` selects that ``delivered`` does not hold.

    ``reference`` is the host's ``HostInfo.reference`` (how its agent fetches a listed
    rule); ``origin`` ``prompt`` heads the block for a prompt instead of a tool result;
    ``rooms`` the tokens each budget has left (default: RULE-SPEC's ``section_rooms``).

    ``render`` is ``Hooks.render``: a pinned rule that fits gets the very ``entry`` bytes
    of the section, anything else the ``index-line`` reference, and the parts are framed
    by the ``attachment`` renderer. A part the renderer cannot produce (plugin blocked or
    broken) is left out and not counted as delivered.
    """
    remaining = dict(section_rooms(evaluation, delivered) if rooms is None else rooms)
    parts: list[str] = []
    ids: list[str] = []
    for outcome in newly_activated(evaluation, delivered):
        rule = outcome.rule
        budget = _budget(rule)
        if outcome.status == "active" and outcome.tokens <= remaining.get(budget, 0):
            part = _render(render, "entry", outcome)
            if part is not None:
                remaining[budget] = remaining.get(budget, 0) - outcome.tokens
        elif not rule.relative_path:
            continue  # no fetchable reference: skipped, and so not delivered either
        else:
            # On-demand rules, listed overflow, and pinned rules their budget leaves no room
            # for: a pointer charges nothing and still counts as delivered (re-sending it
            # says nothing new).
            part = _render(render, "index-line", {"rule": rule, "reference": reference} if reference else rule)
        if part is not None:
            parts.append(part)
            ids.append(rule.id)
    if not parts:
        return Batch(None)
    block = _render(render, "attachment", {"parts": tuple(parts), **({"origin": origin} if origin else {})})
    return Batch(block, tuple(ids)) if block is not None else Batch(None)


def append_block(content: Any, block: str) -> list[Any] | None:
    """A NEW list: the result's parts plus one text part (the separator, then ``block``),
    or ``None`` for a foreign shape.

    The input is never mutated. Only a list of part objects (mappings with a string
    ``type``) is a result shape we understand; anything else is left alone.
    """
    if not isinstance(content, (list, tuple)):
        return None
    parts = list(content)
    if not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in parts):
        return None
    return parts + [{"type": "text", "text": SEPARATOR + block if block else block}]


def _render(render: Render, kind: str, data: Any) -> str | None:
    try:
        text = render(kind, data)
    except Exception:  # a third-party renderer must not take the tool result down
        return None
    return text if isinstance(text, str) and text else None
