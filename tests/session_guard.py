"""Every test stays in its own folders: the session's HOME, XDG folders and the hook
server's runtime folder point into one temporary folder, and at the end of the run the
places pi-rules would write under the real home (and ``/nonexistent``, a HOME some tests
once used, which pi-rules running as root would create) must be as they were.

Two checks: an audit hook sees every write this process makes under a watched place
(exact: it fails the run), and a before/after comparison of those places also covers
child processes, but cannot tell this run's writes from another process's on a shared
machine, so it warns. Imported by tests/conftest.py before anything reads HOME. The
real locations of the tools the install step put in place (``.ci/install-claude``'s
Claude Code) stay reachable through ``TOOL_CACHE``.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

REAL_HOME = Path(os.path.expanduser("~"))
# Where .ci/install-claude put the pinned client (it runs before the tests, with the real HOME).
TOOL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or REAL_HOME / ".cache") / "pi-rules-tests"
# Where .ci/install-wheelhouse put the wheels pip installs pi-rules from in tests (offline).
WHEELHOUSE = TOOL_CACHE / "wheelhouse"
NONEXISTENT = Path("/nonexistent")

# What pi-rules writes under a home: caches, settings, the trust store, session state,
# global rules and the hook files `install` writes.
_WATCHED = (".cache/pi-rules", ".config/pi-rules", ".local/state/pi-rules", ".pi", ".claude/settings.json")
_XDG_FROM_HOME = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_DIRS")
_MAX_ENTRIES = 20_000  # a bounded walk: a huge folder is compared by its first entries
# This run's folder, in every child's environment: a detached hook server a test's hook
# process started inherits it, which is what ties the server to this run (other checkouts'
# runs on the machine have servers too). Not PI_RULES_*: `check` warns about unknown ones.
RUN_MARKER = "RULES_SUITE_RUN"
_SERVER_MODULE = b"rules_hosts.hook_server.server"


def start() -> Path:
    """Point this process (and every child it starts) into a fresh folder; returns it."""
    base = Path(tempfile.mkdtemp(prefix="pi-rules-test-run-"))
    os.environ[RUN_MARKER] = str(base)
    home = base / "home"
    for name, folder in {"HOME": home, "XDG_RUNTIME_DIR": base / "runtime"}.items():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.environ[name] = str(folder)
    # The other XDG folders follow HOME when unset (~/.config, ~/.cache, ~/.local/state,
    # ~/.local/share), so they are in this run's home too — and in the home a test gives
    # its own process, which setting them here would override.
    for name in _XDG_FROM_HOME:
        os.environ.pop(name, None)
    # Commits in test repositories need an author; the real ~/.gitconfig is out of reach now.
    (home / ".gitconfig").write_text("[user]\n\tname = pi-rules tests\n\temail = tests@example.invalid\n",
                                     encoding="utf-8")
    npmrc = REAL_HOME / ".npmrc"
    if npmrc.is_file() and "NPM_CONFIG_USERCONFIG" not in os.environ:
        os.environ["NPM_CONFIG_USERCONFIG"] = str(npmrc)  # the registry the install step uses
    return base


_WRITES = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link", "os.truncate",
           "os.utime", "os.chmod", "shutil.rmtree", "shutil.copyfile", "shutil.move"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# Writes this process made under a watched place: exact, whatever else runs on the machine.
caught: list[str] = []


def watched_roots() -> list[str]:
    return [str(REAL_HOME / relative) for relative in _WATCHED] + [str(NONEXISTENT)]


def _is_watched(path: object) -> bool:
    if isinstance(path, (bytes, os.PathLike)):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return False  # a file descriptor: opened, and so checked, by its path before
    path = os.path.abspath(path)
    return any(path == root or path.startswith(root + os.sep) for root in watched_roots())


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and len(args) >= 3:
        path, mode, flags = args[0], args[1], args[2]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and mode is None and flags & _WRITE_FLAGS)
        if writes and _is_watched(path):
            caught.append(f"{event} {path}")
    elif event in _WRITES and args and (_is_watched(args[0]) or (len(args) > 1 and _is_watched(args[1]))):
        caught.append(f"{event} {args[0]}")


def install_audit() -> None:
    """Record every write of this process under a watched place (an audit hook stays for
    the life of the process, so it is installed once per run)."""
    sys.addaudithook(_audit)


def snapshot() -> dict[str, tuple[int, int] | None]:
    """What the watched places hold now: path -> (mtime, size); ``None`` for a missing root."""
    seen: dict[str, tuple[int, int] | None] = {}
    roots = [REAL_HOME / relative for relative in _WATCHED] + [NONEXISTENT]
    for root in roots:
        if not os.path.lexists(root):
            seen[str(root)] = None
            continue
        for path in _walk(root):
            try:
                info = os.lstat(path)
            except OSError:
                continue
            seen[path] = (info.st_mtime_ns, info.st_size)
    return seen


def written(before: dict[str, tuple[int, int] | None], after: dict[str, tuple[int, int] | None]) -> list[str]:
    """Paths created, changed or removed between two snapshots."""
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))


def _walk(root: Path) -> list[str]:
    found = [str(root)]
    stack = [str(root)]
    while stack and len(found) < _MAX_ENTRIES:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    found.append(entry.path)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return found


# -- hook servers: every test stops the servers it starts -----------------------------------


def processes() -> set[int]:
    """The pids alive now (a listing of /proc: cheap enough to take around every test)."""
    try:
        return {int(name) for name in os.listdir("/proc") if name.isdigit()}
    except OSError:
        return set()  # no /proc: nothing is checked


def hook_servers(pids: set[int] | None = None, under: str | None = None) -> dict[int, str]:
    """Live hook servers of this run among ``pids`` (default: all): pid -> socket path.
    A server is detached from the hook process that started it, so only its command line
    (``-m rules_hosts.hook_server.server SOCKET``) and its environment (``RUN_MARKER``, or
    a socket inside this run's folder) say whose it is. ``under``: the servers of sockets
    in that folder, which is the caller's own (whatever their environment)."""
    base = os.environ.get(RUN_MARKER, "")
    marker = f"{RUN_MARKER}={base}".encode()
    found: dict[int, str] = {}
    for pid in sorted(processes() if pids is None else pids):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                argv = file.read().split(b"\0")
            if _SERVER_MODULE not in argv[:-2]:
                continue  # a zombie's command line is empty: it is no longer serving
            path = os.fsdecode(argv[argv.index(_SERVER_MODULE) + 1])
            if under is not None:
                ours = path.startswith(under.rstrip(os.sep) + os.sep)
            else:
                with open(f"/proc/{pid}/environ", "rb") as file:
                    ours = bool(base) and (marker in file.read().split(b"\0") or path.startswith(base + os.sep))
        except (OSError, IndexError):
            continue  # gone meanwhile
        if ours:
            found[pid] = path
    return found


def stop_hook_servers(servers: dict[int, str], wait: float = 30.0) -> dict[int, str]:
    """SIGKILL ``servers`` and wait (bounded) until none of them is running; returns those
    still running, which is nothing unless the machine is stuck."""
    for pid in servers:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return settled(servers, wait)


def settled(servers: dict[int, str], wait: float) -> dict[int, str]:
    """Those of ``servers`` still running after up to ``wait`` seconds (polled: a server
    told to stop, or idle, may still be on its way out)."""
    deadline = time.monotonic() + wait
    left = hook_servers(set(servers))
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = hook_servers(set(left))
    return left
