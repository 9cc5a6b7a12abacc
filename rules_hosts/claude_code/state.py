"""The Claude Code adapter's per-session state: the journal each hook process folds and
appends to, and the session lock that makes load–decide–append one step.

Claude Code runs the hooks of parallel tool calls at the same time (issue 14, attack 8):
the journal's own flock covers one append, so two hooks loading the same state would
both decide to deliver the same rule. A hook that decides deliveries therefore holds
``<id>.lock`` from loading the journal to appending what it delivered. See docs/hosts.md.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from rules_hosts.session.runtime import TOUCHED_CUSTOM_TYPE, touched_entry
from rules_hosts.session.file import append_line, encode_line, exclusive, open_for_append, path_refusal

MAX_STATE = 64 * 1024 * 1024  # a state file this big was not written by us: start afresh
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

    def delivered_to(self, agent_id: str | None) -> list[str]:
        """The ids delivered in the transcript of ``agent_id`` (``None``: the main one)."""
        return self.delivered if agent_id is None else self.agents.get(agent_id, [])


def load(path: str) -> State:
    try:
        # Non-blocking: a FIFO in the state file's place must not hang the hook.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return State()
    except OSError as exc:
        raise HookError(f"cannot read state file {path}: {exc}") from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_STATE + 1)
    if len(data) > MAX_STATE:
        raise HookError(f"state file {path} is larger than {MAX_STATE} bytes; remove it")
    state = State()
    lines = data.split(b"\n")
    for raw in lines[:-1]:  # the last piece is "" or a torn line: ignored either way
        _fold(state, raw)
    return state


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
    elif kind == COMPACT_TYPE:
        state.section, state.delivered = "", []
    elif kind == SECTION_TYPE and isinstance(record.get("text"), str):
        state.section = record["text"]
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
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            fd = open_for_append(self.path, follow=False)
            try:
                append_line(fd, encode_line(record), sync=False)
            finally:
                os.close(fd)
        except (OSError, ValueError) as exc:  # ValueError: a NaN, which no record of ours holds
            raise HookError(f"cannot write state file {self.path}: {exc}") from None


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
    when other hooks kept it past ``lock_wait_ms``. ``HookError`` when it cannot be opened."""
    lock = lock_path(path)
    with contextlib.ExitStack() as stack:
        try:
            os.makedirs(os.path.dirname(lock), mode=0o700, exist_ok=True)
            locked = stack.enter_context(exclusive(lock, lock_wait_ms(env) / 1000))
        except OSError as exc:
            raise HookError(f"cannot lock state file {lock}: {exc}") from None
        yield locked
