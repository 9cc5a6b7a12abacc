"""The fast path of ``pi-rules hook claude-code``: hand the event to a resident server.

Claude Code starts one process per hook event, twice per tool call; importing pi-rules and
making its plugin manager costs several times a bare interpreter start. So the command,
when it is exactly ``hook claude-code`` (with ``--untrusted``, ``--trust-store`` and one
``--cwd DIR`` at most), imports only what this module does and asks a per-user server
on a Unix socket (``hook_server``) to run the command as this process would: same
arguments, working directory, environment, umask and stdin. Anything wrong before the
server has taken the call — no server, a stale or foreign socket, a busy server, a bad
answer — starts a server for the next call and answers this one in process: nothing is
lost and the hook still exits 0. ``PI_RULES_HOOK_SERVER=off`` turns the server off. See
docs/hook-server.md.

The exchange, on one connection: the client sends the header's length (8 bytes), the
header (JSON: arguments, folder, environment, umask, payload size) and the payload;
the server answers ``READY`` once it is free to run it; the client answers ``GO``, and
only from then on does the server run it, and the client wait for the answer without
falling back. So a call is never handled twice (the session's state would then record
rules as delivered that the model never saw).
"""

from __future__ import annotations

import json
import os
import socket
import sys

MAX_REQUEST = 16 * 1024 * 1024  # hook.MAX_PAYLOAD: a bigger payload is answered in process
MAX_ANSWER = 64 * 1024 * 1024
MAX_HEADER = 1024 * 1024  # the environment travels in it
READY, GO, ACK = b"R", b"G", b"A"
_CONNECT_TIMEOUT = 2.0
_READY_TIMEOUT = 3.0  # a server still busy with other calls: answer this one in process
# Once the server runs the call it is bounded by the session lock wait (10 s) and the
# evaluation deadline; this stays below the 30 s hook timeout --install writes.
_ANSWER_TIMEOUT = 25.0
_MAX_FOLDER = 64  # a socket's whole path must fit sockaddr_un's 108 bytes
_MAX_LOG = 1024 * 1024
_LONE_OPTIONS = ("--untrusted", "--trust-store")


def hook_words(words: list[str]) -> list[str] | None:
    """``words`` when they are exactly ``hook claude-code`` plus ``--untrusted``,
    ``--trust-store`` and one ``--cwd DIR`` at most, in any order; else ``None`` (the
    full CLI parses them)."""
    rest, cwd_seen, i = [], False, 0
    while i < len(words):
        word = words[i]
        if word == "--cwd" and i + 1 < len(words) and not cwd_seen:
            cwd_seen, i = True, i + 2
            continue
        if word.startswith("--cwd=") and not cwd_seen:
            cwd_seen = True
        elif word not in _LONE_OPTIONS:
            rest.append(word)
        i += 1
    return words if rest == ["hook", "claude-code"] else None


def runtime_dir(env: dict[str, str] | os._Environ[str], create: bool) -> str | None:
    """The per-user socket folder: ``$XDG_RUNTIME_DIR/pi-rules`` else ``/tmp/pi-rules-<uid>``;
    ``None`` unless it is a real folder of this user that no one else can enter."""
    base = env.get("XDG_RUNTIME_DIR", "")
    path = os.path.join(base, "pi-rules")
    if not (os.path.isabs(base) and os.path.isdir(base)) or len(path) > _MAX_FOLDER:
        path = f"/tmp/pi-rules-{os.getuid()}"
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    is_dir = (info.st_mode & 0o170000) == 0o040000  # lstat: a symlink is not a folder
    return path if is_dir and info.st_uid == os.getuid() and not info.st_mode & 0o077 else None


def socket_name() -> str:
    """One server per interpreter, import path and code location. The environment is
    not in the name: it travels with each call and the server runs the call in it."""
    here = os.path.dirname(os.path.abspath(__file__))
    return f"hook-{_hash(json.dumps([sys.executable, sys.path, here]))}"


