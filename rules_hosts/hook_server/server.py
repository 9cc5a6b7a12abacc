"""The resident server behind ``pi-rules hook claude-code`` (``hook_client`` is its client).

``python -m rules_hosts.hook_server.server SOCKET`` serves one call at a time on ``SOCKET``. It
runs the CLI itself (``cli_app.main``) with the caller's arguments, working directory,
environment, umask and stdin, so an answer is the one the caller would have given in
process; what it keeps between calls is the engines (one per project folder, trust,
host, plugin blocks and environment) with their plugin managers and parsed rules. Each
call starts by dropping what the engine knows of the tree: the persistent cache's stat
checks then decide, as they do for a fresh process, what is still valid.

Exactly one server holds ``SOCKET.lock``; it exits after ``PI_RULES_HOOK_SERVER_IDLE``
seconds without a call (default 600) and as soon as any module it has loaded changes on
disk or a distribution's entry points change (that call is refused, so the client answers
it in process with the new code). Only this user's processes are answered (``SO_PEERCRED``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import signal
import socket
import sys
from typing import Any, Iterator, Mapping, Sequence

from rules_core.engine.core import Engine
from rules_core.plugins.entry_points import installed_signature
from rules_core.settings.apply import plugin_blocks
from rules_core.settings.resolved import Resolved

from rules_hosts.cli import app as cli_app
from rules_hosts.cli.config import configured_engine, host_named
from rules_hosts.claude_code.state import deferred_state
from rules_hosts.cli.hook_client import ACK, GO, MAX_HEADER, MAX_REQUEST, READY, hook_words, peer_uid, receive_exactly

IDLE_ENV = "PI_RULES_HOOK_SERVER_IDLE"
IDLE_SECONDS = 600.0
_MAX_ENGINES = 8
_LOG_LINES = 50_000
_READ_TIMEOUT = 10.0  # a client that stalls mid-request is dropped; no call is run for it
_ACK_TIMEOUT = 30.0  # past the client's own wait for the answer: it gave up, nothing is committed


def _module_stat(name: str) -> list[int | None]:
    """What a loaded module's file is now: mtime, ctime and size (``None``s: no file)."""
    path = getattr(sys.modules.get(name), "__file__", None)
    try:
        info = os.stat(path) if path else None
    except OSError:
        info = None
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size] if info else [None, None, None]


class Server:
    def __init__(self, idle: float) -> None:
        self.idle = idle
        self.requests = 0
        self.engines: dict[tuple[Any, ...], tuple[Engine, tuple[str, ...]]] = {}
        self.modules: tuple[str, ...] = ()
        self.fingerprint = ""
        # Every module loaded so far, with its file's stat when first seen (right after the call that
        # imported it, before its answer is sent): all are checked before each call (issue 26).
        self.watched: dict[str, list[int | None]] = {}

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(self.idle)
        self._remember_code()
        while True:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                _log(f"idle for {self.idle:g} s: exiting")
                return
            with conn:
                if not self._answer(conn):
                    return  # the code changed: the next call starts a fresh server

    def _remember_code(self) -> None:
        self.modules = tuple(sorted(n for n, m in sys.modules.items() if getattr(m, "__file__", None)))
        if not self.fingerprint:  # taken once: a change later must never become the baseline
            self.fingerprint = installed_signature()
        for name in self.modules:
            self.watched.setdefault(name, _module_stat(name))

    def _code_changed(self) -> bool:
        """Whether any module this process has loaded changed on disk since it was first
        seen, or the installed entry points did."""
        if installed_signature() != self.fingerprint:
            return True
        return any(_module_stat(name) != seen for name, seen in self.watched.items())

    def _answer(self, conn: socket.socket) -> bool:
        """Serve one connection; ``False`` when this server must exit."""
        conn.settimeout(_READ_TIMEOUT)
        try:
            uid = peer_uid(conn)
            if uid is not None and uid != os.getuid():
                return True
            request = _read(conn)
            if request is None:
                return True
            if self._code_changed():
                return False  # no READY: the client answers in process, with the new code
            conn.sendall(READY)
            if conn.recv(1) != GO:
                return True  # the client gave up waiting and answers in process itself
            with deferred_state() as pending:
                try:
                    answer = self._run(*request)
                except Exception as exc:  # noqa: BLE001 - the caller gets a line, as in process
                    answer = {"stdout": "", "stderr": f"pi-rules hook: the hook server could not run the call "
                                                      f"({type(exc).__name__}); nothing was added this time\n"}
                # What this call imported is watched as it is now, before the answer goes
                # out: a file changed once the caller has its answer is then a change (taken
                # after the acknowledgement, it could become the baseline: issue 32).
                self._remember_code()
                # Deliveries are committed only once the answer reached the host: the
                # client acknowledges after writing it; a client that gave up never does.
                conn.settimeout(_ACK_TIMEOUT)
                conn.sendall(json.dumps(answer).encode("utf-8", "surrogateescape"))
                conn.shutdown(socket.SHUT_WR)
                if conn.recv(1) == ACK:
                    pending.commit()
        except (OSError, ValueError):
            pass
        finally:
            self._remember_code()  # a call that failed part-way may have imported some too
        return True

    def _run(self, header: dict[str, Any], data: bytes) -> dict[str, Any]:
        stdout, stderr = io.StringIO(), io.StringIO()
        stdin = io.TextIOWrapper(io.BytesIO(data), encoding=header["encoding"], errors=header["errors"])
        with _as_caller(header, stdin, stdout, stderr):
            cli_app.main(header["argv"], make_engine=self._engine)
        self.requests += 1
        print(f"request {self.requests}", file=sys.__stdout__, flush=True)  # server.log: which calls it answered
        if self.requests % _LOG_LINES == 0 and sys.__stdout__ is not None:
            os.ftruncate(sys.__stdout__.fileno(), 0)  # a server busy for days keeps its log small
        return {"stdout": stdout.getvalue(), "stderr": stderr.getvalue()}

    def _engine(
        self, cwd: str, trusted: bool, blocked: Sequence[str], argv: Sequence[str], env: Mapping[str, str]
    ) -> tuple[Engine, Resolved]:
        """``configured_engine``'s engine, kept while the settings' plugin blocks hold, and
        the call's settings (read once: the same value decides whether the engine is kept)."""
        project, host = os.path.abspath(cwd), host_named(argv)
        environment = hashlib.sha256(json.dumps(sorted(env.items())).encode("utf-8", "surrogateescape")).hexdigest()
        key = (project, trusted, tuple(blocked), host, environment)
        kept = self.engines.pop(key, None)
        resolved = None
        if kept is not None:
            kept[0].options.clear()  # the settings are the files' and environment's, not a last call's options
            _as_fresh(kept[0])  # before reading the settings: their project bound is the git root
            resolved = kept[0].resolve(project, trusted, host)
        if kept is None or resolved is None or plugin_blocks(resolved.settings, host) != kept[1]:
            fresh, resolved = configured_engine(cwd, trusted, blocked, argv, env)
            kept = (fresh, plugin_blocks(resolved.settings, host))
        while len(self.engines) >= _MAX_ENGINES:
            self.engines.pop(next(iter(self.engines)))  # the least recently used
        self.engines[key] = kept
        engine = kept[0]
        engine.options["plugins.block"] = tuple(blocked)
        return engine, resolved


