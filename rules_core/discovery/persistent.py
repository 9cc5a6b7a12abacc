"""The persistent cache: what the tree walk and the exists scans learnt, kept across
processes and never trusted (docs/performance.md, "Hook calls").

A hook host starts one process per event; without this each one walks the project
again. One JSON file per project (and per plugin/code fingerprint) lives under
``$XDG_CACHE_HOME/pi-rules/`` (default ``~/.cache/pi-rules/``), is never read from the
project, and holds answers together with the stat signature of every path each answer
depended on (``rules_core.discovery.observe``). An answer is reused only while every one of those
signatures is unchanged, so it is never stale. The file is hostile input: size-capped
before parsing, plain JSON (nothing in it can run code), every field type-checked, every
path inside the project; anything wrong and it is ignored and rebuilt. It is written to a
temporary file and renamed, so a process killed mid-write leaves the old file or none.
``PI_RULES_CACHE=off`` turns it off. Untrusted projects never use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from rules_core.discovery.cache_files import (
    MAX_FILE_BYTES,
    encode,
    own_directory,
    prune,
    read_json,
    write_atomically,
)
from rules_core.discovery.observe import Observation, Signature, observing, signature

CACHE_ENV = "PI_RULES_CACHE"
FORMAT, VERSION = "pi-rules-cache", 2  # 2: the tree walk keeps links named like a memory file
MAX_ENTRIES = 1024  # answers per project file
MAX_PATHS = 500_000  # stat signatures per project file
MAX_STORES = 8  # projects one long-lived engine keeps open
# A path changed this recently may change again within the same timestamp tick without
# its signature moving ("racy git"): an answer that depends on one is not kept.
RACY_NS = 1_000_000_000
# Core modules whose code decides what a walk answers: a change to any of them (an
# upgrade, an edit to an editable install) starts a new file.
_CORE_MODULES = ("tree", "ignore", "_wildmatch", "globs", "listing", "containment", "observe", "persistent",
                 "cache_files")


def now_ns() -> int:
    """The time the racy rule compares signatures with: the wall clock. A name of its own
    so a test can move it forward past ``RACY_NS`` instead of sleeping until its tree
    has settled (tests/suite_helpers.py ``settle_racy_clock``)."""
    return time.time_ns()


Scan = Callable[[str, Sequence[tuple[str, ...]], "str | None"], Mapping[tuple[str, ...], "str | None"]]


def cache_directory(env: Mapping[str, str]) -> str | None:
    """``$XDG_CACHE_HOME/pi-rules`` (an absolute value only, as the XDG spec says), else
    ``$HOME/.cache/pi-rules``; ``None`` when off (``PI_RULES_CACHE=off``) or unplaceable."""
    if env.get(CACHE_ENV, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    base = env.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = env.get("HOME", "")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "pi-rules")


class Persistent:
    """One engine's view of the cache: a ``Store`` per project, opened on first use."""

    def __init__(self, env: Mapping[str, str], plugins: Callable[[], Iterable[tuple[str, object]]]) -> None:
        self.directory = cache_directory(env)
        self._plugins = plugins
        self._fingerprint: str | None = None
        self._stores: dict[tuple[str, str], Store] = {}
        self.stats = {"hits": 0, "misses": 0, "stored": 0, "rejected": 0, "saves": 0}

    def store(self, cwd: str, bound: str | None, trusted: bool) -> Store | None:
        """The store for ``cwd`` (paths confined to ``bound``); ``None`` when off or untrusted."""
        if self.directory is None or not trusted:
            return None
        bound = bound or cwd
        key = (cwd, bound)
        found = self._stores.get(key)
        if found is None:
            if self._fingerprint is None:
                self._fingerprint = _fingerprint(self._plugins())
            name = hashlib.sha1(json.dumps([cwd, bound, self._fingerprint]).encode()).hexdigest() + ".json"
            found = self._stores[key] = Store(self.directory, name, cwd, bound, self._fingerprint, self.stats)
            while len(self._stores) > MAX_STORES:
                del self._stores[next(iter(self._stores))]
        return found

    def cached_scan(self, cwd: str, bound: str | None, trusted: bool, scan: Scan) -> Scan:
        """``scan`` answered from the store while the walked directories are unchanged."""
        store = self.store(cwd, bound, trusted)
        if store is None:
            return scan

        def run(root: str, queries: Sequence[tuple[str, ...]], git_root: str | None) -> Mapping[tuple[str, ...], str | None]:
            key = [root, git_root, [list(q) for q in queries]]
            answers = store.get("scan", key, lambda value: _scan_answers(value, queries))
            if answers is not None:
                return answers
            with observing() as seen:
                found = scan(root, queries, git_root)
            if "scanner" in seen.claims:  # the built-in walk answered: its paths are all it read
                store.put("scan", key, [found.get(q) for q in queries], seen)
            return found

        return run

    def flush(self) -> None:
        """Write every store that learnt something. Never raises."""
        for store in self._stores.values():
            if store.dirty:
                store.save()


