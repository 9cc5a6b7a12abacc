"""Stream rules at run time: watch the model's output as it streams, say what fires.

(Slightly over 400 lines: the watcher's per-stream buffers, its windowed search and its
fault switch-off share one invariant — linear work however the text is split — and read
best together; the values already live in ``stream_model.py``.)

A stream rule never enters the system-prompt section. A plugin (the built-in
``stream``) turns it into a ``StreamSpec`` through ``pi_rules_stream_spec``; the
``StreamWatcher`` here feeds every delta of prose, thinking and tool-call arguments to
the specs whose scope admits that surface, and reports the rules that fired and
whether the host should interrupt the model.

Matching is incremental: each delta is searched together with the last few characters
before it (the longest match a pattern can make, capped at ``WINDOW``), so a stream of
n characters costs O(n) however it is split. A pattern whose matches can be longer than
the window is also searched once over the whole stream when it ends, so the rules that
fire never depend on how the text was split (docs/stream.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import regex

from .compiled import EMPTY_GLOBSET
from .model import Rule
# The values live in stream_model; importing them from here keeps one public module.
from .stream_model import (  # noqa: F401
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

# The longest match the per-delta search looks for; longer matches of unbounded
# patterns are found by the whole-stream search when the stream ends.
WINDOW = 256
# Characters kept before the search window so ``^``, ``\b`` and look-behinds see the
# real text before it rather than a false start of string.
CONTEXT = 64
# Per stream, text kept for the end-of-stream search and ast conditions (1 Mi chars),
# and streams open at once (a hostile host inventing call ids evicts its own oldest).
STORE_LIMIT = 1024 * 1024
MAX_STREAMS = 64
SNIPPET = 60
# One search may take this long. Conditions are author-written regexes from unvetted
# repositories: one that backtracks catastrophically is given up on, not waited for.
SEARCH_SECONDS = 0.1
MAX_FAULTS = 16



@dataclass
class _Stream:
    surface: str
    tool: str | None
    path: str | None
    eligible: list[StreamSpec]
    tail: str = ""
    length: int = 0
    chunks: list[str] = field(default_factory=list)
    stored: int = 0
    fired: set[str] = field(default_factory=set)
    # (watcher epoch, candidates, their search plan): recomputed only when rules fire,
    # the turn changes or the watcher is re-armed, not at every delta.
    cache: tuple[int, list[StreamSpec], Any] | None = None


@dataclass(frozen=True)
class _Plan:
    """How one set of candidate rules is searched: ``groups`` are alternations (regex,
    the widest match it needs to look back for, its members); ``alone`` the patterns
    that cannot join one. Members are (order, spec, pattern), order = discovery order."""

    groups: tuple[tuple[Any, int, tuple[tuple[int, StreamSpec, StreamPattern], ...]], ...]
    alone: tuple[tuple[int, StreamSpec, StreamPattern], ...]


def _make_plan(specs: Sequence[StreamSpec]) -> _Plan:
    short: list[tuple[int, StreamSpec, StreamPattern]] = []
    long: list[tuple[int, StreamSpec, StreamPattern]] = []
    alone: list[tuple[int, StreamSpec, StreamPattern]] = []
    for order, spec in enumerate(specs):
        for pattern in spec.patterns:
            member = (order, spec, pattern)
            if not pattern.joinable:
                alone.append(member)
            elif pattern.width is not None and pattern.width <= WINDOW:
                short.append(member)
            else:
                long.append(member)
    groups = []
    for members, width in ((short, max((m[2].width or 0 for m in short), default=0)), (long, WINDOW)):
        if not members:
            continue
        try:
            union = regex.compile("|".join(m[2].scoped for m in members))
        except (regex.error, RecursionError, OverflowError):
            alone += members  # too big or too odd to join: search each on its own
            continue
        groups.append((union, max(width, 1), tuple(members)))
    return _Plan(tuple(groups), tuple(alone))


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
    ) -> None:
        self._gate = gate or (lambda rule, paths: True)
        self._render = render
        self._specs: tuple[StreamSpec, ...] = ()
        self._touched: tuple[str, ...] = ()
        self._streams: dict[tuple[str, str, str], _Stream] = {}
        self._turn = 0
        self._last_fired: dict[str, int] = {}
        self._plans: dict[tuple[int, ...], _Plan] = {}
        self._epoch = 0
        # Rules whose condition took longer than SEARCH_SECONDS: off for this watcher.
        self._slow: set[str] = set()
        self.faults: list[str] = []  # the latest MAX_FAULTS
        self.fault_count = 0  # all of them, so a caller can tell a new one arrived
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
        """After a compaction or branch switch: the rules fired so far may fire again."""
        self._streams.clear()
        self._last_fired.clear()
        self._epoch += 1

    # -- feeding --------------------------------------------------------------------------

    def feed(
        self, source: Any, delta: Any, *, tool: Any = None, call_id: Any = None, path: Any = None
    ) -> StreamResult:
        """One delta of one stream (``source``: text, thinking or tool; tool deltas name
        the tool and, when known, the call id and the file path)."""
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
        key = _key(source, tool, call_id)
        if key is None or key not in self._streams:
            return NOTHING
        self._stream(source, tool, call_id, path)  # a path named only now still gates
        stream = self._streams.pop(key)
        firings, self._pending = self._pending, []
        whole = "".join(stream.chunks)
        for spec in self._candidates(stream):
            firing = self._whole_search(stream, spec, whole)
            if firing is not None:
                firings.append(firing)
                self._fired(stream, spec)
        return self._result(firings)

    def check(self, source: Any, text: Any, *, tool: Any = None, path: Any = None) -> StreamResult:
        """A complete snapshot (a file a tool would write, a snippet): feed it at once and
        end it, on a stream of its own."""
        call_id = f"check:{id(text)}"
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
            whole = "".join(stream.chunks)
            for spec in stream.eligible:
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
        if stream.cache is None or stream.cache[0] != self._epoch:
            found = [
                s for s in stream.eligible
                if s.rule.id not in stream.fired and s.rule.id not in self._slow and self._may_fire(s)
            ]
            stream.cache = (self._epoch, found, None)
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
        if stream.stored < STORE_LIMIT:
            kept = delta[: STORE_LIMIT - stream.stored]
            stream.chunks.append(kept)
            stream.stored += len(kept)
        return text, pos

    def _search(
        self, stream: _Stream, candidates: list[StreamSpec], text: str, pos: int, delta_start: int
    ) -> list[Firing]:
        """Search the new text (and the window before it) for every candidate's patterns.

        Joinable patterns are searched as two alternations first — short (bounded) ones
        and long (unbounded) ones — so a delta that matches nothing costs two searches of
        a few characters, however many rules there are."""
        if stream.cache is not None and stream.cache[2] is not None:
            plan = stream.cache[2]
        else:
            plan = self._plan(candidates)
            if stream.cache is not None:
                stream.cache = (stream.cache[0], stream.cache[1], plan)
        hits: list[tuple[int, StreamSpec, StreamPattern]] = list(plan.alone)
        for union, width, members in plan.groups:
            try:
                if union.search(text, max(pos, delta_start - width + 1), timeout=SEARCH_SECONDS) is not None:
                    hits += members
            except TimeoutError:
                hits += members  # one of them is slow: the searches one by one find which
        firings: list[Firing] = []
        for _, spec, pattern in sorted(hits, key=lambda hit: hit[0]):
            if spec.rule.id in stream.fired or spec.rule.id in self._slow:
                continue
            width = pattern.width if pattern.width is not None and pattern.width <= WINDOW else WINDOW
            found = self._find(spec, pattern, text, max(pos, delta_start - width + 1))
            if found is not None:
                firings.append(self._firing(stream, spec, pattern, found, stream.length - len(text)))
                self._fired(stream, spec)
        return firings

    def _plan(self, specs: list[StreamSpec]) -> _Plan:
        key = tuple(id(s) for s in specs)
        plan = self._plans.get(key)
        if plan is None:
            plan = _make_plan(specs)
            if len(self._plans) > 256:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _whole_search(self, stream: _Stream, spec: StreamSpec, whole: str) -> Firing | None:
        for pattern in spec.patterns:
            if pattern.width is not None and pattern.width <= WINDOW:
                continue  # the per-delta windows already saw every match it can make
            found = self._find(spec, pattern, whole, 0)
            if found is not None:
                return self._firing(stream, spec, pattern, found, 0)
        if spec.ast is not None and stream.surface == "tool" and stream.path:
            found_ast = spec.ast(whole, stream.path)
            if found_ast:
                return Firing(spec.rule, _source(stream), found_ast[1], spec.interrupts(stream.surface))
        return None

    def _catch_up(self, stream: _Stream, spec: StreamSpec, whole: str) -> None:
        """A rule admitted mid-stream searches the text it has not seen yet, whole."""
        if spec.rule.id in stream.fired or not self._may_fire(spec):
            return
        for pattern in spec.patterns:
            found = self._find(spec, pattern, whole, 0)
            if found is not None:
                self._pending.append(self._firing(stream, spec, pattern, found, 0))
                self._fired(stream, spec)
                return

    def _find(self, spec: StreamSpec, pattern: StreamPattern, text: str, pos: int) -> Any:
        """One search under the time limit; a rule that exceeds it is switched off for
        this watcher and reported in ``faults`` (never a hung host)."""
        if spec.rule.id in self._slow:
            return None
        try:
            return pattern.regex.search(text, pos, timeout=SEARCH_SECONDS)
        except TimeoutError:
            self._slow.add(spec.rule.id)
            self._epoch += 1
            self.fault_count += 1
            self.faults = self.faults[-(MAX_FAULTS - 1):] + [
                f"stream rule {spec.rule.id} ({spec.rule.relative_path}): condition /{pattern.source}/ took "
                f"over {SEARCH_SECONDS:g} s on {len(text) - pos} characters (catastrophic backtracking?); "
                "it is off for this session — simplify its nested or overlapping repetitions"
            ]
            return None

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


def _key(source: Any, tool: Any, call_id: Any) -> tuple[str, str, str] | None:
    if source not in SURFACES:
        return None
    if source != "tool":
        return (source, "", "")
    name = tool if isinstance(tool, str) else ""
    call = call_id if isinstance(call_id, (str, int)) and not isinstance(call_id, bool) else ""
    return (source, name, str(call))


def _source(stream: _Stream) -> str:
    if stream.surface != "tool":
        return stream.surface
    name = f"tool:{stream.tool or '?'}"
    return f"{name}({stream.path})" if stream.path else name


def quote_snippet(text: str) -> str:
    shown = text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)


def globs_gate(cwd: str) -> Gate:
    """The path gate of a stream rule's ``globs``: the normal glob rules, rebased."""

    def gate(rule: Rule, paths: Sequence[str]) -> bool:
        globset = rule.compiled.globs if rule.compiled is not None else EMPTY_GLOBSET
        return globset.first_session_match(paths, cwd, rule.file.base) is not None

    return gate

