"""Warm and cold evaluation of this checkout against an earlier commit, in the same run.

    python benchmarks/bench_monorepo.py --keep /tmp/monobench     # builds the tree once
    python benchmarks/bench_compare.py --against 428e1fd --tree /tmp/monobench

The earlier commit is checked out with ``git worktree add`` into a temporary folder; each
measurement alternates between the two checkouts (``PYTHONPATH``), so a busy machine
slows both alike and the ratio stays meaningful (docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_WARM = """
import statistics, sys, time
from rules_core import Engine, Facts
cwd, home = sys.argv[1], sys.argv[2]
facts = Facts(cwd=cwd, touched=("src/a.ts",), prompt="typescript")
engine = Engine(home=home, env={"HOME": home})
engine.evaluate(facts)
runs = []
for _ in range(15):
    start = time.perf_counter()
    for _ in range(10):
        engine.evaluate(facts)
    runs.append((time.perf_counter() - start) / 10 * 1000)
print(statistics.median(runs))
"""


def _warm(checkout: Path, cwd: Path, home: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", _WARM, str(cwd), str(home)], env=env, capture_output=True,
                          text=True, check=True)
    return float(done.stdout.strip())


def _cold(checkout: Path, cwd: Path, home: Path, repeat: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "HOME": str(home)}
    command = [sys.executable, "-m", "rules_hosts", "--cwd", str(cwd), "report", "--touched", "src/a.ts"]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=False)
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", required=True, help="the earlier commit")
    parser.add_argument("--tree", default="/tmp/monobench", help="the folder bench_monorepo.py --keep built")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    tree = Path(args.tree)
    cwd, home = tree / "mono" / "ws", tree / "home"
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), args.against], check=True)
        try:
            results: dict[str, list[float]] = {"warm old": [], "warm new": [], "cold old": [], "cold new": []}
            for _ in range(args.rounds):
                for label, checkout in (("old", old), ("new", ROOT)):
                    results[f"warm {label}"].append(_warm(checkout, cwd, home))
                    results[f"cold {label}"].append(_cold(checkout, cwd, home, 5))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)
    for kind in ("warm", "cold"):
        before, after = statistics.median(results[f"{kind} old"]), statistics.median(results[f"{kind} new"])
        print(f"{kind:5} {args.against}: {before:8.2f} ms   this checkout: {after:8.2f} ms   ratio {after / before:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
