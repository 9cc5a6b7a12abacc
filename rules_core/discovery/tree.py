"""One bounded walk of the project tree below cwd, shared by every nested source.

Nested ``.pi/rules`` (RULE-SPEC §1), nested ``.cursor/rules`` and the folder-scoped memory
files (``AGENTS.md``, ``CLAUDE.md``, ``GEMINI.md`` below cwd) all need "which folders below
cwd own this marker". Walking six levels of a monorepo is the most expensive part of
discovery, so the walk happens once, records each folder's hidden subdirectories and
Markdown file names, and is kept in ``DiscoveryContext.tree_cache`` until the engine is
told the tree changed (``Engine.invalidate_scans``). Inside a git repository the walk
skips the directories ``.gitignore`` ignores (vendored copies, build output), as git
does. Whether a marker still exists is checked on every call, so a deleted one
disappears at once.
"""

from __future__ import annotations

import os
import stat

from rules_core.discovery.ignore import IgnoreStack
from rules_core.discovery.listing import NEVER_SCANNED
from rules_core.model import DiscoveryContext
from rules_core.discovery.observe import depends_on

MAX_DEPTH = 6
# Files a folder-scoped source can look for are Markdown: only those names are kept, so
# a 100k-file monorepo costs a few thousand strings, not a hundred thousand.
_KEPT_SUFFIX = ".md"


class _Folder:
    __slots__ = ("depth", "relative", "hidden", "files")

    def __init__(self, depth: int, relative: str, hidden: frozenset[str], files: frozenset[str]) -> None:
        self.depth = depth
        self.relative = relative  # cwd-relative, "/"-separated
        self.hidden = hidden  # names of its real hidden subdirectories
        self.files = files  # names of its Markdown files, links named like one included


def folders_owning(context: DiscoveryContext, marker: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative folder) of every folder at most ``MAX_DEPTH`` segments below
    cwd that owns a real (not symlinked) ``<marker>/rules`` directory; shallow first, then
    lexicographic. Never through ``node_modules``, hidden or symlinked directories."""
    found = [
        (depth, relative)
        for depth, relative in folders_with_hidden(context, marker)
        if _real_directory(os.path.join(context.cwd, relative, marker, "rules"))
    ]
    return sorted(found)


def folders_with_hidden(context: DiscoveryContext, marker: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative folder) of the folders whose walk saw a real hidden ``marker``
    subdirectory, kept with the walk: a warm discovery then checks a handful of folders,
    not the thousands a monorepo has."""
    cache = context.tree_cache
    key = ("owners", context.cwd, marker)
    if cache is not None and key in cache:
        return cache[key]
    owners = [(f.depth, f.relative) for f in _folders(context) if marker in f.hidden]
    if cache is not None:
        cache[key] = owners
    return owners


