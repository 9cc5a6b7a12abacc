"""Stream rules at run time: watch the model's output as it streams, say what fires.

A stream rule never enters the system-prompt section. A plugin (the built-in
``stream``) turns it into a ``StreamSpec`` through ``pi_rules_stream_spec``; the
``StreamWatcher`` here feeds every delta of prose, thinking and tool-call arguments to
the specs whose scope admits that surface, and reports the rules that fired and
whether the host should interrupt the model.

Matching is incremental: each delta is searched with the few characters before it that
a match ending in it could have started in (capped at ``WINDOW``), so a stream costs O(n)
however it is split; a pattern whose matches can be longer is also searched over the
whole stream when it ends (docs/stream.md). ``stream_plan`` groups the candidates into
searches; ``stream_budget`` says what each may cost and switches off what costs more;
``stream_buffer`` holds one stream's text, bounded by bytes.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from rules_core.globs.compiled import EMPTY_GLOBSET
from rules_core.model import Rule
from rules_core.stream.budget import MAX_FAULTS, SEARCH_SECONDS, Meter, StreamBudget  # noqa: F401
# The values live in stream_model; importing them from here keeps one public module.
from rules_core.stream.model import (
    INTERRUPT_MODES,
    NOTHING,
    SURFACES,
    AstMatcher,
    Firing,
    Gate,
    InterruptMode,
    Renderer,
    ScopeEntry,
    StreamPattern,
    StreamResult,
    StreamSpec,
    Surface,
    ToolOutput,
)
from rules_core.stream.buffer import StreamBuffer as _Stream, cap_note, key as _key, source as _source
from rules_core.stream.plan import WINDOW, Plan, lookback, make_plan

# Characters kept before the search window so ``^``, ``\b`` and look-behinds see the
# real text before it rather than a false start of string.
CONTEXT = 64
# Streams open at once (a hostile host inventing call ids evicts its own oldest).
MAX_STREAMS = 64
SNIPPET = 60


class StreamWatcher:
    """Per-session watcher. ``feed`` each delta, ``end`` each stream, ``turn`` at each new
    model turn, ``reset`` after a compaction or branch switch. Never raises on hostile
    input: non-string text is ignored."""

    def __init__(
        self,
        specs: Sequence[StreamSpec] = (),
        *,
        gate: Gate | None = None,
        touched: Sequence[str] = (),
        render: Renderer | None = None,
        budget: StreamBudget | None = None,
    ) -> None:
        self._gate = gate or (lambda rule, paths: True)
        self._render = render
        self._specs: tuple[StreamSpec, ...] = ()
        self._touched: tuple[str, ...] = ()
        self._streams: dict[tuple[str, str, str], _Stream] = {}
        self._turn = 0
        self._last_fired: dict[str, int] = {}
        self._plans: dict[tuple[int, tuple[int, ...]], Plan] = {}
        self._epoch = 0
        # Times every search; rules too slow are off for the session (stream_budget).
        self._meter = Meter(budget)
        # Firings found while a late file path admitted new rules, reported with the delta.
        self._pending: list[Firing] = []
        self.arm(specs, touched)

    # -- lifecycle ------------------------------------------------------------------------

    def arm(self, specs: Sequence[StreamSpec], touched: Sequence[str] = ()) -> None:
        """The rules to watch and the session's touched paths changed (new facts)."""
        specs, touched = tuple(specs), tuple(touched)
        if specs == self._specs and touched == self._touched:
            return
        self._specs, self._touched = specs, touched
        self._plans.clear()
        self._epoch += 1
        for stream in self._streams.values():
            stream.eligible = self._eligible(stream.surface, stream.tool, stream.path)

    @property
    def specs(self) -> tuple[StreamSpec, ...]:
        return self._specs

    def turn(self) -> None:
        """A new model turn: every stream buffer is dropped; ``after-gap`` counts turns."""
        self._turn += 1
        self._epoch += 1
        self._streams.clear()

    def reset(self) -> None:
        """After a compaction or branch switch: the rules fired so far may fire again.
        Rules switched off as too slow stay off: they are as slow as before."""
        self._streams.clear()
        self._last_fired.clear()
        self._epoch += 1

    # -- budgets --------------------------------------------------------------------------

    @property
    def faults(self) -> list[str]:  # the latest report lines: one per call that switched off or cut
        return self._meter.faults

    @property
    def fault_count(self) -> int:  # all report lines so far, so a caller can tell a new one arrived
        return self._meter.fault_count

    @property
    def searches(self) -> int:
        """Individual rule searches run so far (alternations not counted)."""
        return self._meter.searches

    def switched_off(self) -> dict[str, str]:
        """Rules switched off as too slow: id -> fingerprint of their conditions. A host
        that starts a process per event keeps this and hands it to ``switch_off``."""
        return self._meter.export_off()

    def switch_off(self, known: Mapping[str, str]) -> None:
        """Rules an earlier process switched off (already reported there)."""
        self._meter.import_off(known)

    # -- feeding --------------------------------------------------------------------------

    def feed(
        self, source: Any, delta: Any, *, tool: Any = None, call_id: Any = None, path: Any = None
    ) -> StreamResult:
        """One delta of one stream (``source``: text, thinking or tool; tool deltas name
        the tool and, when known, the call id and the file path)."""
        with self._meter:
            stream = self._stream(source, tool, call_id, path)
            pending, self._pending = self._pending, []
            if stream is None or not isinstance(delta, str) or not delta:
                return self._result(pending)
            window_text, pos = self._append(stream, delta)
            candidates = self._candidates(stream)
            if candidates:
                pending += self._search(stream, candidates, window_text, pos, len(window_text) - len(delta))
            return self._result(pending)

    def end(self, source: Any, *, tool: Any = None, call_id: Any = None, path: Any = None) -> StreamResult:
        """The stream is complete: search unbounded patterns over the whole text and run
        ast conditions (tool streams only), then forget the stream."""
        with self._meter:
            key = _key(source, tool, call_id)
            if key is None or key not in self._streams:
                return NOTHING
            self._stream(source, tool, call_id, path)  # a path named only now still gates
            stream = self._streams.pop(key)
            firings, self._pending = self._pending, []
            whole = stream.whole()
            found_at: list[tuple[int, Firing]] = []
            # The user's own rules first, so a repository's slow ones cannot use up their
            # time; reported in discovery order all the same.
            for order, spec in sorted(enumerate(self._candidates(stream)), key=lambda item: not item[1].is_global):
                firing = self._whole_search(stream, spec, whole)
                if firing is not None:
                    found_at.append((order, firing))
                    self._fired(stream, spec)
            return self._result(firings + [firing for _, firing in sorted(found_at, key=lambda item: item[0])])

    def check(self, source: Any, text: Any, *, tool: Any = None, path: Any = None) -> StreamResult:
        """A complete snapshot (a file a tool would write, a snippet): feed it at once and
        end it, on a stream of its own, within one call's budget."""
        call_id = f"check:{id(text)}"
        with self._meter:
            first = self.feed(source, text, tool=tool, call_id=call_id, path=path)
            last = self.end(source, tool=tool, call_id=call_id, path=path)
        return self._result(list(first.fired) + list(last.fired))

    # -- internals ------------------------------------------------------------------------

    def _stream(self, source: Any, tool: Any, call_id: Any, path: Any) -> _Stream | None:
        key = _key(source, tool, call_id)
        if key is None:
            return None
        stream = self._streams.get(key)
        path = path if isinstance(path, str) and path else None
        if stream is None:
            tool_name = tool if isinstance(tool, str) and source == "tool" else None
            stream = _Stream(source, tool_name, path, self._eligible(source, tool_name, path))
            if len(self._streams) >= MAX_STREAMS:
                self._streams.pop(next(iter(self._streams)))
            self._streams[key] = stream
        elif path is not None and path != stream.path:
            # The file path of a tool call often arrives after some of its arguments:
            # newly admitted rules catch up on the text streamed so far.
            before = {id(s) for s in stream.eligible}
            stream.path = path
            stream.eligible = self._eligible(stream.surface, stream.tool, path)
            stream.cache = None
            whole = stream.whole()
            for spec in sorted(stream.eligible, key=lambda s: not s.is_global):
                if id(spec) not in before and whole:
                    self._catch_up(stream, spec, whole)
        return stream

    def _eligible(self, surface: str, tool: str | None, path: str | None) -> list[StreamSpec]:
        paths = (path,) if path else self._touched
        eligible = []
        for spec in self._specs:
            if not any(entry.admits(surface, tool, path) for entry in spec.scope):
                continue
            if spec.rule.globs and not self._gate(spec.rule, paths):
                continue
            eligible.append(spec)
        return eligible

    def _candidates(self, stream: _Stream) -> list[StreamSpec]:
        version = (self._epoch, self._meter.version)
        if stream.cache is None or stream.cache[0] != version:
            found = [
                s for s in stream.eligible
                if s.rule.id not in stream.fired and not self._meter.is_off(s) and self._may_fire(s)
            ]
            stream.cache = (version, found, None)
        return stream.cache[1]

    def _may_fire(self, spec: StreamSpec) -> bool:
        last = self._last_fired.get(spec.rule.id)
        if last is None:
            return True
        return spec.repeat_gap is not None and self._turn - last >= spec.repeat_gap

    def _append(self, stream: _Stream, delta: str) -> tuple[str, int]:
        """Record the delta; return the text to search and where the search starts."""
        text = stream.tail + delta
        pos = max(0, len(stream.tail) - WINDOW + 1)
        if stream.length > len(stream.tail):
            pos = max(pos, min(CONTEXT, len(stream.tail)))
        stream.length += len(delta)
        stream.tail = text[-(WINDOW + CONTEXT) :]
        if stream.keep(delta):
            self._meter.note(cap_note(stream))
        return text, pos

    def _search(
        self, stream: _Stream, candidates: list[StreamSpec], text: str, pos: int, delta_start: int
    ) -> list[Firing]:
        """Search the new text (and the window before it) for every candidate's patterns,
        tier by tier, the user's own rules first.

        Joinable patterns are searched as two alternations first — short (bounded) ones
        and long (unbounded) ones — so a delta that matches nothing costs two searches of
        a few characters per tier, however many rules there are."""
        cache = stream.cache
        plan = cache[2] if cache is not None else None
        if plan is None:
            plan = self._plan(candidates)
            if cache is not None:
                stream.cache = (cache[0], cache[1], plan)
        found_at: list[tuple[int, Firing]] = []
        for tier in plan.tiers:
            hits = list(tier.alone)
            for union, width, members in tier.groups:
                start = max(pos, delta_start - width + 1)
                if self._meter.search_union(tier.tier, union, members, text, start) is not False:
                    hits += members  # a match, or it overran: the searches one by one tell
            for order, spec, pattern in sorted(hits, key=lambda hit: hit[0]):
                if spec.rule.id in stream.fired:
                    continue
                found = self._meter.search(spec, pattern, text, max(pos, delta_start - lookback(pattern.width) + 1))
                if found is not None:
                    found_at.append((order, self._firing(stream, spec, pattern, found, stream.length - len(text))))
                    self._fired(stream, spec)
        return [firing for _, firing in sorted(found_at, key=lambda item: item[0])]

    def _plan(self, specs: list[StreamSpec]) -> Plan:
        key = (self._meter.version, tuple(id(s) for s in specs))  # the version: who is searched alone
        plan = self._plans.get(key)
        if plan is None:
            plan = make_plan(specs, self._meter.solo)
            if len(self._plans) > 256:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _whole_search(self, stream: _Stream, spec: StreamSpec, whole: str) -> Firing | None:
        for pattern in spec.patterns:
            if pattern.width is not None and pattern.width <= WINDOW:
                continue  # the per-delta windows already saw every match it can make
            found = self._meter.search(spec, pattern, whole, 0)
            if found is not None:
                return self._firing(stream, spec, pattern, found, 0)
        if spec.ast is not None and stream.surface == "tool" and stream.path and not self._meter.is_off(spec):
            found_ast = spec.ast(whole, stream.path)
            if found_ast:
                return Firing(spec.rule, _source(stream), found_ast[1], spec.interrupts(stream.surface))
        return None

    def _catch_up(self, stream: _Stream, spec: StreamSpec, whole: str) -> None:
        """A rule admitted mid-stream searches the text it has not seen yet, whole."""
        if spec.rule.id in stream.fired or not self._may_fire(spec):
            return
        for pattern in spec.patterns:
            found = self._meter.search(spec, pattern, whole, 0)
            if found is not None:
                self._pending.append(self._firing(stream, spec, pattern, found, 0))
                self._fired(stream, spec)
                return

    def _fired(self, stream: _Stream, spec: StreamSpec) -> None:
        stream.fired.add(spec.rule.id)
        self._last_fired[spec.rule.id] = self._turn
        self._epoch += 1

    def _firing(
        self, stream: _Stream, spec: StreamSpec, pattern: StreamPattern, found: Any, start: int
    ) -> Firing:
        reason = f"matched /{pattern.source}/: {quote_snippet(found.group(0))}"
        return Firing(spec.rule, _source(stream), reason, spec.interrupts(stream.surface), start + found.start())

    def _result(self, firings: list[Firing]) -> StreamResult:
        if not firings:
            return NOTHING
        interrupt = any(f.interrupt for f in firings)
        block = ""
        if self._render is not None:
            kind = "stream-interrupt" if interrupt else "stream-reminder"
            block = self._render(kind, {"firings": tuple(firings)}) or ""
        return StreamResult(tuple(firings), interrupt, block)


def quote_snippet(text: str) -> str:
    shown = text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)


def globs_gate(cwd: str) -> Gate:
    """The path gate of a stream rule's ``globs``: the normal glob rules, rebased."""

    def gate(rule: Rule, paths: Sequence[str]) -> bool:
        globset = rule.compiled.globs if rule.compiled is not None else EMPTY_GLOBSET
        return globset.first_session_match(paths, cwd, rule.file.base) is not None

    return gate
