"""Listing rule directories and reading rule files without ever hanging or raising.

Source plugins list with ``list_rule_files``; the engine reads with ``read_rule_text``.
Both turn every filesystem fault into a ``RuleError`` value.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Callable, Literal

from .model import RuleError, RuleFile

if TYPE_CHECKING:  # cache.py imports this module
    from .cache import ListingCache

# A rule is a short instruction for a model; anything bigger is a mistake (or an attack)
# and is reported instead of being read into memory.
MAX_RULE_BYTES = 1024 * 1024
NEVER_SCANNED = frozenset({".git", "node_modules"})


def list_rule_files(
    root: str,
    *,
    accept: Callable[[str], bool],
    plugin: str,
    schema: str,
    source: Literal["project", "global"],
    base: str,
    group: int,
    rank: int = 0,
    scope: str = "",
    cache: ListingCache | None = None,
) -> list[RuleFile | RuleError]:
    """Every accepted file below ``root`` as a ``RuleFile``, plus errors for what failed.

    A missing root yields nothing. ``.git`` and ``node_modules`` are never entered and
    symlinked directories are not followed (no loops, no escape from the tree); symlinked
    files are read. Entries that are not regular files (FIFOs, sockets, devices, broken
    links) with an accepted name are reported as ``read-failure``, never opened. With a
    ``cache`` (``DiscoveryContext.listing_cache``) an unlistable directory is re-reported
    from the cache instead of being listed again until its mtime changes.
    """
    found: list[RuleFile | RuleError] = []

    def make(path: str, rel: str) -> RuleFile:
        return RuleFile(
            path=path,
            rules_root=root,
            relative_path=rel,
            base=base,
            plugin=plugin,
            schema=schema,
            source=source,
            order=(group, rank, scope, rel),
        )

    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        known = cache.known_failure(directory) if cache is not None else None
        if known is not None:
            found.append(known)
            continue
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            continue  # vanished or never existed: nothing to report
        except OSError as exc:
            error = _unreadable(directory, exc, plugin)
            if cache is not None:
                cache.remember_failure(directory, error)
            found.append(error)
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            try:
                is_link = entry.is_symlink()
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in NEVER_SCANNED:
                        pending.append((entry.path, rel + "/"))
                    continue
                if not accept(entry.name):
                    continue
                if is_link and entry.is_dir(follow_symlinks=True):
                    continue  # a symlinked directory named like a rule file
                if entry.is_file(follow_symlinks=True):
                    found.append(make(entry.path, rel))
                else:
                    found.append(RuleError("read-failure", entry.path, _not_regular(entry.path), plugin))
            except OSError as exc:
                found.append(RuleError("read-failure", entry.path, _describe(exc), plugin))
    return sorted(found, key=_order_key)


def read_rule_text(path: str) -> str | RuleError | None:
    """The file's text (BOM dropped, CRLF folded), an error, or ``None`` if it vanished.

    Opens non-blocking and checks the descriptor is a regular file, so a FIFO swapped in
    after listing cannot hang the engine; reads at most ``MAX_RULE_BYTES`` + 1 bytes.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return RuleError("read-failure", path, _describe(exc))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return RuleError("read-failure", path, _not_regular(path))
        if info.st_size > MAX_RULE_BYTES:
            return _too_big(path, info.st_size)
        chunks = []
        remaining = MAX_RULE_BYTES + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        return RuleError("read-failure", path, _describe(exc))
    finally:
        os.close(fd)
    if len(data) > MAX_RULE_BYTES:
        return _too_big(path, len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return RuleError(
            "read-failure",
            path,
            f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8",
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def file_signature(path: str) -> tuple[int, int, int] | None:
    """(mtime_ns, size, inode) for cache validation, or ``None`` when it cannot be stat-ed."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _order_key(item: RuleFile | RuleError) -> tuple[int, str]:
    if isinstance(item, RuleFile):
        return (1, item.relative_path)
    return (0, item.path)


def _unreadable(directory: str, exc: OSError, plugin: str) -> RuleError:
    return RuleError(
        "source-unreadable",
        directory,
        f"cannot list this rules directory ({_describe(exc)}); "
        "fix its permissions or remove it — its rules are not loaded",
        plugin,
    )


def _describe(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _not_regular(path: str) -> str:
    if os.path.islink(path) and not os.path.exists(path):
        return "broken symbolic link; point it at an existing file or delete it"
    return "not a regular file (FIFO, socket or device); rule files must be plain files"


def _too_big(path: str, size: int) -> RuleError:
    return RuleError(
        "read-failure",
        path,
        f"file is {size} bytes, over the {MAX_RULE_BYTES}-byte limit for a rule; "
        "split it into smaller rules",
    )
