"""A preview's data: each file the agent reads, with what it does with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from rules_core.model import Facts, Outcome

State = Literal["loaded", "on-demand", "manual", "not-loaded", "cut"]


@dataclass(frozen=True)
class Entry:
    """One file of the agent: ``state`` and why, and the text it puts in its context
    (``text`` is what is left after a cap; empty when nothing of it is loaded)."""

    path: str  # absolute
    rule_id: str
    state: State
    reason: str
    text: str
    size: int  # the file's whole size, in the unit of the agent's cap (bytes or characters)


@dataclass(frozen=True)
class Preview:
    host: str
    title: str
    unit: str
    entries: tuple[Entry, ...]
    warnings: tuple[str, ...]
    context: str  # what the agent puts in its context, joined as it joins it


@dataclass(frozen=True)
class Profile:
    """An agent: the importers that list its files, how it judges each one (from the
    evaluation pi-rules made with those importers alone), its order and its caps."""

    name: str
    title: str
    summary: str
    importers: tuple[str, ...]
    judge: Callable[[Outcome, Facts], Entry]
    finish: Callable[[list[Entry], Facts], tuple[list[Entry], list[str], str]]
    order: Callable[[Entry], tuple] | None = None
    unit: str = "B"  # what ``Entry.size`` counts: bytes, or characters where the agent's cap counts them
