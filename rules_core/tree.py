"""One bounded walk of the project tree below cwd, shared by every nested source.

Nested ``.pi/rules`` (RULE-SPEC §1) and nested ``.cursor/rules`` both need "which folders
below cwd own a ``<marker>/rules`` directory". Walking six levels of a monorepo is the
most expensive part of discovery, so the walk happens once, records each folder's hidden
subdirectories, and is kept in ``DiscoveryContext.tree_cache`` until the engine is told
the tree changed (``Engine.invalidate_scans``). Whether a marker's ``rules`` directory
still exists is checked on every call, so a deleted one disappears at once.
"""

from __future__ import annotations

import os
import stat

from .listing import NEVER_SCANNED
from .model import DiscoveryContext

MAX_DEPTH = 6

# (depth, cwd-relative folder, names of its real hidden subdirectories)
_Folder = tuple[int, str, frozenset[str]]


def folders_owning(context: DiscoveryContext, marker: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative folder) of every folder at most ``MAX_DEPTH`` segments below
    cwd that owns a real (not symlinked) ``<marker>/rules`` directory; shallow first, then
    lexicographic. Never through ``node_modules``, hidden or symlinked directories."""
    found = [
        (depth, relative)
        for depth, relative in _candidates(context, marker)
        if _real_directory(os.path.join(context.cwd, relative, marker, "rules"))
    ]
    return sorted(found)


def _candidates(context: DiscoveryContext, marker: str) -> list[tuple[int, str]]:
    """Folders whose walk saw a ``marker`` subdirectory, kept with the walk: a warm
    discovery then checks a handful of folders, not the thousands a monorepo has."""
    cache = context.tree_cache
    key = ("owners", context.cwd, marker)
    if cache is not None and key in cache:
        return cache[key]
    owners = [(depth, relative) for depth, relative, hidden in _folders(context) if marker in hidden]
    if cache is not None:
        cache[key] = owners
    return owners


def _folders(context: DiscoveryContext) -> list[_Folder]:
    cache = context.tree_cache
    key = ("tree", context.cwd)
    if cache is not None and key in cache:
        return cache[key]
    folders = _walk(context.cwd)
    if cache is not None:
        cache[key] = folders
    return folders


def _walk(cwd: str) -> list[_Folder]:
    """Breadth-first; each directory is listed exactly once."""
    folders: list[_Folder] = []
    level, _ = _list(cwd)
    for depth in range(1, MAX_DEPTH + 1):
        next_level: list[str] = []
        for relative in level:
            names, hidden = _list(os.path.join(cwd, relative))
            folders.append((depth, relative, hidden))
            if depth < MAX_DEPTH:
                next_level.extend(f"{relative}/{name}" for name in names)
        level = next_level
    return folders


def _list(directory: str) -> tuple[list[str], frozenset[str]]:
    """Real visible subdirectories worth descending, and the real hidden ones' names."""
    names: list[str] = []
    hidden: set[str] = set()
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if entry.name.startswith("."):
                    # Hidden directories (.git, .venv, .cache, other tools' config) hold no
                    # packages and can be huge: recorded as markers, never descended.
                    hidden.add(entry.name)
                elif entry.name not in NEVER_SCANNED:
                    names.append(entry.name)
    except OSError:
        pass  # unlistable below cwd: nothing nested can be found there
    return sorted(names), frozenset(hidden)


def _real_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False
