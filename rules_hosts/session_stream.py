"""The stream-rule side of a ``Session``: one ``StreamWatcher`` armed from its facts.

A host forwards the model's output as it streams: ``delta`` for each piece of prose,
thinking or tool-call arguments, ``end`` when a stream (a message part, a tool call) is
complete, ``turn`` when a new model turn starts. Each answer says which rules fired,
whether to interrupt the model, and the block to show it (docs/stream.md). The watcher
is re-armed whenever the session's facts change (touched paths, mutes, the last turn's
model, branch and tools); the session resets it after a compaction or a switch.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

from rules_core.engine import Engine
from rules_core.lookup import normalize_touched
from rules_core.model import Facts
from rules_core.stream import NOTHING, StreamResult, StreamWatcher, globs_gate


class SessionStream:
    """``facts()`` gives the session's current facts (prompt-less); ``state()`` a cheap
    key that changes whenever they may have; ``on_fault`` hears what went wrong."""

    def __init__(
        self,
        engine: Engine,
        cwd: str,
        *,
        facts: Callable[[], Facts],
        state: Callable[[], Hashable],
        on_fault: Callable[[str], None],
    ) -> None:
        self._engine = engine
        self._cwd = cwd
        self._facts = facts
        self._state = state
        self._on_fault = on_fault
        self._watcher: StreamWatcher | None = None
        self._armed_for: Hashable = None
        self._faults_seen = 0

    def delta(
        self, source: Any, text: Any, tool: Any = None, call_id: Any = None, path: Any = None
    ) -> StreamResult:
        """One delta of the model's output; never raises."""
        try:
            return self._said(self._armed().feed(source, text, tool=tool, call_id=call_id, path=self._path(path)))
        except Exception as exc:  # noqa: BLE001 - a host's stream must never break on us
            self._on_fault(f"stream delta: {type(exc).__name__}: {exc}")
            return NOTHING

    def end(self, source: Any, tool: Any = None, call_id: Any = None, path: Any = None) -> StreamResult:
        """A stream is complete (whole-text patterns and ast conditions run now)."""
        try:
            return self._said(self._armed().end(source, tool=tool, call_id=call_id, path=self._path(path)))
        except Exception as exc:  # noqa: BLE001
            self._on_fault(f"stream end: {type(exc).__name__}: {exc}")
            return NOTHING

    def check(self, source: Any, text: Any, tool: Any = None, path: Any = None) -> StreamResult:
        """A complete snapshot checked at once (e.g. the content a tool call would write)."""
        try:
            return self._said(self._armed().check(source, text, tool=tool, path=self._path(path)))
        except Exception as exc:  # noqa: BLE001
            self._on_fault(f"stream check: {type(exc).__name__}: {exc}")
            return NOTHING

    def turn(self) -> None:
        """A new model turn: buffers are dropped; ``repeat: after-gap N`` counts these."""
        if self._watcher is not None:
            self._watcher.turn()
        self._armed_for = None  # the last turn's facts may have changed

    def reset(self) -> None:
        """Compaction or switch: what fired before may fire again."""
        if self._watcher is not None:
            self._watcher.reset()
        self._armed_for = None

    @property
    def watched(self) -> tuple[str, ...]:
        """Ids of the stream rules armed now."""
        return tuple(spec.rule.id for spec in self._armed().specs)

    def _armed(self) -> StreamWatcher:
        if self._watcher is None:
            self._watcher = StreamWatcher(gate=globs_gate(self._cwd), render=self._engine.hooks.render)
        # Cheap to compute per delta; the (costlier) re-arm runs only when it changes.
        key = self._state()
        if key != self._armed_for:
            facts = self._facts()
            self._watcher.arm(self._engine.stream_specs(facts), facts.touched)
            self._armed_for = key
        return self._watcher

    def _said(self, result: StreamResult) -> StreamResult:
        """A rule the watcher just switched off as too slow is a fault the host logs."""
        watcher = self._watcher
        if watcher is not None and watcher.fault_count != self._faults_seen:
            self._on_fault(watcher.faults[-1])
            self._faults_seen = watcher.fault_count
        return result

    def _path(self, path: Any) -> str | None:
        if not isinstance(path, str) or not path or "\0" in path:
            return None
        normal = normalize_touched((path,), self._cwd)
        return normal[0] if normal else None
