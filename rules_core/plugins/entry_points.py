"""Installed entry points, remembered across processes.

Asking ``importlib_metadata`` for one group imports it (and ``email``, ``zipfile`` …) and
reads every installed distribution's metadata: tens of milliseconds, paid by every hook
process. The answer depends only on what is installed on ``sys.path``, so it is kept in
the cache directory (``rules_core.discovery.persistent``, files as in ``rules_core.discovery.cache_files``) with a signature of every ``sys.path``
entry and of every distribution's ``entry_points.txt`` there; any install, upgrade,
removal or edit changes the signature and the groups are read afresh. A kept file is
hostile input like any cache file: size-capped, plain JSON, every field checked.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from rules_core.discovery.cache_files import encode, own_directory, read_json, write_atomically
from rules_core.discovery.persistent import cache_directory

FORMAT, VERSION = "pi-rules-entry-points", 1
MAX_ENTRY_POINTS = 4096
_PATTERN = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_METADATA_SUFFIXES = (".dist-info", ".egg-info")


@dataclass(frozen=True)
class KeptDistribution:
    name: str
    version: str


@dataclass(frozen=True)
class KeptEntryPoint:
    """What pi-rules uses of an ``importlib.metadata.EntryPoint``, loaded the same way."""

    name: str
    value: str
    group: str
    dist: KeptDistribution | None

    @property
    def module(self) -> str:
        match = _PATTERN.match(self.value)
        return match.group("module") if match else self.value

    @property
    def attr(self) -> str:
        match = _PATTERN.match(self.value)
        return (match.group("attr") or "") if match else ""

    def load(self) -> Any:
        found: Any = importlib.import_module(self.module)
        for part in filter(None, self.attr.split(".")):
            found = getattr(found, part)
        return found


def entry_points(group: str, read: Callable[[str], Iterable[Any]], env: Mapping[str, str] | None = None) -> list[Any]:
    """The group's entry points: kept ones while nothing installed changed, else
    ``read(group)`` (kept for next time)."""
    directory = cache_directory(os.environ if env is None else env)
    if directory is None:
        return list(read(group))
    name = hashlib.sha1(json.dumps(["entry-points", sys.executable, sys.path]).encode()).hexdigest() + ".json"
    path = os.path.join(directory, name)
    signature = installed_signature()
    document = read_json(path)
    groups = _kept_groups(document, signature)
    if groups is not None and group in groups:
        return groups[group]
    found = list(read(group))
    groups = groups or {}
    groups[group] = [KeptEntryPoint(ep.name, ep.value, group, _distribution(ep)) for ep in found]
    _save(directory, name, signature, groups)
    return found


def installed_signature() -> str:
    """Each ``sys.path`` entry's own stat, and each distribution's ``entry_points.txt``."""
    parts: list[object] = [sys.version]
    for entry in sys.path:
        parts.append([entry, _stat(entry or ".")])
        try:
            with os.scandir(entry or ".") as listing:
                names = sorted(e.name for e in listing if e.name.endswith(_METADATA_SUFFIXES))
        except OSError:
            continue
        parts.extend([n, _stat(os.path.join(entry or ".", n, "entry_points.txt"))] for n in names)
    return hashlib.sha1(json.dumps(parts).encode()).hexdigest()


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_size]


def _kept_groups(document: Any, signature: str) -> dict[str, list[Any]] | None:
    if not isinstance(document, dict) or set(document) != {"format", "version", "signature", "groups"}:
        return None
    if (document["format"], document["version"], document["signature"]) != (FORMAT, VERSION, signature):
        return None
    raw = document["groups"]
    if not isinstance(raw, dict) or sum(len(v) for v in raw.values() if isinstance(v, list)) > MAX_ENTRY_POINTS:
        return None
    groups: dict[str, list[Any]] = {}
    for group, rows in raw.items():
        if not isinstance(rows, list):
            return None
        kept = []
        for row in rows:
            if not (isinstance(row, list) and len(row) == 4 and all(isinstance(x, str) for x in row[:2])):
                return None
            if not (row[2] is None and row[3] is None) and not all(isinstance(x, str) for x in row[2:]):
                return None
            if not _PATTERN.match(row[1]):
                return None
            dist = KeptDistribution(row[2], row[3]) if row[2] is not None else None
            kept.append(KeptEntryPoint(row[0], row[1], group, dist))
        groups[group] = kept
    return groups


def _distribution(ep: Any) -> KeptDistribution | None:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None
    return KeptDistribution(str(dist.name), str(dist.version))


def _save(directory: str, name: str, signature: str, groups: dict[str, list[Any]]) -> None:
    rows = {g: [[e.name, e.value, e.dist.name if e.dist else None, e.dist.version if e.dist else None]
                for e in eps] for g, eps in groups.items()}
    document = {"format": FORMAT, "version": VERSION, "signature": signature, "groups": rows}
    try:
        if own_directory(directory):
            write_atomically(directory, name, encode(document))
    except (OSError, ValueError, TypeError):
        pass  # not kept: the next process reads the metadata again
