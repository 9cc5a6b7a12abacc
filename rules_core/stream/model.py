"""The values of stream rules: what a plugin compiles a rule into (``StreamSpec``) and
what the watcher answers (``StreamResult``). Behaviour lives in ``rules_core.stream.watcher``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Literal, Sequence

from rules_core.globs.matching import Glob, normalize_path
from rules_core.model import Rule

Surface = Literal["text", "thinking", "tool"]
InterruptMode = Literal["never", "prose-only", "tool-only", "always"]
SURFACES: tuple[str, ...] = ("text", "thinking", "tool")
INTERRUPT_MODES: tuple[str, ...] = ("never", "prose-only", "tool-only", "always")

@dataclass(frozen=True)
class ScopeEntry:
    """One surface a stream rule watches: ``text``, ``thinking``, or tool calls.

    ``tool`` (lower case) narrows a tool entry to one tool; ``matcher`` to the tool
    calls whose file path, or its base name, matches ``glob``.
    """

    surface: Surface
    tool: str | None = None
    glob: str | None = None
    matcher: Glob | None = field(default=None, compare=False, repr=False)

    def admits(self, surface: str, tool: str | None, path: str | None) -> bool:
        if surface != self.surface:
            return False
        if surface != "tool":
            return True
        if self.tool is not None and (tool or "").lower() != self.tool:
            return False
        if self.matcher is None:
            return True
        if not path:
            return False
        normal = normalize_path(path)
        return self.matcher.match_normalized(normal) or self.matcher.match_normalized(normal.rsplit("/", 1)[-1])

    def __str__(self) -> str:
        if self.surface != "tool":
            return self.surface
        if self.tool is None:
            return "tool"
        return f"tool:{self.tool}({self.glob})" if self.glob else f"tool:{self.tool}"


@dataclass(frozen=True)
class StreamPattern:
    """A compiled ``condition`` (a ``regex`` module pattern, so a search can time out).
    ``width`` is the longest match it can make (``None``: unbounded); ``joinable``
    patterns (no group references) share one combined search."""

    source: str
    regex: Any = field(compare=False)
    width: int | None = None
    joinable: bool = True
    # The pattern with its leading flags as a scoped group, for the combined search.
    scoped: str = ""


# (text, path) -> (line, description) of the first ast match, or None.
AstMatcher = Callable[[str, str], "tuple[int, str] | None"]


@dataclass(frozen=True)
class StreamSpec:
    """What a stream rule watches for and what happens when it fires.

    ``repeat_gap`` is ``None`` for ``repeat: once`` (once per session, again after a
    compaction), else the number of turns that must pass before it may fire again.
    ``owns`` names the rule's conditions this spec judges (the engine's matchers judge
    the others: ``globs`` is the path gate, ``model``/``branch``/``tools`` arm the rule).
    """

    rule: Rule
    patterns: tuple[StreamPattern, ...]
    scope: tuple[ScopeEntry, ...]
    interrupt: InterruptMode = "always"
    repeat_gap: int | None = None
    ast_patterns: tuple[str, ...] = ()
    ast: AstMatcher | None = field(default=None, compare=False, repr=False)
    owns: tuple[str, ...] = ("condition", "astCondition")
    summary: str = "stream rule"

    def interrupts(self, surface: str) -> bool:
        if self.interrupt == "always":
            return True
        if self.interrupt == "prose-only":
            return surface in ("text", "thinking")
        if self.interrupt == "tool-only":
            return surface == "tool"
        return False

    @cached_property
    def fingerprint(self) -> str:
        """Names the rule's conditions: a switch-off remembered across processes (the
        Claude Code state file) holds only while the conditions are the same — an edited
        rule gets a fresh chance."""
        text = "\0".join((self.rule.id, *(p.source for p in self.patterns)))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    @property
    def is_global(self) -> bool:
        """A rule of the user's own (global) rules: searched first, within its own budget."""
        return self.rule.source == "global"


@dataclass(frozen=True)
class Firing:
    """One rule that fired: where (``source``), why, and whether it interrupts."""

    rule: Rule
    source: str
    reason: str
    interrupt: bool
    offset: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.rule.id, "source": self.source, "interrupt": self.interrupt, "reason": self.reason}


@dataclass(frozen=True)
class StreamResult:
    """After a delta: the rules that fired now, whether to interrupt, and the block to
    show the model (the interrupt block, else the reminder block; ``""`` if nothing)."""

    fired: tuple[Firing, ...] = ()
    interrupt: bool = False
    block: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "fired": [f.to_json() for f in self.fired],
            "interrupt": self.interrupt,
            "block": self.block,
        }


@dataclass(frozen=True)
class ToolOutput:
    """What a tool call would write, as stream rules see it: the scope's tool name
    (``write``, ``edit``, …), the file path the call names, and the text it writes."""

    tool: str
    path: str
    text: str


NOTHING = StreamResult()
Renderer = Callable[[str, Any], "str | None"]
Gate = Callable[[Rule, Sequence[str]], bool]
