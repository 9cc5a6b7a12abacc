"""Durability (issue 7, item 4): the session file of ``pi-rules serve --session`` and the
Claude Code adapter's state journal survive a crash at any moment, and processes sharing
one file never corrupt it.

Crashes are real: a forked process appends through the production code and is killed
with SIGKILL at a random moment; the survivors' view is then checked. Every byte offset
of a torn file is covered by tests/test_serve.py; here the kills are random and many, and
a crash while holding the lock mid-line is staged exactly (a process writes half a line
under the lock and exits). Not timed: iteration counts are fixed, delays are short.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import fcntl
import pytest

from rules_core import Engine
from rules_hosts import Session
from rules_hosts.claude_code.hook import _Journal, _load
from rules_hosts.protocols.serve import Server
from rules_hosts.session.runtime import touched_entry, touched_from_entries
from rules_hosts.session.file import SessionFile, encode_entry, read_entries
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

KILLS = 200
MAX_APPENDS = 40  # per child: most are killed before, and the file stays small
SEED = 7  # fixed: a failure replays


def _entry(tag: str, number: int, big: bool) -> dict[str, Any]:
    # A large entry spans many pages, so a SIGKILL can land inside its write() as well.
    paths = [f"{tag}/n{number}.ts"] + ([f"{tag}/pad{number}/" + "p" * 16_000] if big else [])
    return touched_entry(paths)


def _fork(work: Callable[[int], None]) -> tuple[int, int]:
    """A child running ``work(ack_fd)``; returns (pid, read end of its ack pipe)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            work(write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    return pid, read_end


def _acks(read_end: int) -> list[int]:
    with os.fdopen(read_end, "rb") as pipe:
        return [int(n) for n in pipe.read().split()]


def _appender(path: str, tag: str, big_every: int) -> Callable[[int], None]:
    def work(ack: int) -> None:
        store = SessionFile(path)
        for number in range(MAX_APPENDS):
            store.append(_entry(tag, number, big_every > 0 and number % big_every == 0))
            os.write(ack, f"{number}\n".encode())  # acknowledged: the append returned

    return work


def _crash_mid_line(path: str) -> None:
    """What a writer that dies inside its write leaves: half a line, written under the lock."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, encode_entry(touched_entry(["torn/never.ts"]))[:37])
    os.close(fd)  # the lock goes with it, as it does when the kernel reaps a killed process


def _paths(entries: list[dict[str, Any]]) -> list[str]:
    return [p for e in entries for p in e["data"]["paths"] if "/pad" not in p]


# -- kill -9 during appends ------------------------------------------------------------


def test_sigkill_at_random_moments_loses_no_acknowledged_entry(tmp_path):
    path = str(tmp_path / "s.jsonl")
    rng = random.Random(SEED)
    expected: list[str] = []  # every path whose append was acknowledged, in order
    torn_tails = 0
    for kill in range(KILLS):
        if kill % 10 == 5:
            _crash_mid_line(path)
        pid, ack = _fork(_appender(path, f"k{kill}", big_every=rng.choice([0, 2, 5])))
        time.sleep(rng.uniform(0, 0.015))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        acked = _acks(ack)
        data = Path(path).read_bytes() if os.path.exists(path) else b""
        torn_tails += bool(data) and not data.endswith(b"\n")
        found = _paths(read_entries(path))
        mine = [p for p in found if p.startswith(f"k{kill}/")]
        # Every acknowledged entry is there; at most the one in flight beyond it.
        assert mine[: len(acked)] == [f"k{kill}/n{n}.ts" for n in acked], kill
        assert len(mine) - len(acked) in (0, 1), kill
        expected += mine
    entries = read_entries(path)
    assert _paths(entries) == expected  # nothing lost, nothing duplicated, order kept
    assert "torn/never.ts" not in _paths(entries)  # a torn line is never an entry
    assert all(set(e) == {"type", "customType", "data"} for e in entries)
    # The next start rebuilds exactly the completed batches (as far as a session keeps them).
    server = Server(Session(Engine(fresh_manager(), env={}), str(tmp_path), trusted=True), SessionFile(path))
    assert server.session.touched == touched_from_entries(entries, str(tmp_path))
    assert [p for p in server.session.touched if "/pad" not in p][-1] == expected[-1]
    print(f"{KILLS} kills, {torn_tails} left a torn tail")  # shown with -s; recorded in docs


def test_sigkill_of_a_real_serve_process_keeps_every_persisted_path(tmp_path):
    project = make_rules(tmp_path / "p", {".pi/rules/a.md": rule_text(globs=["src/**"])})
    session = tmp_path / "s.jsonl"
    env = {**os.environ, "HOME": str(tmp_path), "PI_RULES_IMPORT": "none"}
    command = [sys.executable, "-m", "rules_hosts", "--cwd", str(project), "serve", "--session", str(session)]
    rng = random.Random(SEED)
    persisted: list[str] = []
    for kill in range(6):
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        answered: list[dict[str, Any]] = []

        def drive() -> None:
            for number in range(10**6):
                request = {"id": number, "method": "tool_start",
                           "params": {"tool": "read", "args": {"path": f"src/k{kill}/{number}.ts"}}}
                try:
                    server.stdin.write(json.dumps(request).encode() + b"\n")
                    server.stdin.flush()
                    line = server.stdout.readline()
                except (BrokenPipeError, ValueError):
                    return
                if not line:
                    return
                answered.append(json.loads(line))

        driver = threading.Thread(target=drive)
        driver.start()
        deadline = time.monotonic() + 5
        while len(answered) < 1 and time.monotonic() < deadline:  # serving: imports done
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.05))
        server.kill()
        server.wait()
        driver.join()
        # A request the driver wrote just before the kill can still sit in stdin's buffer;
        # close() flushes it into the dead pipe. The file is closed either way.
        with contextlib.suppress(BrokenPipeError):
            server.stdin.close()
        server.stdout.close()
        assert answered and all(a["result"]["persisted"] for a in answered)
        persisted.append([p for a in answered for p in a["result"]["paths"]])
    resumed = subprocess.run(command, input=b'{"id":1,"method":"status"}\n', capture_output=True, env=env)
    touched = json.loads(resumed.stdout)["result"]["touched"]
    for kill, answered_paths in enumerate(persisted):
        mine = [p for p in touched if p.startswith(f"src/k{kill}/")]
        assert mine[: len(answered_paths)] == answered_paths  # every answered path, in order
        assert len(mine) - len(answered_paths) in (0, 1)  # and at most the one in flight


def test_sigkill_during_claude_code_journal_appends(tmp_path):
    path = str(tmp_path / "state" / "sid.jsonl")
    rng = random.Random(SEED)
    expected: list[str] = []

    def journal(tag: str) -> Callable[[int], None]:
        def work(ack: int) -> None:
            writer = _Journal(path)
            for number in range(MAX_APPENDS):
                writer.append(_entry(tag, number, big=number % 8 == 0))
                writer.append({"type": "pi-rules/delivered", "ids": [f"{tag}-{number % 4}"]})
                os.write(ack, f"{number}\n".encode())

        return work

    for kill in range(KILLS // 2):
        if kill % 10 == 5:
            _crash_mid_line(path)
        pid, ack = _fork(journal(f"j{kill}"))
        time.sleep(rng.uniform(0, 0.01))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        acked = _acks(ack)
        state = _load(path)
        mine = [p for p in _paths(state.entries) if p.startswith(f"j{kill}/")]
        assert mine[: len(acked)] == [f"j{kill}/n{n}.ts" for n in acked], kill
        assert {f"j{kill}-{n % 4}" for n in acked} <= set(state.delivered), kill
        expected += mine
    assert _paths(_load(path).entries) == expected


# -- processes sharing one file ----------------------------------------------------------


@pytest.mark.parametrize("writer", ["serve", "claude-code"])
def test_concurrent_appenders_and_crashing_writers_never_corrupt_a_record(tmp_path, writer):
    path = str(tmp_path / "shared.jsonl")
    per_process, processes = 150, 3

    def append(tag: str) -> Callable[[int], None]:
        def work(ack: int) -> None:
            store = SessionFile(path) if writer == "serve" else _Journal(path)
            for number in range(per_process):
                store.append(_entry(tag, number, big=number % 10 == 0))
            os.write(ack, b"0\n")

        return work

    def crasher(ack: int) -> None:
        for _ in range(40):
            _crash_mid_line(path)
            time.sleep(0.001)

    children = [_fork(append(f"w{i}")) for i in range(processes)] + [_fork(crasher)]
    readers_saw: list[list[str]] = []
    running = {pid for pid, _ in children}
    while running:
        readers_saw.append(_paths(read_entries(path)))  # a concurrent reader, mid-stream
        time.sleep(0.005)
        running = {pid for pid in running if os.waitpid(pid, os.WNOHANG) == (0, 0)}
    for _, ack in children:
        _acks(ack)
    found = _paths(read_entries(path))
    for i in range(processes):
        assert [p for p in found if p.startswith(f"w{i}/")] == [f"w{i}/n{n}.ts" for n in range(per_process)]
    assert len(found) == processes * per_process
    for seen in readers_saw:  # a reader never sees a half-written or glued record
        assert set(seen) <= set(found)
    # Each crash's fragment is on a line with no entry (two crashes in a row share one).
    fragment = encode_entry(touched_entry(["torn/never.ts"]))[:37]
    lines = Path(path).read_bytes().split(b"\n")
    broken = [line for line in lines if line and not line.endswith(b"}")]
    assert sum(line.count(fragment) for line in broken) == 40
    assert all(line == fragment * line.count(fragment) for line in broken)
    if writer == "claude-code":
        assert _paths(_load(path).entries) == found
