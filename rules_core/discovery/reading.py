"""Reading one rule file without ever hanging or raising, and naming OS faults.

``read_rule_text`` opens non-blocking and reads at most ``MAX_RULE_BYTES`` + 1 bytes;
every filesystem fault is a ``RuleError`` value whose message says what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from rules_core.model import RuleError

# A rule is a short instruction for a model; anything bigger is a mistake (or an attack)
# and is reported instead of being read into memory.
MAX_RULE_BYTES = 1024 * 1024
BROKEN_LINK = "broken symbolic link; point it at an existing file or delete it"
NOT_REGULAR = "not a regular file (FIFO, socket or device); rule files must be plain files"


@dataclass(frozen=True)
class Repaired:
    """A file read with ``lossy``: its text with each invalid UTF-8 sequence replaced by
    U+FFFD, and where the first one was (a byte offset into the file, BOM included)."""

    text: str
    offset: int
    count: int


def read_rule_text(path: str, *, follow: bool = True, lossy: bool = False) -> str | Repaired | RuleError | None:
    """The file's text (BOM dropped, CRLF folded), an error, or ``None`` if it vanished
    (or became a directory: the next listing walks it).

    Opens non-blocking and checks the descriptor is a regular file, so a FIFO swapped in
    after listing cannot hang the engine; never reads more than ``MAX_RULE_BYTES`` + 1
    bytes, whatever size the file claims. ``follow=False`` refuses a final symbolic link
    (the caller resolved it already; one swapped in since is not followed). ``lossy``
    reads invalid UTF-8 as its tool does (U+FFFD, a ``Repaired``) instead of failing.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return RuleError("read-failure", path, describe_os_error(exc))
    except ValueError:  # an embedded NUL from a third-party source
        return RuleError("read-failure", path, "the path contains a NUL byte; rename the file")
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            return RuleError("read-failure", path, not_regular(path))
        if info.st_size > MAX_RULE_BYTES:
            return _too_big(path, info.st_size)
        data = read_at_most(fd, MAX_RULE_BYTES + 1)
    except OSError as exc:
        return RuleError("read-failure", path, describe_os_error(exc))
    finally:
        os.close(fd)
    if len(data) > MAX_RULE_BYTES:  # it grew after fstat (or lied about its size)
        return _too_big(path, len(data), at_least=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if lossy and b"\x00" not in data:  # NUL bytes too: binary, which no tool reads as text
            return _repaired(data, exc.start)
        return RuleError(
            "read-failure",
            path,
            f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8",
        )
    return _folded(text)


def _repaired(data: bytes, offset: int) -> Repaired:
    text = _folded(data.decode("utf-8", errors="replace"))
    return Repaired(text, offset, text.count("\ufffd") - _folded(data.decode("utf-8", errors="ignore")).count("\ufffd"))


def _folded(text: str) -> str:
    return (text[1:] if text.startswith("\ufeff") else text).replace("\r\n", "\n")


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from ``fd``, whatever size the file claims."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def file_signature(path: str) -> tuple[int, int, int, int] | None:
    """(mtime_ns, ctime_ns, size, inode) for cache validation, or ``None`` when it cannot be
    stat-ed. The ctime: a same-size edit with its mtime put back still changes it (issue 26,
    as the persistent cache already keyed)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)



# What to do about an OSError, by errno; anything else gets the generic advice.
_FIXES = {
    errno.EACCES: "make it readable (chmod a+r) or remove it",
    errno.EPERM: "make it readable (chmod a+r) or remove it",
    errno.ELOOP: "point the link at a real file or delete it",
    errno.ENAMETOOLONG: "move it to a shorter path",
}


def describe_os_error(exc: OSError) -> str:
    """The OS's words plus what to do about them."""
    reason = exc.strerror or type(exc).__name__
    return f"{reason}; {_FIXES.get(exc.errno or 0, 'check the file system, then fix or remove it')}"



def not_regular(path: str) -> str:
    if os.path.islink(path) and not os.path.exists(path):
        return BROKEN_LINK
    return NOT_REGULAR


def _too_big(path: str, size: int, at_least: bool = False) -> RuleError:
    return RuleError(
        "read-failure",
        path,
        f"file is {'at least ' if at_least else ''}{size} bytes, over the {MAX_RULE_BYTES}-byte limit for a rule; "
        "split it into smaller rules",
    )

