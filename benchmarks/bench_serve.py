"""Load benchmark for ``pi-rules serve``: a host firing events at a fixed rate, and the
server's memory over time. Run by hand, never in CI:

    python benchmarks/bench_serve.py [--mix agent|capture] [--rate 10000] [--seconds 60] [--session]

A writer thread sends ``--rate`` requests per second in 10 ms batches (pipelined: it does
not wait for answers, as a busy host would not); a reader thread consumes the answers; the
main thread samples the server's resident memory (``VmRSS`` from ``/proc``) every second.
Most events name a path never seen before, so every per-session structure is pushed past
its cap within seconds — what stays flat after that is bounded.

``--mix agent`` (the default), per 100 requests, like an agent's tool loop: 45
``tool_start`` (read, edit, write, grep; two in three name a new path), 45 ``tool_result``
(5 of them ``read``, which re-evaluates for mid-run attachment; 3 ``edit``, which also
invalidates the exists scan), one ``before_agent_start`` with a prompt, and
``status``/``command``/``read_rule``/``evaluate``/``compact`` for the rest. ``--mix
capture`` is the protocol and capture path alone: 50 ``tool_start`` (two in three paths
new), 45 ``tool_result`` of tools that attach nothing (grep, bash, ls), 5 ``status``. When
the server cannot keep up, the pipe fills and the writer blocks: the achieved rate is
reported next to the target.

Exit status 1 when the peak RSS passes ``--ceiling-mb`` or memory still grows in the last
third of the run by more than ``--max-growth-mb``; 0 otherwise. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text  # noqa: E402

BATCH_SECONDS = 0.01


def build_project(root: Path, rules: int) -> None:
    """``rules`` native rules over src/lib/docs plus an always rule and an on-demand one."""
    files: dict[str, str] = {".pi/rules/always.md": rule_text("Always.", alwaysApply=True, enforcement="enforce")}
    areas = ["src", "lib", "docs", "tests"]
    for number in range(rules):
        area = areas[number % len(areas)]
        keys = {"globs": [f"{area}/m{number % 7}/**/*.ts", f"!{area}/**/skip.ts"], "match": "touched"}
        if number % 5 == 0:
            keys["load"] = "on-demand"
        files[f".pi/rules/r{number:03d}.md"] = rule_text(f"Rule {number}. " * 20, **keys)
    for number in range(200):
        files[f"{areas[number % 4]}/m{number % 7}/f{number}.ts"] = "x"
    make_rules(root, files)


class Events:
    """The request stream: deterministic, most paths new."""

    def __init__(self, mix: str, seed: int = 7) -> None:
        self.mix = mix
        self.rng = random.Random(seed)
        self.number = 0
        self.pool = [f"src/m{i % 7}/f{i}.ts" for i in range(200)]

    def path(self) -> str:
        if self.rng.random() < 2 / 3:
            area = ("src", "lib", "docs", "tests")[self.number % 4]
            return f"{area}/m{self.number % 7}/n{self.number}.ts"
        return self.rng.choice(self.pool)

    def next(self) -> bytes:
        self.number += 1
        slot = self.number % 100
        if self.mix == "capture":
            return self._capture(slot)
        if slot < 45:
            tool = ("read", "edit", "write", "grep")[slot % 4]
            method, params = "tool_start", {"tool": tool, "args": {"path": self.path()}}
        elif slot < 90:
            tool = "read" if slot < 50 else "edit" if slot < 53 else ("grep", "bash", "ls")[slot % 3]
            content = [{"type": "text", "text": "output " * 10}]
            method, params = "tool_result", {"tool": tool, "content": content, "is_error": tool == "bash"}
        elif slot == 90:
            method, params = "before_agent_start", {"prompt": "fix the typescript tests", "model": "claude-sonnet-4",
                                                    "tools": ["read", "edit"], "branch": None}
        elif slot < 95:
            method, params = "status", {}
        elif slot < 97:
            method, params = "command", {"text": "/rules" if slot == 95 else "/rules why src/m1/a.ts"}
        elif slot == 97:
            method, params = "read_rule", {"args": {"path": "r000.md"}}
        elif slot == 98:
            method, params = "evaluate", {}
        else:
            method, params = "compact", {}
        return self._line(method, params)

    def _capture(self, slot: int) -> bytes:
        if slot < 50:
            tool = ("read", "edit", "write", "grep")[slot % 4]
            return self._line("tool_start", {"tool": tool, "args": {"path": self.path()}})
        if slot < 95:
            content = [{"type": "text", "text": "output " * 10}]
            return self._line("tool_result", {"tool": ("grep", "bash", "ls")[slot % 3], "content": content})
        return self._line("status", {})

    def _line(self, method: str, params: dict[str, object]) -> bytes:
        return json.dumps({"id": self.number, "method": method, "params": params}).encode() + b"\n"


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


def run(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="pi-rules-bench-serve-"))
    project, home = work / "project", work / "home"
    build_project(project, args.rules)
    home.mkdir()
    command = [sys.executable, "-m", "rules_hosts", "--cwd", str(project), "serve"]
    if args.session:
        command += ["--session", str(work / "session.jsonl")]
    env = {**os.environ, "HOME": str(home)}
    # cwd is the scratch directory: ``-m`` must import the installed (or PYTHONPATH) package,
    # not whatever checkout the benchmark is started from.
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=work)
    sent = answered = errors = 0
    stop = threading.Event()

    def writer() -> None:
        nonlocal sent
        events = Events(args.mix)
        per_batch = max(1, round(args.rate * BATCH_SECONDS))
        next_batch = time.monotonic()
        while not stop.is_set():
            batch = b"".join(events.next() for _ in range(per_batch))
            try:
                server.stdin.write(batch)
                server.stdin.flush()
            except (BrokenPipeError, ValueError):
                return
            sent += per_batch
            next_batch += BATCH_SECONDS
            delay = next_batch - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_batch = time.monotonic()  # behind: do not try to catch up in a burst

    def reader() -> None:
        nonlocal answered, errors
        for line in server.stdout:
            answered += 1
            if b'"error"' in line[:40] or b',"error":' in line:
                errors += 1

    threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=reader, daemon=True)]
    for thread in threads:
        thread.start()
    samples: list[tuple[float, int, int, int]] = []  # (seconds, rss KiB, sent, answered)
    start = time.monotonic()
    try:
        while (elapsed := time.monotonic() - start) < args.seconds:
            time.sleep(1.0)
            rss, _ = rss_kib(server.pid)
            samples.append((elapsed, rss, sent, answered))
            if args.verbose:
                print(f"{elapsed:5.1f}s rss {rss / 1024:6.1f} MiB sent {sent:8d} answered {answered:8d}", flush=True)
        _, peak = rss_kib(server.pid)
    finally:
        stop.set()
        server.stdin.close()
        server.wait(timeout=120)
        threads[1].join(timeout=120)
    samples[-1] = (*samples[-1][:2], sent, samples[-1][3])
    return report(args, samples, peak, answered, errors)


def report(args: argparse.Namespace, samples: list[tuple[float, int, int, int]], peak: int,
           answered: int, errors: int) -> int:
    seconds = samples[-1][0]
    third = max(1, len(samples) // 3)
    warm = samples[min(len(samples) - 1, 9)]  # after 10 s every cap is reached
    late = samples[-third][1], samples[-1][1]
    growth_mb = (late[1] - late[0]) / 1024
    rate = samples[-1][3] / seconds
    print(f"mix {args.mix}, target {args.rate}/s for {args.seconds:g} s, {args.rules + 1} rules, "
          f"session file: {args.session}")
    print(f"sent {samples[-1][2]}, answered {answered} ({rate:.0f}/s while sampling), error answers {errors}")
    print("rss MiB: " + " ".join(f"{s[1] / 1024:.0f}" for s in samples[:: max(1, len(samples) // 12)]))
    print(f"rss at 10 s {warm[1] / 1024:.1f} MiB, at end {samples[-1][1] / 1024:.1f} MiB, peak {peak / 1024:.1f} MiB")
    print(f"growth over the last third: {growth_mb:+.1f} MiB")
    failed = peak / 1024 > args.ceiling_mb or growth_mb > args.max_growth_mb
    print("FAIL" if failed else "ok", f"(ceiling {args.ceiling_mb} MiB, max late growth {args.max_growth_mb} MiB)")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mix", choices=["agent", "capture"], default="agent")
    parser.add_argument("--rate", type=int, default=10_000, help="requests per second to send")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rules", type=int, default=40)
    parser.add_argument("--session", action="store_true", help="serve --session FILE (fsync per new path)")
    parser.add_argument("--ceiling-mb", type=float, default=150)
    parser.add_argument("--max-growth-mb", type=float, default=5)
    parser.add_argument("--verbose", action="store_true", help="print every sample")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
