"""Folding journals into per-rule counts (docs/stats.md). Reads only the user's own state:
the Claude Code state folder and the ``serve --session`` files named on the command line;
counts only the statistics records (``journal``), so no prompt or touched path is even
parsed into the result. A journal written before those records existed ("old format",
``old.py``) is counted from what it does hold: its deliveries."""

from __future__ import annotations

import glob
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from .journal import DELIVERY_TYPE, READ_TYPE, STREAM_TYPE, TURN_TYPE
from .old import OldSession, fold_old

MAX_JOURNAL = 64 * 1024 * 1024  # what the hook itself refuses to fold
MAX_JOURNALS = 10_000
_KINDS = (TURN_TYPE, DELIVERY_TYPE, READ_TYPE, STREAM_TYPE)
COUNTS = ("active", "listed", "delivered", "section", "attachment", "pointers", "tokens", "reads", "fires", "denies")


@dataclass
class RuleCounts:
    id: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))


@dataclass
class SessionCounts:
    name: str  # the journal's file name (Claude Code's session id)
    host: str
    turns: int = 0
    tokens: int = 0
    old: bool = False  # an old-format journal: only its deliveries were counted


@dataclass
class Stats:
    since_days: int
    sessions: list[SessionCounts] = field(default_factory=list)
    rules: dict[str, RuleCounts] = field(default_factory=dict)
    old: list[OldSession] = field(default_factory=list)  # old-format journals, counted or not

    def rule(self, rule_id: str) -> RuleCounts:
        return self.rules.setdefault(rule_id, RuleCounts(rule_id))

    @property
    def turns(self) -> int:
        return sum(s.turns for s in self.sessions)


def claude_code_journals(env: Mapping[str, str]) -> list[str]:
    """Every Claude Code state file: ``$XDG_STATE_HOME/pi-rules/claude-code/*.jsonl``
    (``~/.local/state`` when unset), as the hook writes them."""
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return sorted(glob.glob(os.path.join(glob.escape(base), "pi-rules", "claude-code", "*.jsonl")))[:MAX_JOURNALS]


def collect(journals: Sequence[tuple[str, str]], project: str | None, since_days: int,
            now: float | None = None, named: Sequence[str] = ()) -> Stats:
    """Counts over ``(host, path)`` journals, from records of the last ``since_days`` days
    in sessions of ``project`` (a session belongs to the folder its turns ran in; ``None``:
    every project). ``named``: journals the user named (``--journal``), which an old
    format without a project folder of its own cannot be checked against."""
    stats = Stats(since_days)
    cutoff = (time.time() if now is None else now) - since_days * 86400
    for host, path in journals:
        data = _read(path)
        found = list(_parse(data, _KINDS))
        if not found:
            _fold_old(stats, host, path, data, project if path not in named else None, cutoff)
            continue
        records = [r for r in found if isinstance(r.get("at"), (int, float)) and r["at"] >= cutoff]
        if not records or not _belongs(records, project):
            continue
        session = SessionCounts(os.path.basename(path).rsplit(".", 1)[0], host)
        for record in records:
            _fold(stats, session, record)
        stats.sessions.append(session)
    return stats


def _belongs(records: list[dict[str, Any]], project: str | None) -> bool:
    if project is None:
        return True
    root = os.path.abspath(project)
    for record in records:
        cwd = record.get("cwd")
        if record.get("type") == TURN_TYPE and isinstance(cwd, str):
            return cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep)
    return False


def _fold(stats: Stats, session: SessionCounts, record: dict[str, Any]) -> None:
    kind = record.get("type")
    if kind == TURN_TYPE:
        session.turns += 1
        for rule_id in _ids(record.get("active")):
            stats.rule(rule_id).counts["active"] += 1
        for rule_id in _ids(record.get("listed")):
            stats.rule(rule_id).counts["listed"] += 1
    elif kind == DELIVERY_TYPE:
        pointers = set(_ids(record.get("pointers")))
        tokens = record.get("tokens") if isinstance(record.get("tokens"), dict) else {}
        via = "attachment" if record.get("via") == "attachment" else "section"
        for rule_id in _ids(record.get("ids")):
            counts = stats.rule(rule_id).counts
            counts["delivered"] += 1
            if rule_id in pointers:
                counts["pointers"] += 1
                continue
            counts[via] += 1
            cost = tokens.get(rule_id)
            if isinstance(cost, int) and not isinstance(cost, bool) and 0 <= cost < 1 << 31:
                counts["tokens"] += cost
                session.tokens += cost
    elif kind == READ_TYPE:
        for rule_id in _ids(record.get("ids")):
            stats.rule(rule_id).counts["reads"] += 1
    elif kind == STREAM_TYPE:
        for rule_id in _ids(record.get("fired")):
            stats.rule(rule_id).counts["fires"] += 1
        for rule_id in _ids(record.get("denied")):
            stats.rule(rule_id).counts["denies"] += 1


def _ids(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and len(v) <= 1000] if isinstance(value, list) else []


def _fold_old(stats: Stats, host: str, path: str, data: bytes, project: str | None, cutoff: float) -> None:
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return
    session = SessionCounts(os.path.basename(path).rsplit(".", 1)[0], host, old=True)
    old = fold_old(session.name, host, data, mtime, project, cutoff, lambda kinds: _parse(data, kinds))
    if old is None:
        return
    stats.old.append(old)
    if old.counted:
        for rule_id, times in old.delivered.items():
            stats.rule(rule_id).counts["delivered"] += times
        stats.sessions.append(session)


def _read(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read(MAX_JOURNAL)
    except OSError:
        return b""


def _parse(data: bytes, kinds: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The records of ``kinds`` (a ``type``, or a custom entry's ``customType``) in one
    journal; other lines are never parsed (a touched entry holds paths, a section record
    rule text) and damaged ones are skipped."""
    keys = [f'"{field}":"{kind}"'.encode() for kind in kinds for field in ("type", "customType")]
    for line in data.split(b"\n"):
        if not any(key in line for key in keys):
            continue
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(record, dict):
            yield record
