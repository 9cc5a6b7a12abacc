"""The JSONL session file of ``pi-rules serve --session FILE``: one entry per line.

Each persisted entry is one JSON object on one line, written with a single ``os.write``
of the whole encoded line (``\\n`` included) to an ``O_APPEND`` descriptor and then
``fsync``-ed, so a crash can only leave the LAST line torn. Reading is total: a line
that is not a complete JSON object (torn, corrupt, not UTF-8) is skipped, never fatal.
A strict prefix of a serialised object never parses as an object, so a torn line can
never be mistaken for a different entry.
"""

from __future__ import annotations

import json
import os
from typing import Any

# A line longer than this is not one of ours (an entry lists a handful of paths): skip it
# without holding it in memory.
MAX_ENTRY_LINE = 1 << 20
_READ_CHUNK = 1 << 16


def encode_entry(entry: Any) -> bytes:
    """One entry as one line: compact, ASCII-only (a lone surrogate in a path still encodes)."""
    return json.dumps(entry, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


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


def read_entries(path: str) -> list[dict[str, Any]]:
    """The entries of the file at ``path``; ``[]`` when it is missing or unreadable."""
    entries: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as stream:
            pending = b""
            skipping = False  # inside an over-long line: drop bytes up to its newline
            while chunk := stream.read(_READ_CHUNK):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not skipping and (entry := _parse_line(line)) is not None:
                        entries.append(entry)
                    skipping = False
                if len(pending) > MAX_ENTRY_LINE:
                    pending, skipping = b"", True
            if not skipping and (entry := _parse_line(pending)) is not None:
                entries.append(entry)
    except (OSError, ValueError):  # missing, a directory, a FIFO gone wrong: start empty
        return entries
    return entries


class SessionFile:
    """An append-only session file; ``entries`` mirrors what it holds (read + appended)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.entries: list[dict[str, Any]] = read_entries(path)
        self._fd: int | None = None
        self._needs_newline = False  # a torn tail must not swallow our first line

    def append(self, entry: dict[str, Any]) -> None:
        """Persist one entry durably. Raises ``OSError`` (the caller reports it)."""
        data = encode_entry(entry)
        fd = self._open()
        if self._needs_newline:
            # Terminate the torn fragment inside the same single write: the fragment stays
            # a corrupt (ignored) line and our entry starts on a line of its own.
            data = b"\n" + data
        written = os.write(fd, data)
        if written != len(data):
            # A short write on a regular file (disk full): end the fragment so the next
            # entry is not glued to it; the fragment itself never parses.
            self._needs_newline = True
            os.fsync(fd)
            raise OSError(f"short write to {self.path} ({written} of {len(data)} bytes)")
        self._needs_newline = False
        os.fsync(fd)
        self.entries.append(entry)

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        created = not os.path.exists(self.path)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(self.path, "rb") as stream:
                    stream.seek(size - 1)
                    self._needs_newline = stream.read(1) != b"\n"
        except OSError:
            os.close(fd)
            raise
        if created:
            _fsync_directory(os.path.dirname(os.path.abspath(self.path)))
        self._fd = fd
        return fd


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
