"""Listing rule directories without ever hanging or raising.

Source plugins list with ``list_rule_files``, passing their ``DiscoveryContext``: its
``listing_cache`` (a ``ListingCache``) remembers directories that could not be listed,
and its ``containment`` keeps project sources inside the project. Every fault is a
``RuleError`` value.
"""

from __future__ import annotations

import os
import stat
from typing import Callable, Literal

from rules_core.discovery.cache import evict_oldest
from rules_core.discovery.containment import Containment, Unresolved
from rules_core.model import DiscoveryContext, RuleError, RuleFile
from rules_core.discovery.reading import BROKEN_LINK, NOT_REGULAR, describe_os_error, not_regular

NEVER_SCANNED = frozenset({".git", "node_modules"})
MAX_LISTING_FAILURES = 1024  # unlistable directories remembered (RULE-SPEC §7)
# Rule files one rules directory may contribute (issue 14: 100,000 tiny files cost 65 s
# and 670 MB per discovery). The first ones in order load; the rest are reported.
MAX_FILES_PER_ROOT = 10_000


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
    context: DiscoveryContext | None = None,
) -> list[RuleFile | RuleError]:
    """Every accepted file below ``root`` as a ``RuleFile``, plus errors for what failed.

    A missing root yields nothing. ``.git`` and ``node_modules`` are never entered and
    symlinked directories are not followed (no loops, no escape from the tree); symlinked
    files are read. Entries that are not regular files (FIFOs, sockets, devices, broken
    links) with an accepted name are reported as ``read-failure``, never opened. With a
    ``context``, its ``listing_cache`` re-reports an unlistable directory instead of
    listing it again until its mtime changes, and its ``containment`` holds a ``project``
    source inside the project: a rules directory or a symlinked rule file that leads
    outside the git root is reported, not followed.
    """
    found: list[RuleFile | RuleError] = []
    cache = context.listing_cache if context is not None else None
    contain = context.containment if context is not None and source == "project" else None
    if contain is not None:
        real_root = contain.directory(root)
        if real_root is None:
            return []  # missing (or a broken link): nothing to report, as without a bound
        if isinstance(real_root, Unresolved) and real_root.escape:
            return [RuleError("source-unreadable", root, _unlisted(real_root), plugin)]
        # A loop or an OS error: listing fails the usual way and is cached (RULE-SPEC §7).

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
                if is_link and contain is not None:
                    found.extend(_contained_link(contain, entry.path, rel, make, plugin))
                    continue
                if is_link and entry.is_dir(follow_symlinks=True):
                    continue  # a symlinked directory named like a rule file
                if entry.is_file(follow_symlinks=True):
                    found.append(make(entry.path, rel))
                else:
                    found.append(RuleError("read-failure", entry.path, not_regular(entry.path), plugin))
            except OSError as exc:
                found.append(RuleError("read-failure", entry.path, describe_os_error(exc), plugin))
    return _capped(sorted(found, key=_order_key), root, plugin)


def _capped(found: list[RuleFile | RuleError], root: str, plugin: str) -> list[RuleFile | RuleError]:
    files = [f for f in found if isinstance(f, RuleFile)]
    if len(files) <= MAX_FILES_PER_ROOT:
        return found
    kept = set(map(id, files[:MAX_FILES_PER_ROOT]))
    message = (f"holds {len(files)} rule files, over the limit of {MAX_FILES_PER_ROOT} per rules directory; the "
               f"first {MAX_FILES_PER_ROOT} in order load, the other {len(files) - MAX_FILES_PER_ROOT} do not — "
               "move rules out, or split the directory")
    rest = [f for f in found if not isinstance(f, RuleFile) or id(f) in kept]
    return [*rest, RuleError("source-unreadable", root, message, plugin)]


def _contained_link(
    contain: Containment, path: str, rel: str, make: Callable[[str, str], RuleFile], plugin: str
) -> list[RuleFile | RuleError]:
    """A symlinked entry of a project rules directory, resolved inside the bound only."""
    found = contain.resolve(path)
    if found is None:
        return [RuleError("read-failure", path, BROKEN_LINK, plugin)]
    if isinstance(found, Unresolved):
        return [RuleError("read-failure", path, found.message, plugin)]
    mode = found[1].st_mode
    if stat.S_ISDIR(mode):
        return []  # a symlinked directory named like a rule file: not followed
    if stat.S_ISREG(mode):
        return [make(path, rel)]
    return [RuleError("read-failure", path, NOT_REGULAR, plugin)]



def _order_key(item: RuleFile | RuleError) -> tuple[int, str]:
    if isinstance(item, RuleFile):
        return (1, item.relative_path)
    return (0, item.path)


def _unreadable(directory: str, exc: OSError, plugin: str) -> RuleError:
    return RuleError(
        "source-unreadable",
        directory,
        f"cannot list this rules directory ({exc.strerror or type(exc).__name__}); "
        "fix its permissions or remove it — its rules are not loaded",
        plugin,
    )



def _unlisted(stop: Unresolved) -> str:
    return f"this rules directory cannot be listed: {stop.message}"



class ListingCache:
    """``source-unreadable`` outcomes per directory (RULE-SPEC §7).

    A directory that could not be listed is not listed again — the same error is
    re-reported — until its own mtime (or ctime: a chmod that fixes it) changes, until it
    no longer exists, or, if it could not be stat-ed when it failed, until the first
    stat that succeeds.
    """

    def __init__(self) -> None:
        self._failures: dict[str, tuple[tuple[int, int] | None, RuleError]] = {}

    def __len__(self) -> int:
        return len(self._failures)

    def known_failure(self, directory: str) -> RuleError | None:
        entry = self._failures.get(directory)
        if entry is None:
            return None
        mtime, error = entry
        if not os.path.lexists(directory):
            del self._failures[directory]  # gone: nothing to report any more
            return None
        current = _mtime(directory)
        if current is None and mtime is None:
            return error
        if current is not None and current == mtime:
            return error
        del self._failures[directory]
        return None

    def remember_failure(self, directory: str, error: RuleError) -> None:
        self._failures.pop(directory, None)  # re-inserted as the newest
        self._failures[directory] = (_mtime(directory), error)
        evict_oldest(self._failures, MAX_LISTING_FAILURES)

    def forget(self, directory: str) -> None:
        self._failures.pop(directory, None)


def _mtime(directory: str) -> tuple[int, int] | None:
    """mtime, and ctime too: fixing permissions (chmod) changes only the ctime."""
    try:
        info = os.stat(directory)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_ctime_ns)
