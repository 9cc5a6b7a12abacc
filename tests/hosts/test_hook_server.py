"""The resident hook server: real hook processes, a real server, real sockets.

Every answer through the server must be the bytes the in-process hook gives; anything
wrong with the server or its socket costs nothing but the speed of one call."""

from __future__ import annotations

import os
import sys
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import session_guard
from rules_core.rule_tests.pytest_plugin import rule_text

from claude_driver import ClaudeDriver

RULES = {
    ".pi/rules/always.md": rule_text("Be kind to reviewers.", alwaysApply=True),
    ".pi/rules/ts.md": rule_text("Use strict TypeScript.", description="TypeScript", globs=["src/**/*.ts"]),
}


_SESSIONS: list[Served] = []


@pytest.fixture(autouse=True)
def stop_servers() -> Iterator[None]:
    """No server and no runtime folder outlives its test (test_hook_server_attacks.py
    imports this fixture too: a module without it once left a server running for 600 s)."""
    yield
    while _SESSIONS:
        _SESSIONS.pop().stop()


class Served(ClaudeDriver):
    """A session whose hook calls go through a server in its own runtime folder."""

    def __init__(self, tmp_path: Path, server: bool = True, **env: str) -> None:
        tmp_path.mkdir(exist_ok=True)
        super().__init__(tmp_path)
        # Short: a socket's path must fit in 108 bytes, and pytest's folders are long.
        self.run_dir = Path(tempfile.mkdtemp(prefix="pr-", dir="/tmp"))
        _SESSIONS.append(self)
        self.env.update(XDG_RUNTIME_DIR=str(self.run_dir), PI_RULES_HOOK_SERVER="on" if server else "off", **env)
        self.outputs: list[tuple[bytes, bytes]] = []

    @property
    def folder(self) -> Path:
        return self.run_dir / "pi-rules"

    def raw(self, data: str | bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
        done = super().raw(data, *args)
        self.outputs.append((self.portable(done.stdout.decode()).encode(), done.stderr))
        return done

    def pids(self) -> list[int]:
        found = []
        for pid_file in self.folder.glob("*.pid"):
            try:  # a server that is exiting removes its file between the glob and the read
                found.append(int(pid_file.read_text()))
            except (OSError, ValueError):
                pass
        return found

    def wait_server(self, other_than: int | None = None) -> int:
        """The running server's pid, once it listens (polled; no timing is asserted)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pids = [p for p in self.pids() if p != other_than]
            if pids:
                return pids[0]
            time.sleep(0.02)
        raise AssertionError(f"no server started; log: {self.log()!r}")

    def served(self) -> int:
        """How many requests the servers of this session answered (their log)."""
        return self.log().count("request ")

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text() if path.exists() else ""

    def stop(self) -> None:
        """Every server of this runtime folder, found by its command line rather than its
        pid file: the last hook call of a test may have started one that has not written
        its pid file yet (it would then bind a socket in the removed folder and serve
        nothing for 600 s)."""
        session_guard.stop_hook_servers(session_guard.hook_servers(under=str(self.run_dir)))
        shutil.rmtree(self.run_dir, ignore_errors=True)


@pytest.fixture
def served(tmp_path: Path) -> Served:
    session = Served(tmp_path / "on")
    session.write(RULES)
    return session


def _sequence(claude: ClaudeDriver, after_first: Any = None) -> None:
    target = claude.path("src/new.ts")
    claude.start()
    if after_first is not None:
        after_first()
    claude.prompt("hello")
    claude.write({"src/new.ts": "let x = 1;\n"})
    claude.tool("Write", {"file_path": target, "content": "x"})
    claude.tool("Edit", {"file_path": target, "old_string": "1", "new_string": "2"})
    claude.send("SessionStart", source="compact")
    claude.prompt("again")


def test_server_answers_byte_identical_to_in_process(tmp_path: Path, served: Served) -> None:
    alone = Served(tmp_path / "off", server=False)
    alone.write(RULES)
    _sequence(alone)
    _sequence(served, after_first=served.wait_server)
    assert served.outputs == alone.outputs
    assert any(out for out, _ in served.outputs)  # the sequence does deliver rules
    assert served.served() == len(served.outputs) - 1  # all but the first, which started it
    assert alone.pids() == [] and not alone.folder.exists()


def test_changed_rule_file_is_seen_by_the_server(served: Served) -> None:
    served.start()
    served.wait_server()
    served.write({".pi/rules/new.md": rule_text("Brand new rule.", alwaysApply=True)})
    served.send("SessionStart", source="compact")
    assert "Brand new rule." in (served.outputs[-1][0].decode())
    assert served.served() == 1


def _socket_path(served: Served) -> Path:
    served.start()
    pid = served.wait_server()
    path = next(p for p in served.folder.glob("hook-*") if p.suffix == "")
    os.kill(pid, signal.SIGKILL)
    for leftover in (path, Path(f"{path}.pid")):
        leftover.unlink()
    return path


@pytest.mark.parametrize("kind", ["plain-file", "symlink", "garbage"])
def test_foreign_socket_falls_back_in_process(tmp_path: Path, served: Served, kind: str) -> None:
    path = _socket_path(served)
    stop = threading.Event()
    if kind == "plain-file":
        path.write_text("not a socket")
    elif kind == "symlink":
        elsewhere = tmp_path / "elsewhere.sock"
        _garbage_server(elsewhere, stop)
        path.symlink_to(elsewhere)
    else:
        _garbage_server(path, stop)
    alone = Served(tmp_path / "off", server=False)
    alone.write(RULES)
    alone.start()
    served.outputs.clear()
    alone.outputs.clear()
    served.send("SessionStart", source="compact")
    alone.send("SessionStart", source="compact")
    stop.set()
    assert served.outputs == alone.outputs and served.outputs[0][0]
    assert served.served() == 0


def _garbage_server(path: Path, stop: threading.Event) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    listener.settimeout(0.1)

    def answer() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"\x00{not json")
        listener.close()

    threading.Thread(target=answer, daemon=True).start()


def test_killed_server_falls_back_and_restarts(tmp_path: Path, served: Served) -> None:
    alone = Served(tmp_path / "off", server=False)
    alone.write(RULES)
    served.start()
    alone.start()
    first = served.wait_server()
    os.kill(first, signal.SIGKILL)
    served.prompt("hello")  # the dead server's socket is still there: refused, in process
    alone.prompt("hello")
    second = served.wait_server(other_than=first)
    # The new server answers once it is ready; a client waits 3 s for that and otherwise
    # answers in process (hook_client._READY_TIMEOUT), which on a loaded machine happens to
    # the first calls (1 of 15 runs here). So: calls until one is served, counted, not timed.
    for _ in range(20):
        served.prompt("hello")
        alone.prompt("hello")
        if served.served():
            break
    assert second != first and served.served() >= 1
    served.write({"src/a.ts": ""})
    alone.write({"src/a.ts": ""})
    served.tool("Read", {"file_path": served.path("src/a.ts")})
    alone.tool("Read", {"file_path": alone.path("src/a.ts")})
    assert served.outputs == alone.outputs


def test_idle_server_exits(tmp_path: Path) -> None:
    """Read from the server's log, not by catching its pid file: with a short idle time the
    server may come and go between two polls on a loaded machine."""
    session = Served(tmp_path, PI_RULES_HOOK_SERVER_IDLE="0.2")
    session.write(RULES)
    session.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "exiting" not in session.log():
        time.sleep(0.05)
    log = session.log()
    started = re.search(r"listening as pid (\d+)", log)
    assert started and "idle for 0.2 s: exiting" in log, log
    pid = int(started.group(1))
    while time.monotonic() < deadline and (session.pids() or _alive(pid)):
        time.sleep(0.05)
    assert session.pids() == [] and not _alive(pid)
    assert not any(p.suffix == "" for p in session.folder.glob("hook-*"))  # its socket is gone


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper is not)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_off_never_starts_a_server(tmp_path: Path) -> None:
    session = Served(tmp_path, server=False)
    session.write(RULES)
    session.start()
    session.prompt("hi")
    assert not session.folder.exists()


def test_a_tree_changed_between_calls_is_seen_as_by_a_fresh_process(tmp_path: Path, served: Served) -> None:
    """The server keeps engines, never their view of the tree: a new nested rules folder
    and a new file an `exists` rule waits for, made between two served calls, are seen."""
    exists = rule_text("Go is here.", description="Go code", globs=["**/*.go"], match="exists")
    alone = Served(tmp_path / "off", server=False)
    for session in (served, alone):
        session.write({**RULES, ".pi/rules/go.md": exists})
        session.start()
    served.wait_server()
    for session in (served, alone):
        session.write({"pkg/deep/.pi/rules/pkg.md": rule_text("Package rule.", alwaysApply=True),
                       "pkg/deep/main.go": "package main\n"})
        session.send("SessionStart", source="compact")
    assert served.outputs == alone.outputs
    assert "Go is here." in served.outputs[-1][0].decode()
    assert "Package rule." in served.outputs[-1][0].decode()
    assert served.served() == 1


def test_each_call_runs_in_its_own_environment(tmp_path: Path, served: Served) -> None:
    """One server answers calls with different environments, each as its own process would."""
    alone = Served(tmp_path / "off", server=False)
    second = {".pi/rules/second.md": rule_text("A second pinned rule.", alwaysApply=True)}
    for session in (served, alone):
        session.write({**RULES, **second})
    served.start()
    served.wait_server()
    alone.start()
    for session in (served, alone):
        session.env["PI_RULES_MAX_TOKENS"] = "1"  # only the first pinned rule is kept
        session.send("SessionStart", source="compact")
        del session.env["PI_RULES_MAX_TOKENS"]
        session.send("SessionStart", source="compact")
    assert served.outputs == alone.outputs
    assert served.outputs[1] != served.outputs[2]  # the environment did change the answer
    assert served.served() == 2


def test_a_busy_server_never_runs_a_call_the_client_answered_itself(tmp_path: Path, served: Served) -> None:
    """A call the server has not taken within its wait is answered in process, and the
    server, once free, does not run it too (the session would count its rules twice)."""
    alone = Served(tmp_path / "off", server=False)
    alone.write(RULES)
    served.start()
    served.wait_server()
    alone.start()
    path = next(p for p in served.folder.glob("hook-*") if p.suffix == "")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stall:
        stall.connect(str(path))
        stall.sendall(b"\x00")  # half a length: the server waits on this connection
        served.prompt("hello")
        alone.prompt("hello")
    served.tool("Read", {"file_path": served.path("README.md")})  # the server is free again
    alone.tool("Read", {"file_path": alone.path("README.md")})
    assert served.outputs == alone.outputs
    assert served.served() == 2  # the two hooks of the Read; the prompt never ran there


@pytest.mark.parametrize("module", ["rules_hosts.hook_server.server", "rules_hosts.claude_code.hook"])
def test_changed_code_stops_the_server_and_the_call_runs_in_process(served: Served, module: str) -> None:
    """A module the server loaded at start, or for its first call, changed on disk."""
    import importlib

    served.start()
    first = served.wait_server()
    served.prompt("warm")  # the first served call: it loads what calls need
    assert served.served() == 1
    source = Path(importlib.import_module(module).__file__ or "")
    before = source.stat()
    try:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        served.prompt("hello")  # refused by the old server, answered in process
        second = served.wait_server(other_than=first)
    finally:
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert second != first and not _alive(first)
    assert served.served() == 1  # the changed code's call was answered in process


def test_a_large_server_log_is_started_afresh(served: Served) -> None:
    served.folder.mkdir(mode=0o700)
    (served.folder / "server.log").write_bytes(b"x" * (2 * 1024 * 1024))
    served.start()  # answered in process; starts a server, whose log begins anew
    served.wait_server()
    served.prompt("hello")
    assert re.fullmatch(r"listening as pid \d+\nrequest 1\n", served.log())


def test_the_server_log_is_emptied_every_log_lines_answered_calls(tmp_path: Path, monkeypatch) -> None:
    """A server busy for days keeps server.log small: it empties it after every
    ``_LOG_LINES`` (50,000) answered calls. Counted with a smaller period, in process."""
    import rules_hosts.hook_server.server as hook_server

    assert hook_server._LOG_LINES == 50_000  # what docs/hook-server.md states
    monkeypatch.setattr(hook_server, "_LOG_LINES", 3)
    log = open(tmp_path / "server.log", "a")  # as the client opens it for the server
    monkeypatch.setattr(sys, "__stdout__", log)
    server = hook_server.Server(idle=1.0)
    header = {"argv": ["--version"], "cwd": str(tmp_path), "env": dict(os.environ), "umask": 0o022,
              "encoding": "utf-8", "errors": "strict"}
    sizes = []
    for _ in range(7):
        server._run(header, b"")
        sizes.append(len((tmp_path / "server.log").read_text().splitlines()))
    log.close()
    assert sizes == [1, 2, 0, 1, 2, 0, 1]  # emptied after calls 3 and 6
