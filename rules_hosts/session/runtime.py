"""The host-neutral session runtime (RULE-SPEC §5–§6): one object per agent session.

Its results live in ``session_results``; the once-per-conversation bookkeeping of
process-per-event hosts in ``deliver_once``.

Each method mirrors a host event and returns a frozen result saying what the host must
do: entries to persist, the section to patch or remove, the status text, a tool result's
content with an attachment appended. Inputs are untrusted JSON-shaped values; no method
raises (a host calls them inside its own event dispatch) and none does I/O beyond what
the engine does. Every result has ``to_json()`` so a protocol adapter is a thin layer.
"""

from __future__ import annotations

import functools
import os
import traceback
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence, TypeVar, cast

from rules_core.discovery.cache import add_bounded
from rules_core.delivery import revived_copy
from rules_core.engine.core import Engine
from rules_core.discovery.git import current_branch
from rules_core.lookup import READ_RULE_DESCRIPTION, find_by_id, normalize_touched
from rules_core.model import Evaluation, Facts, Rule
from rules_core.safe import reveal_invisible, safe_line, safe_lines
from rules_core.settings.resolved import Resolved

import rules_hosts.session.attach as attach
from rules_hosts.session.facts import LIVE, host_facts, resolved_budget, strings
from rules_hosts.session.results import Capture, SessionState, ToolDefinition, ToolResultEffect, Turn, plain_json
from rules_hosts.session.stream import SessionStream
from rules_hosts.shapes import READ_RULE_PARAMETERS

TOUCHED_CUSTOM_TYPE = "pi-rules-md/touched"
SWITCH_REASONS = frozenset({"new", "resume", "fork"})  # a different session: state resets
# Beyond these many distinct paths (delivered ids) the oldest is forgotten: memory and the
# per-turn matching cost stay bounded (docs/session.md); a real session touches hundreds.
MAX_TOUCHED = MAX_DELIVERED = 4096
USAGE = "Usage: /rules [show <id> | why <path> | mute <id> | unmute <id>]"

F = TypeVar("F", bound=Callable[..., Any])


def touched_entry(paths: Sequence[str]) -> dict[str, Any]:
    """The custom session entry that persists one batch of newly touched paths."""
    return {"type": "custom", "customType": TOUCHED_CUSTOM_TYPE, "data": {"paths": list(paths)}}


def touched_from_entries(entries: Any, cwd: str) -> tuple[str, ...] | None:
    """The touched set a branch's entries record: in order, normalised, first-seen.

    ``None`` when the branch cannot be read (not a list): the caller keeps what it has.
    Foreign and damaged entries are skipped one by one.
    """
    if not isinstance(entries, (list, tuple)):
        return None
    folded: dict[str, None] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("customType") != TOUCHED_CUSTOM_TYPE:
            continue
        if entry.get("type", "custom") != "custom" or not isinstance(entry.get("data"), dict):
            continue
        batch = entry["data"].get("paths")
        if isinstance(batch, (list, tuple)):  # batch by batch, evicting as tool_start did
            add_bounded(folded, normalize_touched([p for p in batch if isinstance(p, str)], cwd), MAX_TOUCHED)
    return tuple(folded)


