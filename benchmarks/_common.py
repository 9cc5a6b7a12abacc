"""Timing helpers shared by the benchmarks (ratios against same-run baselines)."""

from __future__ import annotations

import os
import time
from typing import Callable


def best_of(repeat: int, action: Callable[[], object]) -> float:
    """The fastest of ``repeat`` runs, in seconds: the least noisy estimate on a busy box."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def scandir_walk(root: str) -> int:
    """The baseline: a bare os.scandir walk that counts files, skipping .git/node_modules."""
    count, pending = 0, [root]
    while pending:
        with os.scandir(pending.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in (".git", "node_modules"):
                        pending.append(entry.path)
                else:
                    count += 1
    return count
