"""What a walk of the project looked at, so its answer can be kept across processes.

The persistent cache (``rules_core.discovery.persistent``) keeps an answer only with the stat
signature of every directory listed and every ignore file read to reach it: a later
process re-stats those paths and reuses the answer only if none changed. The walkers
(the exists scanner, the shared tree walk, the ignore-file reader) report here; outside
an ``observing()`` block each report is one context-variable look-up and nothing else.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

# (mtime_ns, ctime_ns, inode, size). ctime moves on every change, a chmod included, and
# no tool can set it back, so an mtime put back by `touch -d` does not hide a change.
Signature = tuple[int, int, int, int]


class Observation:
    """Paths one walk depended on, with their signatures taken *before* they were read."""

    __slots__ = ("paths", "unstable", "claims")

    def __init__(self) -> None:
        self.paths: dict[str, Signature | None] = {}
        # Walkers that report here: an answer from one that does not (a third-party
        # scanner) is never kept, since nothing says what it read.
        self.claims: set[str] = set()
        # Set when the answer depends on something no stat of these paths shows (a
        # symlink's target elsewhere): such an answer is never kept.
        self.unstable = False


_CURRENT: ContextVar[Observation | None] = ContextVar("pi_rules_observation", default=None)


def signature(path: str) -> Signature | None:
    """The path's own signature (a symlink is not followed); ``None`` when it is absent."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_size)


def depends_on(path: str) -> None:
    """A walker is about to list the directory (or read the file) ``path``."""
    seen = _CURRENT.get()
    if seen is not None and path not in seen.paths:
        seen.paths[path] = signature(path)


def claim(walker: str) -> None:
    """``walker`` answers in this block and reports every path it reads."""
    seen = _CURRENT.get()
    if seen is not None:
        seen.claims.add(walker)


def unstable() -> None:
    """The walk's answer depends on more than its paths' signatures can show."""
    seen = _CURRENT.get()
    if seen is not None:
        seen.unstable = True


@contextmanager
def observing() -> Iterator[Observation]:
    """Collect what the walks inside the block depend on."""
    seen = Observation()
    token = _CURRENT.set(seen)
    try:
        yield seen
    finally:
        _CURRENT.reset(token)
