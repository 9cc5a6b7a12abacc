"""Mid-run attachment, the pure core (RULE-SPEC §6 "Mid-run attachment").

A rule that only became active because of a tool result is appended to that result
instead of waiting for the next turn. These functions decide what one batch says; the
session (``rules_core.session``) decides when a batch is built and keeps the delivered
set. Nothing here reads a file or mutates its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection

from rules_core.model import Evaluation, Outcome

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


def newly_activated(evaluation: Evaluation, delivered: Collection[str]) -> tuple[Outcome, ...]:
    """Selected rules in selection order (pinned ``active``, then ``on_demand``) not yet delivered.

    Budget-dropped rules are not selected and muted rules never reach selection, so
    neither can be a candidate.
    """
    return tuple(o for o in (*evaluation.active, *evaluation.on_demand) if o.rule.id not in delivered)


def remaining_budget(evaluation: Evaluation) -> int:
    """Budget minus the pinned bodies the fresh evaluation would render in the section.

    Plain arithmetic on purpose: a section that overran its budget leaves zero or
    negative room, so every pinned candidate degrades to its reference line.
    """
    return evaluation.facts.max_tokens - sum(o.tokens for o in evaluation.active)


def plan_batch(
    evaluation: Evaluation, delivered: Collection[str], render: Render, *, reference: str = "", origin: str = ""
) -> Batch:
    """The block for the rules ``evaluation`` selects that ``delivered`` does not hold.

    ``reference`` is the host's ``HostInfo.reference`` (how its agent fetches a listed
    rule); ``origin`` ``prompt`` heads the block for a prompt instead of a tool result.

    ``render`` is ``Hooks.render``: a pinned rule that fits gets the very ``entry`` bytes
    of the section, anything else the ``index-line`` reference, and the parts are framed
    by the ``attachment`` renderer. A part the renderer cannot produce (plugin blocked or
    broken) is left out and not counted as delivered.
    """
    remaining = remaining_budget(evaluation)
    parts: list[str] = []
    ids: list[str] = []
    for outcome in newly_activated(evaluation, delivered):
        rule = outcome.rule
        if rule.load != "on-demand" and outcome.tokens <= remaining:
            part = _render(render, "entry", outcome)
            if part is not None:
                remaining -= outcome.tokens
        elif not rule.relative_path:
            continue  # no fetchable reference: skipped, and so not delivered either
        else:
            # On-demand rules, and pinned rules the section leaves no room for: a pointer
            # charges nothing and still counts as delivered (re-sending it says nothing new).
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
