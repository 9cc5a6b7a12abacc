"""Why each stream rule did not fire in ``pi-rules stream test`` (issue 34).

``stream test`` used to print nothing when no rule fired; now every stream rule that did
not fire gets one line: armed or not, and the first reason it stayed quiet — its scope
watches another surface, tool or path, its ``globs`` match no path, or its condition did
not match the text. The same words ``pi-rules test`` uses for a failed stream case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rules_core.engine.core import Engine
from rules_core.model import Discovery, Rule
from rules_core.stream.model import Gate, StreamSpec


@dataclass(frozen=True)
class Surface:
    """What was checked: the source (``text``, ``thinking``, ``tool``), tool, path, touched."""

    source: str
    tool: str | None
    path: str | None
    touched: tuple[str, ...]

    def __str__(self) -> str:
        if self.source != "tool":
            return f"the {self.source}"
        call = f"the {self.tool} call" if self.tool else "the tool call"
        return call + (f" on {self.path}" if self.path else " (no --path)")


def quiet_rules(engine: Engine, discovery: Discovery, specs: Sequence[StreamSpec], fired: set[str],
                surface: Surface, gate: Gate) -> list[tuple[str, bool, str]]:
    """(rule id, armed, why it did not fire) for each stream rule that did not, in discovery order."""
    armed = {spec.rule.id: spec for spec in specs}
    quiet = []
    for rule in discovery.rules:
        if rule.id in fired:
            continue
        spec = armed.get(rule.id)
        if spec is None:
            if engine.hooks.stream_spec(rule) is not None:
                quiet.append((rule.id, False, "not armed for these facts (muted, scoped out, or its "
                                              "model/branch/tools/agents condition does not hold)"))
            continue
        quiet.append((rule.id, True, _why(spec, rule, surface, gate)))
    return quiet


def _why(spec: StreamSpec, rule: Rule, surface: Surface, gate: Gate) -> str:
    scope = ", ".join(str(entry) for entry in spec.scope)
    if not any(entry.admits(surface.source, surface.tool, surface.path) for entry in spec.scope):
        return f"its scope ({scope}) does not watch {surface}"
    if rule.globs:
        paths = (surface.path,) if surface.path else surface.touched
        if not paths:
            return f"its globs ({', '.join(rule.globs)}) need a path: give --path or --touched"
        if not gate(rule, paths):
            return f"its globs ({', '.join(rule.globs)}) match none of {', '.join(paths)}"
    return f"its condition did not match {surface} (scope {scope})"
