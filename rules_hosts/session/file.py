"""The JSONL session file of ``pi-rules serve --session FILE``: one entry per line.

**Appending.** Each entry is one JSON object on one line. ``append_line`` writes it under
an exclusive ``flock`` on the file: it checks that the file ends with ``\\n`` (a writer
that died mid-line left a fragment otherwise; the new line then starts with ``\\n`` so the
fragment stays a line of its own), writes the whole line to an ``O_APPEND`` descriptor and
``fsync``s it before unlocking. So two processes sharing one file never interleave or
glue lines, and a crash — of either — can only leave the LAST line torn. The Claude Code
adapter's state journal appends through the same function.

**Reading** is total: a line that is not a complete JSON object (torn, corrupt, not UTF-8,
over-long) is skipped, never fatal. A strict prefix of a serialised object never parses as
an object, so a torn line can never be mistaken for a different entry. Readers take a
shared lock, so they never see a line another process is still writing.

**Nothing acknowledged is unreadable** (issue 14, attack 11). Lines are UTF-8, and
``encode_entry`` refuses — before anything is written — an entry the reader would skip
(a line over ``MAX_ENTRY_LINE``). Hosts persist no path over ``MAX_PERSISTED_PATH``
(``entry_refusal``): no real file has one.

**The session lock** (issue 14, attack 8): ``exclusive`` holds a lock file next to a
state file across a whole load–decide–append, with a bounded wait.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections import deque
from typing import Any, Iterator

from rules_hosts.session.runtime import MAX_TOUCHED, TOUCHED_CUSTOM_TYPE, touched_entry

try:  # POSIX; elsewhere appends are unlocked (still one O_APPEND write per line)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

# A line longer than this is not one of ours (an entry lists a handful of paths): skip it
# without holding it in memory.
MAX_ENTRY_LINE = 1 << 20
# PATH_MAX on Linux: no file the agent can really open has a longer path, so a longer one
# is hostile or broken and is not worth a line the reader might not take back.
MAX_PERSISTED_PATH = 4096
_READ_CHUNK = 1 << 16
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO put in the file's place must not hang us


class EntryRefused(ValueError):
    """An entry the file must not hold: written, it could not be read back as written."""


def encode_line(record: Any) -> bytes:
    """One record as one compact line of UTF-8. Non-ASCII stays raw (an escaped emoji is
    12 bytes, not 4); only a record with a lone surrogate, which UTF-8 cannot carry, is
    written with ASCII escapes, which read back as the same string."""
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


def path_refusal(path: str) -> str | None:
    """Why ``path`` is not persisted (over ``MAX_PERSISTED_PATH`` bytes), or ``None``."""
    size = len(path.encode("utf-8", "surrogatepass"))  # a lone surrogate counts its 3 bytes
    if size <= MAX_PERSISTED_PATH:
        return None
    return f"a path of {size} bytes is over the {MAX_PERSISTED_PATH}-byte limit for a persisted path"


def entry_refusal(entry: Any) -> str | None:
    """Why a touched entry is not persisted (a path over ``MAX_PERSISTED_PATH``), or ``None``.
    A host's policy, checked before ``SessionFile.append``; the file itself takes any line
    it can read back."""
    data = entry.get("data") if isinstance(entry, dict) else None
    paths = data.get("paths") if isinstance(data, dict) else None
    for path in paths if isinstance(paths, list) else ():
        if isinstance(path, str) and (reason := path_refusal(path)) is not None:
            return f"{reason}; the entry was not written"
    return None


def encode_entry(entry: Any) -> bytes:
    """One entry as one line (``encode_line``), or ``EntryRefused`` when the reader would
    skip it: a line over ``MAX_ENTRY_LINE``."""
    line = encode_line(entry)
    if len(line) - 1 > MAX_ENTRY_LINE:
        raise EntryRefused(
            f"the entry is {len(line) - 1} bytes, over the {MAX_ENTRY_LINE}-byte line limit; the entry was not written")
    return line


def parse_entries(data: bytes) -> list[dict[str, Any]]:
    """The complete entries in ``data``: every line that parses as a JSON object, in order.

    The last line needs no ``\\n``: an entry whose bytes all reached the disk counts,
    a torn prefix of one does not parse and is dropped like any corrupt line.
    """
    entries: list[dict[str, Any]] = []
    for line in data.split(b"\n"):
        entry = _parse_line(line)
        if entry is not None:
            entries.append(entry)
    return entries


def _parse_line(line: bytes) -> dict[str, Any] | None:
    if not line.strip() or len(line) > MAX_ENTRY_LINE:
        return None
    try:
        value = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # torn, corrupt, not UTF-8, absurdly deep
        return None
    return value if isinstance(value, dict) else None


def iter_entries(path: str) -> Iterator[dict[str, Any]]:
    """The entries of the regular file at ``path``, streamed under a shared lock; nothing
    when it is missing, unreadable or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC)
    except (OSError, ValueError):
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        _lock(fd, shared=True)  # released by close
        pending = b""
        skipping = False  # inside an over-long line: drop bytes up to its newline
        while chunk := os.read(fd, _READ_CHUNK):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if not skipping and (entry := _parse_line(line)) is not None:
                    yield entry
                skipping = False
            if len(pending) > MAX_ENTRY_LINE:
                pending, skipping = b"", True
        if not skipping and (entry := _parse_line(pending)) is not None:
            yield entry
    except OSError:
        return  # a read error ends the file here; what was read stands
    finally:
        os.close(fd)