def folders_holding(context: DiscoveryContext, name: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative folder) of every walked folder holding a Markdown file
    ``name``, as of the walk; shallow first, then lexicographic. A symbolic link named
    ``name`` counts (``CLAUDE.md -> AGENTS.md`` is the usual layout): its target is not
    looked at here — the source resolves it inside the project, which refuses one that
    leads out, and discovery merges it with the file it names (``rules_core.discovery.aliases``)."""
    if not name.endswith(_KEPT_SUFFIX):
        raise ValueError(f"the tree walk keeps only {_KEPT_SUFFIX} file names, not {name!r}")
    cache = context.tree_cache
    key = ("holding", context.cwd, name)
    if cache is not None and key in cache:
        return cache[key]
    holders = sorted((f.depth, f.relative) for f in _folders(context) if name in f.files)
    if cache is not None:
        cache[key] = holders
    return holders


def _folders(context: DiscoveryContext) -> list[_Folder]:
    cache = context.tree_cache
    key = ("tree", context.cwd, context.git_root)
    if cache is not None and key in cache:
        return cache[key]
    ignores = IgnoreStack(context.cwd, context.git_root) if context.git_root is not None else None
    folders: list[_Folder] = []
    if ignores is None or not ignores.root_excluded:
        _walk(context.cwd, "", 0, ignores, folders)
    if cache is not None:
        cache[key] = folders
        cache[("ignore-skipped", context.cwd, context.git_root)] = tuple(ignores.skipped if ignores else ())
    return folders


def skipped_ignore_files(context: DiscoveryContext) -> tuple[str, ...]:
    """The ``.gitignore`` files the last walk of cwd did not apply (over the caps of
    ``rules_core.discovery.ignore``); empty when no walk happened."""
    cache = context.tree_cache or {}
    return cache.get(("ignore-skipped", context.cwd, context.git_root), ())


def _walk(cwd: str, relative: str, depth: int, ignores: IgnoreStack | None, out: list[_Folder]) -> None:
    """Depth-first (the ignore files in force form a stack); each directory listed once."""
    directory = os.path.join(cwd, relative) if relative else cwd
    names, hidden, files, has_ignore_file = _list(directory)
    if depth:
        out.append(_Folder(depth, relative, hidden, files))
    if depth == MAX_DEPTH:
        return
    pushed = ignores is not None and has_ignore_file and ignores.push_dir(directory, relative)
    for name in names:
        child = f"{relative}/{name}" if relative else name
        if ignores is not None and ignores.excluded(child, True):
            continue
        _walk(cwd, child, depth + 1, ignores, out)
    if pushed:
        ignores.pop()  # type: ignore[union-attr]


def _list(directory: str) -> tuple[list[str], frozenset[str], frozenset[str], bool]:
    """Real visible subdirectories worth descending, the real hidden ones' names, the
    names of the Markdown files and of links named like one, and whether a
    ``.gitignore`` is there."""
    names: list[str] = []
    hidden: set[str] = set()
    files: set[str] = set()
    has_ignore_file = False
    depends_on(directory)  # for the persistent cache (rules_core.discovery.observe)
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        if entry.name.endswith(_KEPT_SUFFIX) and (
                                entry.is_file(follow_symlinks=False) or entry.is_symlink()):
                            files.add(entry.name)
                        has_ignore_file = has_ignore_file or entry.name == ".gitignore"
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
    return sorted(names), frozenset(hidden), frozenset(files), has_ignore_file


def _real_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def walked_tree(context: DiscoveryContext) -> dict[str, object] | None:
    """What the sources asked of the walk of cwd, as JSON data (for
    ``rules_core.discovery.persistent``): each marker's owners, each file name's holders, the
    skipped ignore files; ``None`` if cwd was not walked. The folders themselves are not
    kept: thousands of them, and a warm discovery asks only these answers."""
    cache = context.tree_cache or {}
    if ("tree", context.cwd, context.git_root) not in cache:
        return None
    answers: dict[str, dict[str, list[list[object]]]] = {"owners": {}, "holding": {}}
    for key, value in cache.items():
        if isinstance(key, tuple) and len(key) == 3 and key[0] in answers and key[1] == context.cwd:
            answers[key[0]][key[2]] = [[depth, relative] for depth, relative in value]
    skipped = list(cache.get(("ignore-skipped", context.cwd, context.git_root), ()))
    return {**answers, "skipped": skipped}


def restore_tree(context: DiscoveryContext, value: object) -> bool:
    """Put kept answers (``walked_tree``'s data) back into the tree cache, if well-formed."""
    if context.tree_cache is None or not (isinstance(value, dict) and set(value) == {"owners", "holding", "skipped"}):
        return False
    skipped = value["skipped"]
    if not isinstance(skipped, list) or not all(isinstance(p, str) and os.path.isabs(p) for p in skipped):
        return False
    restored: dict[object, object] = {}
    for kind in ("owners", "holding"):
        table = value[kind]
        if not isinstance(table, dict):
            return False
        for name, rows in table.items():
            if not (_names([name]) and isinstance(rows, list) and all(_row(r) for r in rows)):
                return False
            restored[(kind, context.cwd, name)] = [(r[0], r[1]) for r in rows]
    context.tree_cache.update(restored)
    context.tree_cache[("ignore-skipped", context.cwd, context.git_root)] = tuple(skipped)
    return True


def _row(row: object) -> bool:
    return (isinstance(row, list) and len(row) == 2 and type(row[0]) is int and 0 < row[0] <= MAX_DEPTH
            and _relative(row[1]))


def _relative(value: object) -> bool:
    return isinstance(value, str) and bool(value) and not value.startswith("/") and ".." not in value.split("/")


def _names(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(n, str) and n and "/" not in n for n in value)
