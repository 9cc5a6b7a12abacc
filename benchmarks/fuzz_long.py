"""The long fuzzing run of docs/reliability.md ("Fuzzing"): not part of CI.

Two parts, both bounded by wall-clock time:

1. **Hypothesis, scaled.** The suites of tests/test_fuzz.py, tests/test_output_safety.py
   and tests/test_containment_random.py run with ``PI_RULES_FUZZ_SCALE`` (default 40: 40
   times the CI example counts, fresh random seeds) and 4096-character adversarial paths;
   Hypothesis prints how many inputs each test tried.
2. **Glob backtracking search.** Random hostile patterns (the grammar of test_fuzz's
   ``GLOB_ATOMS``/``GROUP_BODIES``, extglobs nested) are compiled; every accepted one is
   matched against the adversarial subjects of ``adversarial_subjects`` at the longest
   path a file can have (4096 characters, 255 per name). Prints how many were tried,
   refused and accepted, and the slowest single matches.

    python benchmarks/fuzz_long.py                  # ~5 minutes on two cores
    python benchmarks/fuzz_long.py --scale 10 --search-seconds 60

Exit status 1 when a test fails or a match takes longer than ``--limit`` seconds.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from rules_core.globs.matching import MAX_SUBJECT, GlobError, compile_flat, compile_glob  # noqa: E402
from test_fuzz import GLOB_ATOMS, GROUP_BODIES, adversarial_subjects  # noqa: E402

SUITES = ["tests/test_fuzz.py", "tests/test_output_safety.py", "tests/test_containment_random.py"]


def run_hypothesis(scale: int) -> int:
    env = {**os.environ, "PI_RULES_FUZZ_SCALE": str(scale), "PI_RULES_FUZZ_SUBJECT": str(MAX_SUBJECT),
           "PI_RULES_FUZZ_MATCH_SECONDS": "2.0"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
               "--hypothesis-seed", str(random.SystemRandom().randrange(1 << 32)), *SUITES]
    print("$ PI_RULES_FUZZ_SCALE=%d %s" % (scale, " ".join(command[1:])), flush=True)
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


def _pattern(rng: random.Random) -> str:
    def group() -> str:
        return f"{rng.choice('@?*+!')}({'|'.join(rng.choice(GROUP_BODIES) for _ in range(rng.randint(1, 3)))})"

    def segment() -> str:
        return "".join(rng.choice(GLOB_ATOMS) if rng.random() < 0.6 else group() for _ in range(rng.randint(1, 5)))

    return "/".join(segment() for _ in range(rng.randint(1, 6)))


def search(seconds: float, seed: int, limit: float) -> int:
    rng = random.Random(seed)
    tried = refused = matches = 0
    worst = 0.0
    slowest: list[tuple[float, str, bool, str]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pattern, flat = _pattern(rng), rng.random() < 0.3
        tried += 1
        try:
            glob = compile_flat(pattern) if flat else compile_glob(pattern)
        except GlobError:
            refused += 1
            continue
        for subject in adversarial_subjects(pattern, MAX_SUBJECT):
            start = time.perf_counter()
            glob.match(subject)
            took = time.perf_counter() - start
            matches += 1
            worst = max(worst, took)
            if took > 0.05:
                slowest.append((took, pattern, flat, subject[:24]))
    slowest.sort(reverse=True)
    print(f"\nglob search (seed {seed}, {seconds:.0f} s): {tried} patterns, {refused} refused, "
          f"{tried - refused} accepted, {matches} adversarial matches of up to {MAX_SUBJECT} characters")
    for took, pattern, flat, subject in slowest[:10]:
        print(f"  {took:7.3f} s  {'flat ' if flat else ''}{pattern!r} vs {subject!r}…")
    print(f"  slowest single match: {worst * 1000:.1f} ms (limit {limit} s)")
    return 1 if worst > limit else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=40, help="multiplier of the CI example counts (default 40)")
    parser.add_argument("--search-seconds", type=float, default=120.0, help="glob search time (default 120)")
    parser.add_argument("--seed", type=int, default=int(time.time()), help="glob search seed (default: now)")
    parser.add_argument("--limit", type=float, default=2.0, help="slowest acceptable single match, seconds")
    parser.add_argument("--skip-hypothesis", action="store_true")
    args = parser.parse_args()
    status = 0 if args.skip_hypothesis else run_hypothesis(args.scale)
    return max(status, search(args.search_seconds, args.seed, args.limit))


if __name__ == "__main__":
    sys.exit(main())
