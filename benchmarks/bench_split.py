"""Where a warm fresh ``report`` spends its CPU time, in process (issue 30). By hand only:

    python benchmarks/bench_split.py DIR TOUCHED [--runs 5]

Each run is a new process (``PYTHONPATH`` picks the checkout) that times, with
``time.process_time``: importing the CLI app, making the engine (plugin manager,
settings), discovery, compiling every discovered rule's globs, then the evaluation.
Run it twice first so the persistent cache is warm.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

_SPLIT = """
import os, sys, time
clock = time.process_time
t0 = clock()
import rules_hosts.cli.app
from rules_hosts.cli.config import configured_engine
from rules_core.model import Facts
from rules_core.globs.compiled import compile_rule
t1 = clock()
engine = configured_engine(".", True, (), ["report"], os.environ)
t2 = clock()
found = engine.discover(os.getcwd())
t3 = clock()
for rule in found.rules:
    compile_rule(rule.globs, None, None)
t4 = clock()
engine.evaluate(Facts(cwd=os.getcwd(), touched=(sys.argv[1],)))
t5 = clock()
ms = lambda a, b: round(1000 * (b - a))
print(f"imports {ms(t0, t1)}  engine {ms(t1, t2)}  discovery {ms(t2, t3)}  globs {ms(t3, t4)}  "
      f"evaluation {ms(t4, t5)}  cache {engine.discovery.persistent.stats}")
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cwd")
    parser.add_argument("touched")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, "-c", _SPLIT, args.touched], cwd=args.cwd, capture_output=True,
                              text=True, check=True)
        print(done.stdout.strip())


if __name__ == "__main__":
    main()
