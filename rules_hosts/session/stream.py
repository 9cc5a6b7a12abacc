"""The stream-rule side of a ``Session``: one ``StreamWatcher`` armed from its facts.

A host forwards the model's output as it streams: ``delta`` for each piece of prose,
thinking or tool-call arguments, ``end`` when a stream (a message part, a tool call) is
complete, ``turn`` when a new model turn starts. Each answer says which rules fired,
whether to interrupt the model, and the block to show it (docs/stream.md). The watcher
is re-armed whenever the session's facts change (touched paths, mutes, the last turn's
model, branch and tools); the session resets it after a compaction or a switch.

Conditions run under the budgets of ``rules_core.stream.budget`` (``PI_RULES_STREAM_BUDGET_MS``
from the engine's environment): a rule too slow is switched off, the call that did it
reports one line to ``on_fault``, and ``switched_off``/``switch_off`` carry the decision
across processes for a host that starts one per event.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping

from rules_core.engine.core import Engine
from rules_core.lookup import normalize_touched
from rules_core.model import Facts
from rules_core.stream.budget import MAX_OFF, budget_from_env
from rules_core.stream.model import NOTHING, StreamResult

if TYPE_CHECKING:
    from rules_core.stream.watcher import StreamWatcher

# A per-process host's journal record: rules switched off as too slow, id -> fingerprint.
STREAM_OFF_TYPE = "pi-rules/stream-off"
MAX_JOURNAL = 64 * 1024 * 1024  # as the Claude Code state file: bigger was not written by us


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

    def switched_off(self) -> dict[str, str]:
        """Rules switched off as too slow (id -> fingerprint of their conditions)."""
        return self._watcher.switched_off() if self._watcher is not None else {}

    def switch_off(self, known: Mapping[str, str]) -> None:
        """What an earlier process of this session switched off; never raises."""
        try:
            self._new_watcher().switch_off(known)
        except Exception as exc:  # noqa: BLE001 - a damaged state file must not break the host
            self._on_fault(f"stream switch-off: {type(exc).__name__}: {exc}")

    @property
    def watched(self) -> tuple[str, ...]:
        """Ids of the stream rules armed now."""
        return tuple(spec.rule.id for spec in self._armed().specs)

    def _new_watcher(self) -> StreamWatcher:
        if self._watcher is None:
            # Loaded here: most events of a hook process (a read, a prompt) watch no stream.
            from rules_core.stream.watcher import StreamWatcher, globs_gate

            self._watcher = StreamWatcher(
                gate=globs_gate(self._cwd), render=self._engine.hooks.render, budget=budget_from_env(self._engine.env)
            )
        return self._watcher

    def _armed(self) -> StreamWatcher:
        watcher = self._new_watcher()
        # Cheap to compute per delta; the (costlier) re-arm runs only when it changes.
        key = self._state()
        if key != self._armed_for:
            facts = self._facts()
            watcher.arm(self._engine.stream_specs(facts), facts.touched)
            self._armed_for = key
        return watcher

    def _said(self, result: StreamResult) -> StreamResult:
        """A call that switched rules off or was cut reported one line: the host logs it."""
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


def switch_off_record(rules: Mapping[str, str]) -> dict[str, Any]:
    """The journal record of rules a process switched off (``read_switch_offs`` folds it)."""
    return {"type": STREAM_OFF_TYPE, "rules": dict(rules)}


def read_switch_offs(path: str) -> dict[str, str]:
    """Every switch-off recorded in a JSON-lines journal, kept whatever else happened in
    the session (a /clear or a compaction leaves a slow rule as slow). Never raises: an
    unreadable journal means nothing was switched off."""
    found: dict[str, str] = {}
    for record in read_records(path, STREAM_OFF_TYPE):
        rules = record.get("rules")
        if isinstance(rules, dict):
            found.update((k, v) for k, v in rules.items() if isinstance(k, str) and isinstance(v, str))
    return dict(list(found.items())[-MAX_OFF:])


def read_records(path: str, record_type: str) -> list[dict[str, Any]]:
    """The records of one ``type`` in a JSON-lines journal, oldest first; ``[]`` when it
    cannot be read. Lines of other types are not even parsed."""
    try:
        # Non-blocking and not following a link, as the journal itself is read.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_JOURNAL)
    except (OSError, ValueError):
        return []
    marker = record_type.encode()
    found: list[dict[str, Any]] = []
    for raw in data.split(b"\n")[:-1]:  # the last piece is "" or a torn line
        if marker not in raw:
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("type") == record_type:
            found.append(record)
    return found
