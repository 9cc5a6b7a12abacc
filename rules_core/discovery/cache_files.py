"""The files of the cache directory (``rules_core.discovery.persistent``, ``rules_core.plugins.entry_points``):
read as hostile input, written atomically, kept few.

A file is read only if it is a regular file of the current user, not a link, in a
directory of the user that is not a link either, at most ``MAX_FILE_BYTES``, and starts
with the SHA-256 of its JSON body. It is written to a temporary file (mode 0600) in the
same directory and renamed over the old one, so a writer killed at any point leaves the
old file or none.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from typing import Any

from rules_core.discovery.reading import read_at_most

MAX_FILE_BYTES = 16 * 1024 * 1024  # read no more than this; a bigger file is ignored
MAX_FILES = 64  # project files kept in the cache directory, least recently written removed
_NAME = re.compile(r"[0-9a-f]{40}\.json\Z")
_TEMP_PREFIX = ".tmp-"
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def read_json(path: str) -> Any | None:
    """The parsed file, if it is a regular file of ours, not a link, within the cap, in a
    directory of ours that is not a link either."""
    try:
        folder = os.lstat(os.path.dirname(path))
    except OSError:
        return None
    if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.getuid():
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > MAX_FILE_BYTES:
            return None
        data = read_at_most(fd, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        return None
    digest, _, body = data.partition(b"\n")
    # A flipped byte inside a string would still be valid JSON of the right shape: the
    # digest line turns any damage into a file that is ignored.
    if digest != hashlib.sha256(body).hexdigest().encode():
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def encode(document: object) -> bytes:
    """A cache file's bytes: the SHA-256 of the JSON body on the first line, then the body."""
    body = json.dumps(document, separators=(",", ":")).encode()
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


def own_directory(directory: str) -> bool:
    """The cache directory exists, is a real directory of ours, private to us."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        info = os.lstat(directory)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    if info.st_mode & 0o077:
        os.chmod(directory, 0o700)
    return True


def write_atomically(
    directory: str, name: str, data: bytes, *, sync: bool = False, mode: int | None = None,
    prefix: str = _TEMP_PREFIX,
) -> None:
    """``data`` as ``directory/name`` through a temporary file and a rename: a crash leaves
    the old file or the new, never half of one. The file is 0600 unless ``mode`` says
    otherwise; ``sync`` flushes it to disk first (a user's decisions, not a cache)."""
    import tempfile  # here: only a process that learnt something writes

    fd, temporary = tempfile.mkstemp(prefix=prefix, dir=directory)  # mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, os.path.join(directory, name))
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def prune(directory: str) -> None:
    """Keep at most MAX_FILES project files; drop temporary files a killed writer left."""
    now = time.time()
    kept: list[tuple[float, str]] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(_TEMP_PREFIX) and now - info.st_mtime > 60:
                os.unlink(entry.path)
            elif _NAME.match(entry.name):
                kept.append((info.st_mtime, entry.path))
    kept.sort()
    for _, path in kept[: max(0, len(kept) - MAX_FILES)]:
        os.unlink(path)
