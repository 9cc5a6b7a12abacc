"""The statistics records a host appends to its session journal (the Claude Code state
file, a ``serve --session`` file): rule ids and numbers only — never a prompt, a path the
agent touched or a rule's text — so ``pi-rules stats`` can count without reading anything
private (docs/stats.md). Older journals without them count as sessions with no turns.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Mapping, Sequence

from rules_core.model import Evaluation, Rule

TURN_TYPE = "pi-rules/turn"  # one evaluation of a user turn: active and listed ids, their tokens
DELIVERY_TYPE = "pi-rules/delivery"  # ids handed to the model, how (section, attachment), which as pointers
READ_TYPE = "pi-rules/read"  # on-demand rules whose body the model fetched
STREAM_TYPE = "pi-rules/stream"  # stream rules that fired, and those that denied a tool call
MAX_IDS = 1000  # a record names at most this many rules


def _ids(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if isinstance(v, str)))[:MAX_IDS]


def turn_record(evaluation: Evaluation | None) -> dict[str, Any] | None:
    if evaluation is None:
        return None
    active = _ids(o.rule.id for o in evaluation.active)
    listed = _ids(o.rule.id for o in evaluation.on_demand)
    tokens = {o.rule.id: o.tokens for o in (*evaluation.active, *evaluation.on_demand)}
    # The project folder: stats counts a project's own sessions (a path, never a prompt).
    return {"type": TURN_TYPE, "at": int(time.time()), "cwd": evaluation.facts.cwd, "active": active,
            "listed": listed, "tokens": tokens}


def delivery_record(ids: Sequence[str], via: str, rules: Sequence[Rule], tokens: dict[str, int]) -> dict[str, Any] | None:
    """``via`` is ``section`` or ``attachment``; a delivered on-demand rule went as a
    pointer (its index line), every other one as its body."""
    if not ids:
        return None
    on_demand = {r.id: r.file.path for r in rules if r.load == "on-demand"}
    pointers = _ids(i for i in ids if i in on_demand)
    # A pointer's file: a later Read of it is the model fetching the body (``listed_paths``).
    return {"type": DELIVERY_TYPE, "at": int(time.time()), "via": via, "ids": _ids(ids), "pointers": pointers,
            "paths": {i: on_demand[i] for i in pointers},
            "tokens": {i: tokens[i] for i in ids if isinstance(tokens.get(i), int)}}


def read_record(ids: Sequence[str]) -> dict[str, Any] | None:
    return {"type": READ_TYPE, "at": int(time.time()), "ids": _ids(ids)} if ids else None


def stream_record(fired: Sequence[str], denied: Sequence[str]) -> dict[str, Any] | None:
    if not fired:
        return None
    return {"type": STREAM_TYPE, "at": int(time.time()), "fired": _ids(fired), "denied": _ids(denied)}


def listed_paths(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Rule file path -> id of every pointer the delivery ``records`` handed the model."""
    found: dict[str, str] = {}
    for record in records:
        paths = record.get("paths")
        if isinstance(paths, dict):
            found.update({p: i for i, p in paths.items() if isinstance(p, str) and isinstance(i, str)})
    return found


def session_rules(session: Any) -> tuple[Rule, ...]:
    """The rules of a ``rules_hosts.session.runtime.Session``'s project, as its host sees them."""
    return session.rules()  # the call's own settings: no second read


def delivery_for(session: Any, ids: Sequence[str], via: str, evaluation: Evaluation | None = None) -> dict[str, Any] | None:
    """The delivery record of ``ids``, with each rule's token estimate: from ``evaluation``
    when the ids were its active or listed rules, else from a discovery (attachments)."""
    if not ids:
        return None
    if evaluation is not None:
        known = {o.rule.id: o.tokens for o in (*evaluation.active, *evaluation.on_demand)}
        if all(i in known for i in ids):
            return delivery_record(ids, via, evaluation.rules, known)
    rules = session_rules(session)
    wanted = set(ids)
    tokens = {r.id: session.engine.hooks.estimate_tokens(r.body) for r in rules if r.id in wanted}
    return delivery_record(ids, via, rules, tokens)
