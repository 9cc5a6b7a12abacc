"""Stream watcher benchmark (issue 6): 1 MB streamed in 1-character deltas, 50 rules.

    python benchmarks/bench_stream.py [--size 1000000] [--rules 50] [--repeat 3]

Every number is a ratio against baselines measured in the same run:

- ``search``: one ``re.search`` of each rule's pattern over the whole text (what a
  watcher that waited for the end of the stream would cost);
- ``naive``: what a watcher that re-searches its whole buffer at every delta costs (the
  O(n²) the peers shipped), measured on a short prefix and extrapolated quadratically.

It also checks the claim that matters: the cost per character stays flat as the stream
grows (O(n) overall), by timing half the stream and the whole stream.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of  # noqa: E402
from rules_core import Engine, Facts  # noqa: E402
from rules_core.stream.watcher import StreamWatcher, globs_gate  # noqa: E402
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text  # noqa: E402

# Realistic stream-rule conditions: literals, alternations, classes, flags, unbounded tails.
SHAPES = [
    r"console\.log\(", r"(?i)pre.existing", r"\bTODO\b", r"eval\(", r"password\s*=\s*['\"]",
    r"(?i)as an ai", r"except\s*:", r"\bany\b", r"@ts-ignore", r"rm -rf /", r"sleep\(\d+\)",
    r"(?i)lorem ipsum", r"print\(", r"import \*", r"catch\s*\(\s*\)\s*\{\s*\}", r"debugger;",
]
WORDS = "the quick brown fox jumps over lazy dogs while code streams out of the model".split()


def make_rules_tree(root: Path, count: int) -> None:
    files = {}
    for n in range(count):
        # Suffix each pattern so none fires: the watcher must look at every delta to the end.
        pattern = SHAPES[n % len(SHAPES)] + f"ZQ{n}"
        files[f".pi/rules/r{n:02d}.md"] = rule_text(condition=pattern)
    make_rules(root, files)


def make_text(size: int) -> str:
    rng = random.Random(3)
    parts, total = [], 0
    while total < size:
        word = rng.choice(WORDS) + (" " if rng.random() > 0.1 else "\n")
        parts.append(word)
        total += len(word)
    return "".join(parts)[:size]


def stream(watcher: StreamWatcher, text: str) -> int:
    fired = 0
    for char in text:
        fired += len(watcher.feed("text", char).fired)
    return fired + len(watcher.end("text").fired)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--rules", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pi-rules-stream-"))
    make_rules_tree(root, args.rules)
    engine = Engine(fresh_manager(), env={})
    specs = engine.stream_specs(Facts(cwd=str(root)))
    assert len(specs) == args.rules, [e.message for e in engine.discover(str(root)).errors]
    text = make_text(args.size)
    regexes = [p.regex for s in specs for p in s.patterns]  # the watcher's (``regex`` module)
    stdlib = [re.compile(r.pattern) for r in regexes]  # the baseline the issue names: ``re``

    def new_watcher() -> StreamWatcher:
        return StreamWatcher(specs, gate=globs_gate(str(root)))

    search = best_of(args.repeat, lambda: [r.search(text) for r in stdlib])
    search_regex = best_of(args.repeat, lambda: [r.search(text) for r in regexes])
    full = best_of(args.repeat, lambda: stream(new_watcher(), text))
    half = best_of(args.repeat, lambda: stream(new_watcher(), text[: args.size // 2]))
    prefix = 20_000

    def naive() -> None:
        buffer = ""
        for char in text[:prefix]:
            buffer += char
            for compiled in stdlib:
                compiled.search(buffer)

    naive_prefix = best_of(1, naive)
    naive_full = naive_prefix * (args.size / prefix) ** 2
    print(f"text: {args.size:,} chars in 1-char deltas, {args.rules} rules")
    print(f"one re.search per rule over the whole text: {search * 1000:.1f} ms "
          f"(with the regex module the watcher uses: {search_regex * 1000:.1f} ms)")
    print(f"watcher, whole stream: {full:.2f} s = {full / search:.0f}x the searches "
          f"({full / args.size * 1e6:.2f} us per delta)")
    print(f"cost per char, whole vs half stream: {(full / args.size) / (half / (args.size // 2)):.2f} (1.0 = linear)")
    print(f"naive re-search per delta (extrapolated from {prefix:,} chars): {naive_full:.0f} s = "
          f"{naive_full / full:.0f}x the watcher")
    start = time.perf_counter()
    one = new_watcher()
    one.feed("text", text)
    one.end("text")
    print(f"watcher, the whole text as one delta: {(time.perf_counter() - start) * 1000:.1f} ms")
    re.purge()


if __name__ == "__main__":
    main()
