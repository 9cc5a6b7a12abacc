"""What each ``Session`` method returns: frozen results a host acts on, each with
``to_json()`` (the JSON ``serve`` answers with, docs/protocol.md)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, Mapping

from rules_core.model import Evaluation


class _Result:
    """``to_json()``: every field but the ones marked ``json=False``, as plain JSON values."""

    def to_json(self) -> dict[str, Any]:
        shown = (f for f in fields(self) if f.metadata.get("json", True))  # type: ignore[arg-type]
        return {f.name: plain_json(getattr(self, f.name)) for f in shown}


@dataclass(frozen=True)
class SessionState(_Result):
    """After start, tree, switch or compaction (nothing to do); ``rebuilt``: touched replaced."""

    rebuilt: bool
    touched: tuple[str, ...]
    mutes: tuple[str, ...]
    delivered: tuple[str, ...]


@dataclass(frozen=True)
class Capture(_Result):
    """Tool execution start: the newly touched paths and the entry to persist (or ``None``)."""

    paths: tuple[str, ...] = ()
    entry: dict[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class ToolResultEffect(_Result):
    """Tool result: ``content`` is a NEW list to return to the host, or ``None`` (leave it)."""

    content: list[Any] | None = field(default=None, hash=False)
    attached: tuple[str, ...] = ()
    invalidated: bool = False
    # The attachment block itself (what ``content`` gained after its separator), for hosts
    # that deliver it apart from the tool's output (Claude Code's additionalContext).
    block: str | None = field(default=None, compare=False, repr=False, metadata={"json": False})


@dataclass(frozen=True)
class Turn(_Result):
    """Before agent start: ``patch`` with ``section``, ``remove`` it or ``none``; ``status`` (``None`` clears)."""

    action: Literal["patch", "remove", "none"] = "none"
    section: str | None = None
    status: str | None = None
    evaluation: Evaluation | None = field(default=None, compare=False, repr=False, metadata={"json": False})


@dataclass(frozen=True)
class ToolDefinition(_Result):
    name: str
    description: str
    parameters: Mapping[str, Any] = field(hash=False)


def plain_json(value: Any) -> Any:
    """A copy of ``value`` as plain dicts and lists: a host may keep or mutate what it got."""
    if isinstance(value, Mapping):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value