class Store:
    """One project's file: answers by (kind, key), each with the signatures it needs."""

    def __init__(self, directory: str, name: str, cwd: str, bound: str, fingerprint: str, stats: dict[str, int]) -> None:
        self.directory, self.name, self.cwd, self.bound = directory, name, cwd, bound
        self.fingerprint, self.stats = fingerprint, stats
        self.entries: dict[str, tuple[Any, tuple[tuple[str, Signature | None], ...]]] = {}
        self.dirty = False
        self._loaded = False
        # Signatures taken since this project's last discovery began: each path is stat-ed
        # once per discovery and the evaluation after it, never reused beyond that.
        self.checked: dict[str, Signature | None] = {}

    def get(self, kind: str, key: object, accept: Callable[[Any], Any | None]) -> Any | None:
        """The kept answer as ``accept`` makes it from the file's data (``None``: malformed),
        if every path it depends on is as it was; else ``None``, and the entry is dropped."""
        self._load()
        entry_key = _entry_key(kind, key)
        entry = self.entries.get(entry_key)
        if entry is not None:
            value, paths = entry
            if all(_current(path, self.checked) == sig for path, sig in paths):
                accepted = accept(value)
                if accepted is not None:
                    self.stats["hits"] += 1
                    return accepted
            del self.entries[entry_key]
            self.dirty = True
        self.stats["misses"] += 1
        return None

    def count(self, kind: str) -> int:
        """How many answers of ``kind`` the store holds."""
        self._load()
        prefix = _entry_key(kind, None)[:-len("null]")]
        return sum(1 for key in self.entries if key.startswith(prefix))

    def put(self, kind: str, key: object, value: Any, seen: Observation) -> None:
        """Keep ``value`` unless the walk was unstable, left the project or is racy."""
        if seen.unstable or not all(_inside(p, self.bound) for p in seen.paths):
            return
        recent = now_ns() - RACY_NS
        if any(sig is not None and (sig[0] >= recent or sig[1] >= recent) for sig in seen.paths.values()):
            return
        self._load()
        self.entries.pop(_entry_key(kind, key), None)  # re-inserted as the newest
        self.entries[_entry_key(kind, key)] = (value, tuple(seen.paths.items()))
        while len(self.entries) > MAX_ENTRIES:
            del self.entries[next(iter(self.entries))]
        self.dirty = True
        self.stats["stored"] += 1

    # -- the file ------------------------------------------------------------------

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        document = read_json(os.path.join(self.directory, self.name))
        entries = self._valid_entries(document) if document is not None else None
        if entries is None:
            if document is not None:
                self.stats["rejected"] += 1
            return
        self.entries = entries

    def _valid_entries(self, doc: Any) -> dict[str, tuple[Any, tuple[tuple[str, Signature | None], ...]]] | None:
        """The entries of a well-formed file for this very project and code; else None."""
        if not isinstance(doc, dict) or set(doc) != {"format", "version", "fingerprint", "cwd", "bound",
                                                     "paths", "signatures", "entries"}:
            return None
        if (doc["format"], doc["version"], doc["fingerprint"], doc["cwd"], doc["bound"]) != (
                FORMAT, VERSION, self.fingerprint, self.cwd, self.bound):
            return None
        paths, sigs, raw = doc["paths"], doc["signatures"], doc["entries"]
        if not (isinstance(paths, list) and isinstance(sigs, list) and isinstance(raw, list)):
            return None
        if len(paths) != len(sigs) or len(paths) > MAX_PATHS or len(raw) > MAX_ENTRIES:
            return None
        if not all(_inside(p, self.bound) for p in paths) or not all(map(_valid_signature, sigs)):
            return None
        table = [(p, None if s is None else tuple(s)) for p, s in zip(paths, sigs)]
        entries: dict[str, tuple[Any, tuple[tuple[str, Signature | None], ...]]] = {}
        for item in raw:
            if not (isinstance(item, dict) and set(item) == {"key", "value", "paths"}):
                return None
            key, indexes = item["key"], item["paths"]
            if not isinstance(key, str) or not isinstance(indexes, list):
                return None
            if not all(type(i) is int and 0 <= i < len(table) for i in indexes):
                return None
            entries[key] = (item["value"], tuple(table[i] for i in indexes))  # type: ignore[misc]
        return entries

    def save(self) -> None:
        """Write the file atomically (temporary file, then rename). Never raises."""
        self.dirty = False
        try:
            if not own_directory(self.directory):
                return
            index: dict[str, int] = {}
            paths: list[str] = []
            sigs: list[Signature | None] = []
            entries = []
            for key, (value, depends) in self.entries.items():
                refs = []
                for path, sig in depends:
                    if path not in index:
                        index[path] = len(paths)
                        paths.append(path)
                        sigs.append(sig)
                    refs.append(index[path])
                entries.append({"key": key, "value": value, "paths": refs})
            document = {"format": FORMAT, "version": VERSION, "fingerprint": self.fingerprint, "cwd": self.cwd,
                        "bound": self.bound, "paths": paths, "signatures": sigs, "entries": entries}
            data = encode(document)
            if len(data) <= MAX_FILE_BYTES:
                write_atomically(self.directory, self.name, data)
                self.stats["saves"] += 1
            prune(self.directory)
        except (OSError, ValueError, TypeError, RecursionError):
            pass  # a cache that cannot be written is a slower run, never a failed one