def _total(fallback: Callable[[Any], Any]) -> Callable[[F], F]:
    """A host calls us inside its event dispatch: a fault answers ``fallback(session)``
    and is kept in ``Session.last_fault`` (an adapter may log it)."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def total(self: Session, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
                at = f" at {where.filename}:{where.lineno}" if where else ""
                self.last_fault = f"{type(exc).__name__}: {exc}{at}"
                return fallback(self)

        return cast(F, total)

    return wrap


class Session:
    """One agent session over an ``Engine``. Never raises; hostile inputs have no effect."""

    def __init__(self, engine: Engine, cwd: str, *, trusted: bool, host: str = "pi",
                 env: Mapping[str, str] | None = None, agent: str = "main") -> None:
        self.engine = engine
        self.agent = agent if isinstance(agent, str) and agent else "main"
        self.cwd = os.path.abspath(cwd)  # touched paths are normalised against it
        self.trusted = bool(trusted)
        self.host = host
        # The environment level of the settings; the files are re-read each turn, when changed.
        self.env: Mapping[str, str] = engine.env if env is None else env
        self._touched: dict[str, None] = {}
        self._mutes: dict[str, None] = {}
        self._delivered: dict[str, None] = {}  # ids handed to the model, first-delivery order
        self._section = ""  # the injected section ("" when none); its content decides patches
        self._section_ids: tuple[str, ...] = ()
        self._last: Evaluation | None = None  # the last real cycle (before_agent_start)
        self.last_fault: str | None = None  # a bug swallowed by totality, for diagnostics
        self._given: dict[str, Any] = {}  # facts a per-event adapter supplies (use_facts)
        self._pinned: Resolved | None = None  # the event's settings (use_settings)
        # Stream rules: the model's output as it streams (docs/stream.md).
        self.stream = SessionStream(
            engine, self.cwd, facts=lambda: self._facts(prompt=""), state=self._stream_state,
            on_fault=self._fault,
        )

    def _stream_state(self) -> tuple[Any, ...]:
        return (id(self._touched), len(self._touched), self.mutes, id(self._last))

    def _fault(self, text: str) -> None:
        self.last_fault = text

    # -- views -----------------------------------------------------------------------

    @property
    def attach_enabled(self) -> bool:
        return self._resolve().with_env(self.env).attach

    def _resolve(self) -> Resolved:
        """The call's settings, read once at a method's entry (or pinned: ``use_settings``)."""
        pinned = self._pinned
        return (pinned.for_host(self.host) if pinned is not None and pinned.serves(self.cwd, self.trusted)
                else self.engine.resolve(self.cwd, self.trusted, self.host))

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(self._touched)

    @property
    def mutes(self) -> tuple[str, ...]:
        return tuple(self._mutes)

    @property
    def delivered(self) -> tuple[str, ...]:
        return tuple(self._delivered)

    @property
    def section(self) -> str:
        """The section currently injected ("" when none)."""
        return self._section

    @property
    def last_evaluation(self) -> Evaluation | None:
        return self._last

    @property
    def status(self) -> str | None:
        return _status(self._last) if self._last is not None else None

    def state(self, rebuilt: bool = False) -> SessionState:
        return SessionState(rebuilt, self.touched, self.mutes, self.delivered)

    # -- session lifecycle -----------------------------------------------------------

    def use_facts(self, *, model: Any = None, tools: Any = ()) -> None:
        """The model and tools every later evaluation of this object uses (attachments and
        stream checks included), for adapters that are a new process per event and so
        never ran the cycle that would have left them (Claude Code hooks)."""
        self._given = {"model": model if isinstance(model, str) and model else None, "tools": strings(tools)}

    def use_settings(self, resolved: Resolved) -> None:
        """The settings every later call reads, for an adapter living one event (Claude Code)."""
        self._pinned = resolved

    @property
    def reference(self) -> str:
        """How this host's agent fetches a rule listed by reference (``HostInfo.reference``)."""
        info = self.engine.hooks.hosts().get(self.host)
        return info.reference if info is not None else ""

    @property
    def delivery(self) -> str:
        """How this host's model gets rules (``HostInfo.delivery``): ``per-turn`` or ``once``."""
        info = self.engine.hooks.hosts().get(self.host)
        return info.delivery if info is not None else "per-turn"

    def restore(self, section: str, delivered: Sequence[str]) -> None:
        """Restore the injected section and delivered ids a previous process recorded.

        For hosts whose adapter is a new process per event (Claude Code hooks): the Pi
        host lives as long as the session and never needs it.
        """
        self._section = section if isinstance(section, str) else ""
        self._section_ids = ()
        self._delivered = {}
        add_bounded(self._delivered, (d for d in delivered if isinstance(d, str)), MAX_DELIVERED)

    @_total(lambda self: self.state())
    def session_start(self, reason: Any = "startup", entries: Any = None) -> SessionState:
        """Every ``session_start`` reason; ``new``/``resume``/``fork`` are session switches."""
        if isinstance(reason, str) and reason in SWITCH_REASONS:
            return self.session_switch(entries)
        return self._rebuild(entries)

    @_total(lambda self: self.state())
    def session_tree(self, entries: Any = None) -> SessionState:
        """Tree navigation: the touched set becomes what the new current branch recorded."""
        return self._rebuild(entries)

    @_total(lambda self: self.state())
    def session_switch(self, entries: Any = None) -> SessionState:
        """A different session (switch or fork): mutes, delivered and touched start empty."""
        self._mutes.clear()
        self._delivered.clear()
        self._touched.clear()
        self.stream.reset()
        return self._rebuild(entries)

    def compact(self) -> SessionState:
        """Compaction: the transcript is gone, so attachments may deliver again; mutes stay."""
        self._delivered.clear()
        self.stream.reset()  # the reminders it delivered are gone with the transcript
        return self.state()

    def _rebuild(self, entries: Any) -> SessionState:
        paths = touched_from_entries(entries, self.cwd)
        if paths is None:  # unreadable branch: keep what was folded, never assume empty
            return self.state()
        # Writes no entry and leaves the injected section alone: only touched paths persist.
        self._touched = dict.fromkeys(paths)
        return self.state(rebuilt=True)

    # -- tools -----------------------------------------------------------------------

    @_total(lambda self: Capture())
    def tool_start(self, tool: Any, args: Any) -> Capture:
        """``tool_execution_start``: capture the paths the untrusted ``args`` name."""
        raw = self.engine.hooks.capture_paths(self.host, tool, args)
        new = [p for p in normalize_touched(raw, self.cwd) if p not in self._touched]
        if not new:
            return Capture()  # a repeated path writes nothing
        add_bounded(self._touched, new, MAX_TOUCHED)  # the rebuild folds entries the same way
        return Capture(tuple(new), touched_entry(new))

    @_total(lambda self: ToolResultEffect())
    def tool_result(self, tool: Any, content: Any, is_error: Any = False) -> ToolResultEffect:
        """``tool_result``: exists-scan invalidation and mid-run attachment."""
        name = tool if isinstance(tool, str) else ""
        invalidated = name in ("write", "edit", "bash")
        if invalidated:  # the tree may have changed, failed or not; a rescan is cheap
            self.engine.invalidate_scans()
        errored = is_error is not False and is_error is not None  # only a clean result attaches
        resolved = self._resolve()
        if not resolved.with_env(self.env).attach or name not in attach.ATTACHING_TOOLS or errored:
            return ToolResultEffect(invalidated=invalidated)
        if attach.append_block(content, "") is None:  # a foreign shape: do not even evaluate
            return ToolResultEffect(invalidated=invalidated)
        # The last turn's facts with an EMPTY prompt; data only: no section, no new trace.
        evaluation = self.engine.evaluate(self._facts(prompt="", fresh=True, resolved=resolved), resolved=resolved)
        held = {*self._delivered, *self._section_ids}
        rooms = attach.ROOMS.get(self.delivery, attach.section_rooms)(evaluation, held)
        batch = attach.plan_batch(evaluation, held, self.engine.hooks.render, reference=self.reference, rooms=rooms)
        if batch.block is None:
            return ToolResultEffect(invalidated=invalidated)
        add_bounded(self._delivered, batch.delivered, MAX_DELIVERED)
        return ToolResultEffect(
            attach.append_block(content, batch.block), batch.delivered, invalidated, batch.block
        )

    # -- turns -----------------------------------------------------------------------

    @_total(lambda self: Turn())
    def before_agent_start(self, prompt: Any = "", model: Any = None, tools: Any = (), branch: Any = LIVE,
                           host_loaded: Any = None) -> Turn:  # LIVE asks git once per turn (RULE-SPEC §5)
        """One real cycle: evaluate, then patch, remove or keep the section (zero churn)."""
        resolved = self._resolve()
        loaded = host_loaded if isinstance(host_loaded, frozenset) else None
        facts = host_facts(self.cwd, env=self.engine.env, trusted=self.trusted, touched=self.touched, prompt=prompt,
                           model=model, branch=branch, tools=tools, mutes=self.mutes, agent=self.agent,
                           host=self.host, settings=resolved.with_env(self.env), host_loaded=loaded)
        self._last = self.engine.evaluate(facts, resolved=resolved)
        return self._apply(self._last)

    def _apply(self, evaluation: Evaluation) -> Turn:
        section = evaluation.section
        status = _status(evaluation)
        if not section:
            had, self._section, self._section_ids = bool(self._section), "", ()
            return Turn("remove" if had else "none", None, status, evaluation)
        # Every rule the injected section carries counts as delivered, patched or not.
        self._section_ids = tuple(o.rule.id for o in attach.selected(evaluation))  # index lines too
        add_bounded(self._delivered, self._section_ids, MAX_DELIVERED)
        if section == self._section:
            return Turn("none", None, status, evaluation)  # identical content: zero churn
        self._section = section
        return Turn("patch", section, status, evaluation)

    def _facts(self, prompt: str, fresh: bool = False, resolved: Resolved | None = None) -> Facts:
        """The last cycle's facts (tools, model, branch) over the current session state."""
        base = self._last.facts if self._last is not None else None
        if base is None:
            # No git for an untrusted project (issue 14, attack 5): no process runs in it.
            base = Facts(cwd=self.cwd, branch=current_branch(self.cwd) if fresh and self.trusted else None)
        return replace(
            base, cwd=self.cwd, trusted=self.trusted, touched=self.touched, prompt=prompt,
            mutes=frozenset(self._mutes), agent=self.agent, host=self.host,
            **resolved_budget((resolved or self._resolve()).with_env(self.env), self.host),
            **self._given,
        )

    # -- /rules and read_rule --------------------------------------------------------

    @_total(lambda self: USAGE)
    def command(self, text: Any) -> str:
        """``/rules [show <id> | why <path> | mute <id> | unmute <id>]`` → the answer text."""
        if not isinstance(text, str):
            return USAGE
        words = text.split()
        if words[:1] == ["/rules"]:
            words = words[1:]
            text = text.split("/rules", 1)[1]
        if not words:
            return self._render("report", {"evaluation": self._report_evaluation()})
        verb, rest = words[0], words[1:]
        if verb == "why" and rest:
            path = text.split("why", 1)[1].strip()  # a path may contain spaces
            resolved = self._resolve()
            explanation = self.engine.explain(self._facts(prompt="", resolved=resolved), path, resolved)
            return self._render("explain", {"explanation": explanation})
        if verb not in ("show", "mute", "unmute") or len(rest) != 1:
            return USAGE
        rule_id = rest[0]
        if verb == "unmute" and rule_id in self._mutes:
            del self._mutes[rule_id]
            return f"unmuted: {safe_line(rule_id)}"
        rule = self._find(lambda rules: find_by_id(rules, rule_id))
        if rule is None:
            return f"Unknown rule: {safe_line(rule_id)}"
        if verb == "show":
            return self._render("show", {"rule": rule})
        if verb == "mute":
            # Dedupe kept this copy of an identical body: muting it brings the other back.
            twin = None if rule_id in self._mutes else revived_copy(self._report_evaluation(), rule_id)
            self._mutes.setdefault(rule_id, None)  # re-muting is a no-op that still answers
            if twin is not None:
                note = f"note: {safe_line(twin)} has the same body and now applies in its place; mute it too"
                return f"muted: {safe_line(rule_id)}\n{note}"
        return f"{verb}d: {safe_line(rule_id)}"

    def read_rule_tool(self) -> ToolDefinition:
        """The ``read_rule`` tool: frozen description, one string parameter ``path``."""
        return ToolDefinition("read_rule", READ_RULE_DESCRIPTION, plain_json(READ_RULE_PARAMETERS))

    @_total(lambda self: "Unknown rule: ")
    def read_rule(self, args: Any) -> str:
        """A reference rule's body by exact rules-relative path, else ``Unknown rule: <name>``."""
        name = args.get("path") if isinstance(args, dict) else args
        name = name if isinstance(name, str) else ""
        resolved = self._resolve()
        reading = self.engine.read_rule(self._facts("", resolved=resolved), name, self.rules(resolved), resolved)
        if reading.rule is None:
            return safe_lines(reading.refusal or "")
        # The model asked by a path several rules share: it must learn how to reach the others.
        return reveal_invisible(reading.rule.body) + (f"\n\n{reading.note}" if reading.note else "")

    def rules(self, resolved: Resolved | None = None) -> tuple[Rule, ...]:
        """The enriched rules of the last real cycle; before any cycle, a fresh discovery."""
        if self._last is not None:
            return self._last.rules
        return self.engine.discover(self.cwd, self.trusted, self.host, resolved or self._resolve()).rules

    def _find(self, pick: Callable[[Sequence[Rule]], Rule | None]) -> Rule | None:
        found = pick(self.rules())
        if found is None and self._last is not None:  # created since the last cycle
            found = pick(self.engine.discover(self.cwd, self.trusted, self.host).rules)
        return found

    def _report_evaluation(self) -> Evaluation:
        if self._last is not None:
            return self._last
        # No cycle yet: what the session state would give, without becoming a cycle.
        resolved = self._resolve()
        return self.engine.evaluate(self._facts(prompt="", fresh=True, resolved=resolved), resolved=resolved)

    def _render(self, kind: str, data: dict[str, Any]) -> str:
        text = self.engine.hooks.render(kind, {**data, "cwd": self.cwd})
        if not isinstance(text, str):
            return f"no plugin renders {kind!r} (is the report plugin blocked?)"
        return text[:-1] if text.endswith("\n") else text


def _status(evaluation: Evaluation) -> str | None:
    """``rules: <n> · ~<tokens> tok`` while a section is injected; ``None`` clears it."""
    if not evaluation.section:
        return None
    count = len(evaluation.active) + len(evaluation.on_demand)
    return f"rules: {count} · ~{evaluation.section_tokens} tok"