def read_entries(path: str) -> list[dict[str, Any]]:
    """The entries of the file at ``path``; ``[]`` when it is missing or unreadable."""
    return list(iter_entries(path))


def append_line(fd: int, data: bytes, *, sync: bool) -> None:
    """Append the complete line ``data`` to ``fd`` (opened ``O_RDWR | O_APPEND``) so that
    concurrent appenders and crashed ones never corrupt a line. Raises ``OSError``.

    Under an exclusive ``flock``: a file not ending with ``\\n`` gets one first (inside the
    same write), short writes are continued, and ``sync`` makes it durable before the lock
    is released. A filesystem that refuses locks still gets the single ``O_APPEND`` write.
    """
    locked = _lock(fd, shared=False)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # end the torn fragment; our entry starts a line of its own
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(f"no progress appending ({len(view)} bytes left)")
            view = view[written:]
        if sync:
            os.fsync(fd)
    finally:
        if locked:
            fcntl.flock(fd, fcntl.LOCK_UN)


def open_for_append(path: str, *, follow: bool = True) -> int:
    """A descriptor for ``append_line``: created ``0600`` if missing, regular files only."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | _O_NONBLOCK | _O_CLOEXEC
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
    except OSError:
        os.close(fd)
        raise
    return fd


def _lock(fd: int, *, shared: bool) -> bool:
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
    except OSError:  # ENOLCK, EOPNOTSUPP: some network filesystems
        return False
    return True


@contextlib.contextmanager
def exclusive(path: str, wait: float) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on the lock file ``path`` for the block.

    Yields ``False`` when other processes kept it for all of ``wait`` seconds: the caller
    must then decide nothing the lock protects. Where the filesystem refuses locks the
    block runs unlocked (``True``), as ``append_line`` does. The file is created ``0600``,
    never through a symlink, and never removed (removing a lock file others wait on lets
    two of them in). Raises ``OSError`` when it cannot be opened.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | _O_NONBLOCK | _O_CLOEXEC, 0o600)
    try:  # O_CLOEXEC: a child (git) must not inherit the lock and outlive us holding it
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        yield _wait_for_lock(fd, wait)
    finally:
        os.close(fd)  # releases the lock


def _wait_for_lock(fd: int, wait: float) -> bool:
    # flock has no timeout: poll without blocking, backing off to 50 ms, up to the deadline.
    if fcntl is None:
        return True
    deadline = time.monotonic() + max(wait, 0.0)
    pause = 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError:  # ENOLCK, EOPNOTSUPP: no locks here at all; go ahead unlocked
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)


class SessionFile:
    """An append-only session file, safe to share between processes.

    ``entries`` is what the file rebuilds, in bounded memory: one touched entry with the
    most recent ``MAX_TOUCHED`` recorded paths — exactly what a session folds from the
    whole file, since it forgets older paths itself — or ``[]``. Other entries in the file
    (a host's own) are skipped as the rebuild skips them.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._recent: deque[str] = deque(maxlen=MAX_TOUCHED)
        self._fd: int | None = None
        for entry in iter_entries(path):
            self._remember(entry)

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [touched_entry(list(self._recent))] if self._recent else []

    def append(self, entry: dict[str, Any]) -> None:
        """Persist one entry durably. Raises ``OSError`` (the caller reports it)."""
        data = encode_entry(entry)
        append_line(self._open(), data, sync=True)
        self._remember(entry)

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None

    def _remember(self, entry: dict[str, Any]) -> None:
        """Keep the paths of a touched entry, as ``touched_from_entries`` reads them."""
        if entry.get("customType") != TOUCHED_CUSTOM_TYPE or entry.get("type", "custom") != "custom":
            return
        data = entry.get("data")
        paths = data.get("paths") if isinstance(data, dict) else None
        if isinstance(paths, list):
            self._recent.extend(p for p in paths if isinstance(p, str))

    def _open(self) -> int:
        if self._fd is None:
            created = not os.path.exists(self.path)
            self._fd = open_for_append(self.path)
            if created:
                _fsync_directory(os.path.dirname(os.path.abspath(self.path)))
        return self._fd


def _fsync_directory(path: str) -> None:
    """Make a new file's directory entry durable too; best effort (not every FS allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
