"""The stream-rule side of a ``Session``: one ``StreamWatcher`` armed from its facts.

A host forwards the model's output as it streams: ``delta`` for each piece of prose,
thinking or tool-call arguments, ``end`` when a stream (a message part, a tool call) is
complete, ``turn`` when a new model turn starts. Each answer says which rules fired,
whether to interrupt the model, and the block to show it (docs/stream.md). The watcher
is re-armed whenever the session's facts change (touched paths, mutes, the last turn's
model, branch and tools); the session resets it after a compaction or a switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .lookup import normalize_touched
from .stream import NOTHING, StreamResult, StreamWatcher, globs_gate

if TYPE_CHECKING:
    from .session import Session


class SessionStream:
    def __init__(self, session: Session) -> None:
        self._session = session
        self._watcher: StreamWatcher | None = None
        self._armed_for: tuple[Any, ...] | None = None
        self._faults_seen = 0

    def delta(
        self, source: Any, text: Any, tool: Any = None, call_id: Any = None, path: Any = None
    ) -> StreamResult:
        """One delta of the model's output; never raises."""
        try:
            return self._said(self._armed().feed(source, text, tool=tool, call_id=call_id, path=self._path(path)))
        except Exception as exc:  # noqa: BLE001 - a host's stream must never break on us
            self._session.last_fault = f"stream delta: {type(exc).__name__}: {exc}"
            return NOTHING

    def end(self, source: Any, tool: Any = None, call_id: Any = None, path: Any = None) -> StreamResult:
        """A stream is complete (whole-text patterns and ast conditions run now)."""
        try:
            return self._said(self._armed().end(source, tool=tool, call_id=call_id, path=self._path(path)))
        except Exception as exc:  # noqa: BLE001
            self._session.last_fault = f"stream end: {type(exc).__name__}: {exc}"
            return NOTHING

    def check(self, source: Any, text: Any, tool: Any = None, path: Any = None) -> StreamResult:
        """A complete snapshot checked at once (e.g. the content a tool call would write)."""
        try:
            return self._said(self._armed().check(source, text, tool=tool, path=self._path(path)))
        except Exception as exc:  # noqa: BLE001
            self._session.last_fault = f"stream check: {type(exc).__name__}: {exc}"
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
        session = self._session
        if self._watcher is None:
            self._watcher = StreamWatcher(gate=globs_gate(session.cwd), render=session.engine.hooks.render)
        # Cheap to compute per delta; the (costlier) re-arm runs only when it changes.
        key = (id(session._touched), len(session._touched), session.mutes, id(session.last_evaluation))
        if key != self._armed_for:
            facts = session._facts(prompt="")
            self._watcher.arm(session.engine.stream_specs(facts), facts.touched)
            self._armed_for = key
        return self._watcher

    def _said(self, result: StreamResult) -> StreamResult:
        """A rule the watcher just switched off as too slow is a fault the host logs."""
        watcher = self._watcher
        if watcher is not None and watcher.fault_count != self._faults_seen:
            self._session.last_fault = watcher.faults[-1]
            self._faults_seen = watcher.fault_count
        return result

    def _path(self, path: Any) -> str | None:
        if not isinstance(path, str) or not path or "\0" in path:
            return None
        normal = normalize_touched((path,), self._session.cwd)
        return normal[0] if normal else None