def _current(path: str, checked: dict[str, Signature | None]) -> Signature | None:
    if path not in checked:
        checked[path] = signature(path)
    return checked[path]


def _entry_key(kind: str, key: object) -> str:
    return json.dumps([kind, key], separators=(",", ":"))


def _scan_answers(value: Any, queries: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], str | None] | None:
    """A kept scan's answers, one per query: ``None`` or a relative path inside the root."""
    if not isinstance(value, list) or len(value) != len(queries):
        return None
    for answer in value:
        if answer is not None and not (isinstance(answer, str) and _relative(answer)):
            return None
    return dict(zip(queries, value))


def _relative(path: str) -> bool:
    return bool(path) and "\0" not in path and not path.startswith("/") and ".." not in path.split("/")


def _inside(path: object, bound: str) -> bool:
    """An absolute, normalised path at or below ``bound`` (string tests only: thousands
    of paths are checked per load)."""
    if not isinstance(path, str) or "\0" in path:
        return False
    if path != bound and not path.startswith(bound.rstrip("/") + "/"):
        return False
    return not path.endswith("/") and "//" not in path and "/./" not in path and "/../" not in path \
        and not path.endswith(("/.", "/.."))


def _valid_signature(sig: object) -> bool:
    return sig is None or (isinstance(sig, list) and len(sig) == 4 and all(type(n) is int and n >= 0 for n in sig))


def _fingerprint(plugins: Iterable[tuple[str, object]]) -> str:
    """The plugins, and the code of them and of the core walks: any change, a new file."""
    parts: list[object] = [VERSION, sys.version]
    files = [getattr(sys.modules.get(f"rules_core.{m}"), "__file__", None) for m in _CORE_MODULES]
    for name, plugin in sorted(plugins, key=lambda p: p[0]):
        module = plugin if hasattr(plugin, "__file__") else sys.modules.get(type(plugin).__module__)
        parts.append(name)
        files.append(getattr(module, "__file__", None))
    for path in files:
        try:
            info = os.stat(path) if path else None
        except OSError:
            info = None
        parts.append([path, info.st_mtime_ns if info else None, info.st_size if info else None])
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()


def sources_with_kept_tree(store: Store | None, context: Any, sources: Callable[[Any], Any]) -> Any:
    """Run the sources with what they asked of the tree walk of cwd taken from ``store``
    while unchanged, and keep what a walk they made answered. ``context`` is the
    discovery's ``DiscoveryContext``."""
    from rules_core.discovery.tree import restore_tree, walked_tree  # the tree walk is discovery's, not every user's

    if store is not None:
        store.checked.clear()  # a new discovery: every signature is taken afresh
    tree_key = ("tree", context.cwd, context.git_root)
    if store is None or context.tree_cache is None or tree_key in context.tree_cache:
        return sources(context)
    key = [context.cwd, context.git_root]
    store.get("tree", key, lambda value: restore_tree(context, value) or None)
    with observing() as seen:  # a source asking what was not kept walks: keep that too
        result = sources(context)
    if tree_key in context.tree_cache:
        store.put("tree", key, walked_tree(context), seen)
    return result
