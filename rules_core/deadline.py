"""Every host call has a deadline (issue 14): a total time budget for one evaluation,
discovery, explanation or ``read_rule``, checked at the points where a hostile repository
can make work pile up (each rule file parsed, each exists-scan root and the directories
it walks, each rule judged).

The budget lives in a context variable, so nested calls share the outer one (the tighter
wins) and concurrent sessions do not see each other's. Work past the deadline is cut and
reported once per call as an error naming the setting; what overran is remembered by the
engine for the rest of its life (``Engine`` keeps the roots whose scans overran), so a
session never pays for it twice.
"""

from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from typing import Iterator, Mapping

from .model import RuleError

DEADLINE_ENV = "PI_RULES_DEADLINE_MS"
# Claude Code gives a hook command 60 s by default and a per-process host pays its start
# too: 10 s leaves room for both events of a tool call and for the user's own rules.
DEFAULT_MS = 10_000

_DEADLINE: ContextVar[float | None] = ContextVar("pi_rules_deadline", default=None)


class DeadlineExceeded(Exception):
    """Raised at a checkpoint once the call's budget is spent; callers catch it."""


def budget_ms(env: Mapping[str, str]) -> int | None:
    """``PI_RULES_DEADLINE_MS``: a positive integer of milliseconds, ``0``/``off`` for none;
    anything else is the default (a typo must not switch the protection off)."""
    raw = (env.get(DEADLINE_ENV) or "").strip().lower()
    if raw in ("0", "off", "none"):
        return None
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MS


@contextlib.contextmanager
def deadline(milliseconds: int | None) -> Iterator[None]:
    """Run the block under a budget of ``milliseconds`` (None: no budget of its own); an
    enclosing, tighter deadline stays in force."""
    outer = _DEADLINE.get()
    mine = None if milliseconds is None else time.monotonic() + milliseconds / 1000
    token = _DEADLINE.set(mine if outer is None or (mine is not None and mine < outer) else outer)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def expired() -> bool:
    """Whether the current budget is spent (never, outside any deadline)."""
    limit = _DEADLINE.get()
    return limit is not None and time.monotonic() >= limit


def now() -> float:
    """The clock every budget reads (one place, so a test can simulate it)."""
    return time.monotonic()


def remaining() -> float | None:
    """Seconds left of the current budget (never below 0), or None outside any deadline."""
    limit = _DEADLINE.get()
    return None if limit is None else max(0.0, limit - time.monotonic())


def check() -> None:
    """A checkpoint: raise ``DeadlineExceeded`` once the budget is spent."""
    if expired():
        raise DeadlineExceeded()


def deadline_error(path: str, what: str) -> RuleError:
    """The one line a cut reports: what was left undone, and the setting that decides."""
    return RuleError("source-unreadable", path, (
        f"{what}: the call's time budget ran out ({DEADLINE_ENV}, default {DEFAULT_MS} ms); a repository "
        "that makes pi-rules this slow is worth a look with pi-rules check"
    ), "engine")