def _as_fresh(engine: Engine) -> None:
    """As a fresh process: the tree is checked anew, no earlier session's slow roots, and
    the git root asked again (a folder may have become its own repository)."""
    engine.invalidate_scans()
    engine.forget_overran()
    engine.discovery.forget_git_roots()
    getattr(engine.settings_cache._bound, "forget", lambda: None)()


def _read(conn: socket.socket) -> tuple[dict[str, Any], bytes] | None:
    """A well-formed request of a hook call, else ``None``."""
    length = receive_exactly(conn, 8)
    if length is None or int.from_bytes(length, "big") > MAX_HEADER:
        return None
    line = receive_exactly(conn, int.from_bytes(length, "big"))
    if line is None:
        return None
    header = json.loads(line)
    if not isinstance(header, dict):
        return None
    argv, cwd, env, size = header.get("argv"), header.get("cwd"), header.get("env"), header.get("size")
    if not (isinstance(argv, list) and all(isinstance(w, str) for w in argv) and hook_words(argv) is not None
            and isinstance(cwd, str) and os.path.isabs(cwd) and isinstance(env, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
            and isinstance(header.get("umask"), int) and 0 <= header["umask"] <= 0o777
            and isinstance(size, int) and 0 <= size <= MAX_REQUEST):
        return None
    for name in ("encoding", "errors"):
        value = header.get(name)
        header[name] = value if isinstance(value, str) and value else ("utf-8" if name == "encoding" else "strict")
    try:
        "".encode(header["encoding"], header["errors"])
    except LookupError:
        return None
    data = receive_exactly(conn, size)
    return None if data is None else (header, data)


@contextlib.contextmanager
def _as_caller(header: dict[str, Any], stdin: io.TextIOBase, stdout: io.StringIO, stderr: io.StringIO) -> Iterator[None]:
    """The process state the call would have had in its own process, restored after."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_mask = os.umask(header["umask"])
    try:
        os.environ.clear()
        os.environ.update(header["env"])  # git and every plugin see the caller's environment
        os.chdir(header["cwd"])
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.umask(saved_mask)
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


def _log(line: str) -> None:
    """One line in server.log (the server's stdout), where a client or a test can see its life."""
    if sys.__stdout__ is not None:
        print(line, file=sys.__stdout__, flush=True)


def _idle_seconds(raw: str | None) -> float:
    try:
        value = float(raw or IDLE_SECONDS)
    except ValueError:
        return IDLE_SECONDS
    return value if 0 < value <= 86_400 else IDLE_SECONDS


def run(path: str) -> int:
    directory = os.path.dirname(path)
    info = os.lstat(directory)
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        return 1
    lock = open(path + ".lock", "a")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server serves this socket
    try:
        os.unlink(path)  # a dead server's socket, or whatever else sits there
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    bound = os.lstat(path).st_ino
    listener.listen(16)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a plain kill still removes the socket
    with open(path + ".pid", "w") as pid:  # written once it listens: "ready" for whoever waits
        pid.write(f"{os.getpid()}\n")
    _log(f"listening as pid {os.getpid()}")
    try:
        Server(_idle_seconds(os.environ.get(IDLE_ENV))).serve(listener)
    finally:
        listener.close()
        try:
            if os.lstat(path).st_ino == bound:  # never a newer server's socket
                os.unlink(path)
            os.unlink(path + ".pid")
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
