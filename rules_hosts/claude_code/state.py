"""The Claude Code adapter's per-session state: the journal each hook process folds and
appends to, and the session lock that makes load–decide–append one step.

Claude Code runs the hooks of parallel tool calls at the same time (issue 14, attack 8):
the journal's own flock covers one append, so two hooks loading the same state would
both decide to deliver the same rule. A hook that decides deliveries therefore holds
``<id>.lock`` from loading the journal to appending what it delivered. See docs/hosts.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from rules_hosts.session.runtime import TOUCHED_CUSTOM_TYPE, touched_entry
from rules_hosts.session.file import append_line, encode_line, exclusive, open_for_append, path_refusal

MAX_STATE = 64 * 1024 * 1024  # a state file this big was not written by us: start afresh
# Bounded per event and compacting (issue 26): a section over MAX_SECTION_TEXT bytes is
# journalled as its digest, and a journal past COMPACT_AT is rewritten as what it folds to.
MAX_SECTION_TEXT = 256 * 1024
COMPACT_AT = 4 * 1024 * 1024
_KEPT_OTHER = 256  # records of other types (stream-off, scan-overran) a compaction keeps
_KEPT_ENTRIES = 4096  # touched entries a compaction keeps (the session's own cap on paths)
SECTION_TYPE = "pi-rules/section"  # the section text last injected ("" once it is gone)
DELIVERED_TYPE = "pi-rules/delivered"  # ids handed to the model, in delivery order ("agent": a sub-agent's)
STOPPED_TYPE = "pi-rules/stopped"  # delivered ids the model was told no longer apply
MODEL_TYPE = "pi-rules/model"  # the model SessionStart named, for every later event
# A sub-agent has a transcript of its own, so its deliveries are its own; beyond these many
# sub-agents the oldest one's are forgotten (at worst it gets a rule again).
MAX_AGENTS = 64
CLEAR_TYPE = "pi-rules/clear"  # /clear: everything before belongs to another conversation
COMPACT_TYPE = "pi-rules/compact"  # compaction: the transcript carrying the rules is gone
# How long a hook waits for another hook of the same session to finish deciding (parallel
# tool calls): well inside Claude Code's 30 s, and past it a rule waits for the next prompt.
LOCK_WAIT_ENV = "PI_RULES_LOCK_WAIT_MS"
LOCK_WAIT_MS = 10_000


class HookError(Exception):
    """A payload we refuse: reported on stderr, never raised to Claude Code."""


@dataclass
class State:
    """What the state file says: entries since the last /clear, section, delivered ids
    (the main conversation's, and each sub-agent's by its ``agent_id``), the model."""

    entries: list[Any] = field(default_factory=list)
    section: str = ""
    delivered: list[str] = field(default_factory=list)
    agents: dict[str, list[str]] = field(default_factory=dict)
    model: str | None = None
    section_digest: str | None = None  # a section too big to journal, by its sha256
    others: list[bytes] = field(default_factory=list)  # lines of other types, for compaction

    def delivered_to(self, agent_id: str | None) -> list[str]:
        """The ids delivered in the transcript of ``agent_id`` (``None``: the main one)."""
        return self.delivered if agent_id is None else self.agents.get(agent_id, [])


def section_record(section: str) -> dict[str, Any]:
    """The journal record of an injected section: its text, or past ``MAX_SECTION_TEXT``
    bytes its digest (a project may set any ``max_tokens``; the journal must not grow by a
    whole section per event)."""
    data = section.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_SECTION_TEXT:
        return {"type": SECTION_TYPE, "text": section}
    return {"type": SECTION_TYPE, "sha256": section_digest(section), "chars": len(section)}


def section_digest(section: str) -> str:
    return hashlib.sha256(section.encode("utf-8", "surrogatepass")).hexdigest()


def load(path: str, warn: Callable[[str], None] | None = None, compact: bool = False) -> State:
    """The folded state. Never fails the hook: a state file that cannot be read or is over
    ``MAX_STATE`` is set aside (``<path>.over``) and the session starts afresh, said on
    stderr, so the decisions that do not need it (the deny above all) still run. With
    ``compact`` (the caller holds the session lock), a file past ``COMPACT_AT`` is rewritten
    as what it folds to."""
    try:
        # Non-blocking: a FIFO in the state file's place must not hang the hook.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return State()
    except OSError as exc:
        _say(warn, f"cannot read state file {path}: {exc}; this event starts from an empty state")
        return State()
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_STATE + 1)
    except OSError as exc:  # a directory in its place, an I/O error
        _say(warn, f"cannot read state file {path}: {exc}; this event starts from an empty state")
        return State()
    if len(data) > MAX_STATE:
        with contextlib.suppress(OSError):
            os.replace(path, path + ".over")
        _say(warn, f"state file {path} is larger than {MAX_STATE} bytes; set aside as {path}.over, the session's "
                   "state starts afresh (rules may be delivered again)")
        return State()
    state = State()
    lines = data.split(b"\n")
    for raw in lines[:-1]:  # the last piece is "" or a torn line: ignored either way
        _fold(state, raw)
    if compact and len(data) > COMPACT_AT:
        _compact(path, state, warn)
    return state


def _say(warn: Callable[[str], None] | None, message: str) -> None:
    if warn is not None:
        warn(message)


def _compact(path: str, state: State, warn: Callable[[str], None] | None) -> None:
    """Rewrite the journal as the records its state folds to, under its own lock (an
    append waiting on the old file after the rename is lost: at worst a rule comes again)."""
    records: list[Any] = []
    if state.model:
        records.append({"type": MODEL_TYPE, "model": state.model})
    if state.delivered:
        records.append({"type": DELIVERED_TYPE, "ids": state.delivered})
    records += [{"type": DELIVERED_TYPE, "ids": ids, "agent": agent} for agent, ids in state.agents.items()]
    if state.section or state.section_digest:
        records.append({"type": SECTION_TYPE, "text": state.section} if state.section_digest is None
                       else {"type": SECTION_TYPE, "sha256": state.section_digest})
    records += state.entries[-_KEPT_ENTRIES:]
    body = b"".join(encode_line(r) for r in records) + b"".join(line + b"\n" for line in state.others[-_KEPT_OTHER:])
    temporary = f"{path}.compact-{os.getpid()}"
    try:
        fd = open_for_append(path, follow=False)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with open(temporary, "wb") as handle:
                handle.write(body)
            os.replace(temporary, path)
        finally:
            os.close(fd)
    except (OSError, ValueError) as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        _say(warn, f"cannot compact state file {path}: {exc}")


def _fold(state: State, raw: bytes) -> None:
    try:
        record = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return  # a damaged line costs only itself
    if not isinstance(record, dict):
        return
    kind = record.get("type")
    if kind == CLEAR_TYPE:  # the model stays: /clear starts no new Claude Code process
        state.entries, state.section, state.delivered, state.agents = [], "", [], {}
        state.section_digest = None
    elif kind == COMPACT_TYPE:
        state.section, state.delivered, state.section_digest = "", [], None
    elif kind == SECTION_TYPE and isinstance(record.get("text"), str):
        state.section, state.section_digest = record["text"], None
    elif kind == SECTION_TYPE and isinstance(record.get("sha256"), str):
        state.section, state.section_digest = "", record["sha256"]
    elif kind == DELIVERED_TYPE and isinstance(record.get("ids"), list):
        agent = record.get("agent")
        if isinstance(agent, str):
            delivered = state.agents.pop(agent, [])  # re-inserted: the newest agent is kept longest
            state.agents[agent] = delivered
            while len(state.agents) > MAX_AGENTS:
                del state.agents[next(iter(state.agents))]
        else:
            delivered = state.delivered
        delivered.extend(i for i in record["ids"] if isinstance(i, str) and i not in delivered)
    elif kind == STOPPED_TYPE and isinstance(record.get("ids"), list):
        state.delivered = [i for i in state.delivered if i not in record["ids"]]
    elif kind == MODEL_TYPE and isinstance(record.get("model"), str):
        state.model = record["model"] or None
    elif record.get("customType") == TOUCHED_CUSTOM_TYPE:
        state.entries.append(record)
    elif isinstance(kind, str):
        state.others.append(raw)
        if len(state.others) > 2 * _KEPT_OTHER:
            del state.others[:_KEPT_OTHER]


class Journal:
    """Appends records with ``session_file.append_line``: under an exclusive flock, one
    O_APPEND write per line, a torn last line (a hook that died mid-write) ended first —
    so concurrent hooks (parallel tool calls) never glue or interleave lines and a crash
    tears at most the last. Lines are UTF-8 (``encode_line``). Not fsync-ed: a power loss
    may lose the newest records, which at worst re-delivers a rule."""

    def __init__(self, path: str, warn: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.warn = warn

    def record_touched(self, paths: list[str]) -> None:
        """A touched entry for ``paths``, leaving out any over ``MAX_PERSISTED_PATH`` bytes:
        no real file has one, and however many a hostile transcript names the state file
        stays far below its 64 MiB refusal (one 16 MiB payload could add a 48 MB line)."""
        kept = []
        for path in paths:
            reason = path_refusal(path)
            if reason is None:
                kept.append(path)
            elif self.warn is not None:
                self.warn(f"touched path not recorded: {reason}")
        if kept:
            self.append(touched_entry(kept))

    def append(self, record: Mapping[str, Any]) -> None:
        pending = _DEFERRED.get()
        if pending is not None:  # the hook server: written once the answer reached the host
            pending.records.append((self, record))
            return
        self._write(record)

    def _write(self, record: Mapping[str, Any]) -> None:
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            fd = open_for_append(self.path, follow=False)
            try:
                append_line(fd, encode_line(record), sync=False)
            finally:
                os.close(fd)
        except (OSError, ValueError) as exc:  # ValueError: a NaN, which no record of ours holds
            # State that cannot be written must not cost the decision (issue 26): said
            # on stderr, and the hook answers as it would have.
            if self.warn is None:
                raise HookError(f"cannot write state file {self.path}: {exc}") from None
            self.warn(f"cannot write state file {self.path}: {exc}")


def lock_path(path: str) -> str:
    """``<id>.lock`` next to ``<id>.jsonl``: a file of its own, because the journal's flock
    is taken (and released) by every append inside the locked step."""
    return path[: -len(".jsonl")] + ".lock"


def lock_wait_ms(env: Mapping[str, str]) -> int:
    """``PI_RULES_LOCK_WAIT_MS``: milliseconds, ``0`` for a single try; anything else
    (empty, negative, not a number, absurdly long) is the default."""
    raw = (env.get(LOCK_WAIT_ENV) or "").strip()
    return int(raw) if raw.isdigit() and len(raw) <= 9 else LOCK_WAIT_MS


@contextlib.contextmanager
def session_lock(path: str, env: Mapping[str, str]) -> Iterator[bool]:
    """Hold the lock of the session whose journal is ``path`` for the block; yields ``False``
    when other hooks kept it past ``lock_wait_ms``. ``HookError`` when it cannot be opened.
    Under ``deferred_state`` the lock is held until the deferred records are settled."""
    lock = lock_path(path)
    pending = _DEFERRED.get()
    with contextlib.ExitStack() as stack:
        holder = pending.locks if pending is not None else stack
        try:
            os.makedirs(os.path.dirname(lock), mode=0o700, exist_ok=True)
            locked = holder.enter_context(exclusive(lock, lock_wait_ms(env) / 1000))
        except OSError as exc:
            raise HookError(f"cannot lock state file {lock}: {exc}") from None
        yield locked


class _Pending:
    """Journal records of one call held back, and the session locks held meanwhile."""

    def __init__(self) -> None:
        self.records: list[tuple[Journal, Mapping[str, Any]]] = []
        self.locks = contextlib.ExitStack()

    def commit(self) -> None:
        records, self.records = self.records, []
        for journal, record in records:
            journal._write(record)


_DEFERRED: ContextVar[_Pending | None] = ContextVar("pi_rules_deferred_state", default=None)


@contextlib.contextmanager
def deferred_state() -> Iterator[_Pending]:
    """Hold back every journal append of the block (and keep its session locks) until
    ``commit``; what is not committed when the block ends is dropped (issue 26: the hook
    server records deliveries only once its answer reached the host)."""
    pending = _Pending()
    token = _DEFERRED.set(pending)
    try:
        with pending.locks:
            yield pending
    finally:
        _DEFERRED.reset(token)