def _hash(text: str) -> str:
    # FNV-1a, twice: no hashlib import on the fast path; the folder is private anyway.
    a, b = 0xCBF29CE484222325, 0x84222325CBF29CE4
    for byte in text.encode("utf-8", "surrogatepass"):
        a = ((a ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        b = ((b ^ byte) * 0x100000001B3 + 1) & 0xFFFFFFFFFFFFFFFF
    return f"{a:016x}{b:016x}"


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux ``SO_PEERCRED``), else ``None``."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = conn.getsockopt(socket.SOL_SOCKET, option, 12)  # struct ucred {pid, uid, gid}
    return int.from_bytes(creds[4:8], sys.byteorder)


def receive(conn: socket.socket, limit: int) -> bytes | None:
    """Everything until the peer shuts its side; ``None`` beyond ``limit`` bytes."""
    chunks, size = [], 0
    while True:
        chunk = conn.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


def receive_exactly(conn: socket.socket, size: int) -> bytes | None:
    """``size`` bytes, or ``None`` if the peer stops first."""
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def main() -> int | None:
    """Answer the hook through the server: 0, or ``None`` when the caller must run it in
    process (after starting a server). Replaces ``sys.stdin`` with what it read."""
    words = hook_words(sys.argv[1:])
    if words is None or os.environ.get("PI_RULES_HOOK_SERVER", "").strip().lower() in ("off", "0", "no", "false"):
        return None
    # Up to 4 bytes a character: the in-process answer must see what hook.MAX_PAYLOAD allows.
    data = sys.stdin.buffer.read(4 * MAX_REQUEST + 4)
    sys.stdin = _text_stdin(data)
    directory = runtime_dir(os.environ, create=True)
    if directory is None or len(data) > MAX_REQUEST:
        return None
    path = os.path.join(directory, socket_name())
    asked = _ask(path, words, data)
    if asked is None:
        _start_server(directory, path)
        return None
    answer, conn = asked
    # GO was sent: the server ran the call. Whatever happens now, it is never run again in
    # process (a second run would journal a /clear twice, deliver a section twice).
    global went  # noqa: PLW0603 - read by cli.main when this function raises after GO
    went = True
    try:
        sys.stdout.write(answer["stdout"])
        sys.stderr.write(answer["stderr"])
        sys.stdout.flush()
        sys.stderr.flush()
        if conn is not None:
            conn.sendall(ACK)  # the answer reached the host: the server may record it
    except (OSError, ValueError):
        pass
    finally:
        if conn is not None:
            conn.close()
    return 0


went = False  # whether GO was sent in this process: from then on the call is the server's


def _text_stdin(data: bytes) -> object:
    import io  # only here: the in-process answer needs stdin back as text

    encoding, errors = sys.stdin.encoding or "utf-8", sys.stdin.errors or "strict"
    return io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors)


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _ask(path: str, words: list[str], data: bytes) -> tuple[dict[str, str], socket.socket | None] | None:
    """The server's answer and the connection to acknowledge it on (``None`` when there is
    nothing to acknowledge); ``None`` when this call must be answered in process."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if (info.st_mode & 0o170000) != 0o140000 or info.st_uid != os.getuid():  # a socket of ours only
        return None
    header = {"argv": words, "cwd": os.getcwd(), "env": dict(os.environ), "umask": _umask(),
              "size": len(data), "encoding": sys.stdin.encoding, "errors": sys.stdin.errors}
    encoded = json.dumps(header).encode()  # ASCII: json escapes the rest
    if len(encoded) > MAX_HEADER:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(_CONNECT_TIMEOUT)
        conn.connect(path)
        uid = peer_uid(conn)
        if uid is not None and uid != os.getuid():
            return None
        conn.sendall(len(encoded).to_bytes(8, "big") + encoded + data)
        conn.settimeout(_READY_TIMEOUT)
        if conn.recv(1) != READY:
            return None  # busy, stale or not ours: the server has not run it, so we may
        conn.sendall(GO)
    except (OSError, ValueError):
        conn.close()
        return None
    # From here the server runs the call: it must not also run in process.
    global went  # noqa: PLW0603
    went = True
    try:
        conn.settimeout(_ANSWER_TIMEOUT)
        raw = receive(conn, MAX_ANSWER)
        answer = json.loads(raw) if raw else None
    except (OSError, ValueError, RecursionError):
        answer = None
    if (isinstance(answer, dict) and isinstance(answer.get("stdout"), str)
            and isinstance(answer.get("stderr"), str)):
        return answer, conn
    conn.close()  # no acknowledgement: the server records nothing of this call
    return {"stdout": "", "stderr": "pi-rules hook: the hook server took the call but gave no answer; "
                                    "nothing was added this time (PI_RULES_HOOK_SERVER=off answers every "
                                    "call in process)\n"}, None


def _start_server(directory: str, path: str) -> None:
    """A detached server for the next call; it decides itself whether one already runs."""
    import subprocess  # only when starting one

    log_path = os.path.join(directory, "server.log")
    try:
        # One short line per answered call: started afresh past 1 MiB, so it never grows unbounded.
        mode = "wb" if os.path.isfile(log_path) and os.path.getsize(log_path) > _MAX_LOG else "ab"
        with open(log_path, mode) as log:
            subprocess.Popen(
                # -P and cwd /: a project folder named rules_hosts must not be what runs.
                [sys.executable, "-P", "-m", "rules_hosts.hook_server.server", path], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True, close_fds=True, cwd="/",
            )
    except OSError:
        pass  # no server: every call is answered in process, as before
