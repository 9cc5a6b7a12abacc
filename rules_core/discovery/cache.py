"""The discovery cache (parsed files by mtime) and the exists-scan cache (RULE-SPEC §5).

Every cache here is bounded: ``FileCache`` by what one discovery lists (it forgets the
rest), ``ScanCache`` by a fixed number of entries, oldest dropped first (the listing
cache lives with the listing code, ``listing.py``). A long-lived engine (``pi-rules serve``, an editor host) therefore cannot grow
without limit whatever directories it is asked about.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence

from rules_core.discovery.containment import Containment, Unresolved
from rules_core.discovery.reading import Repaired, file_signature, read_rule_text
from rules_core.model import ParseResult, RuleError, RuleFile, RuleWarning
from rules_core.model.places import position

Parser = Callable[[RuleFile, str], ParseResult]

MAX_SCAN_ROOTS = 256  # distinct rule bases with a cached exists scan (a monorepo has ~100)


def evict_oldest(mapping: dict[Any, Any], cap: int) -> None:
    """Drop the oldest entries (insertion order) until ``mapping`` holds at most ``cap``."""
    while len(mapping) > cap:
        del mapping[next(iter(mapping))]


def add_bounded(mapping: dict[Any, None], keys: Iterable[Any], cap: int) -> None:
    """Add the ``keys`` not yet present, in order, dropping the oldest beyond ``cap`` as
    it goes: a deterministic fold, so replaying the same keys rebuilds the same mapping."""
    for key in keys:
        if key not in mapping:
            mapping[key] = None
            if len(mapping) > cap:
                del mapping[next(iter(mapping))]


class FileCache:
    """Parsed rule files, reused while the file's (mtime, size, inode) is unchanged.

    A vanished file is dropped; a changed one is re-read and re-parsed. The entry is
    also keyed by the ``RuleFile`` itself, so a file seen by another source is parsed
    for that source.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[int, int, int], RuleFile, ParseResult | None, _Signatures]] = {}
        # Listed project path -> the physical file it resolved to at its last load: two
        # names of one file are one rule (rules_core.discovery.aliases).
        self.physical: dict[str, str] = {}

    def load(self, rule_file: RuleFile, parse: Parser, contain: Containment | None = None,
             lossy: bool = False) -> ParseResult | None:
        """The parse result, or ``None`` when the file vanished (skipped silently).

        With ``contain`` (a project file) the path is resolved inside the git root first:
        a file reached through a link that leads out is reported and never opened. With
        ``lossy`` (its tool reads damaged text) invalid UTF-8 is parsed as U+FFFD and the
        result carries an ``invalid-utf8`` warning.
        """
        path, signature = rule_file.path, None
        if contain is not None:
            found = contain.resolve(rule_file.path)
            if found is None:
                self._entries.pop(rule_file.path, None)
                return None
            if isinstance(found, Unresolved):
                self._entries.pop(rule_file.path, None)
                return _failed(rule_file, found.message)
            path, info = found
            signature = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
            self.physical[rule_file.path] = path
        else:
            signature = file_signature(path)
        cached = self._entries.get(rule_file.path)
        if signature is not None and cached is not None:
            if cached[0] == signature and cached[1] == rule_file and _unchanged(cached[3]):
                return cached[2]
        text = read_rule_text(path, follow=contain is None, lossy=lossy)
        if text is None:
            self._entries.pop(rule_file.path, None)
            return None
        if isinstance(text, RuleError):
            result = _failed(rule_file, text.message)
        elif isinstance(text, Repaired):
            result = _with_repair_warning(rule_file, parse(rule_file, text.text), text)
        else:
            result = parse(rule_file, text)
        if signature is not None:
            depends = tuple((p, file_signature(p)) for p in (result.depends if result is not None else ()))
            self._entries[rule_file.path] = (signature, rule_file, result, depends)
        return result

    def __len__(self) -> int:
        return len(self._entries)

    def retain(self, paths: set[str]) -> None:
        """Forget files no source listed this cycle, so the cache cannot grow without bound."""
        for path in [p for p in self._entries if p not in paths]:
            del self._entries[path]
        for path in [p for p in self.physical if p not in paths]:
            del self.physical[path]


def _with_repair_warning(rule_file: RuleFile, result: ParseResult | None, repaired: Repaired) -> ParseResult | None:
    if result is None:
        return None
    more = f" and {repaired.count - 1} more" if repaired.count > 1 else ""
    first = repaired.text.find("\ufffd")  # the first replaced sequence (a real U+FFFD before it is rare)
    line, column = position(repaired.text, first) if first >= 0 else (None, None)
    warning = RuleWarning("invalid-utf8", rule_file.path, (
        f"not valid UTF-8 (byte {repaired.offset}{more}); read as its tool reads it, each invalid sequence "
        "replaced by U+FFFD — save the file as UTF-8"
    ), rule_file.plugin, line, column)
    return dataclasses.replace(result, warnings=(*result.warnings, warning))


_Signatures = tuple[tuple[str, "tuple[int, int, int] | None"], ...]


def _unchanged(depends: _Signatures) -> bool:
    """Whether every file a parse was built from (imports) is as it was then."""
    return all(file_signature(path) == signature for path, signature in depends)


class ScanCache:
    """Exists-scan answers per (root, query set); frozen snapshots, errors never cached."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, tuple[tuple[str, ...], ...]], Mapping[tuple[str, ...], str | None]] = {}

    def get(
        self,
        root: str,
        queries: tuple[tuple[str, ...], ...],
        git_root: str | None,
        scan: Callable[[str, Sequence[tuple[str, ...]], str | None], Mapping[tuple[str, ...], str | None]],
    ) -> Mapping[tuple[str, ...], str | None]:
        key = (root, queries)
        cached = self._entries.get(key)
        if cached is None:
            raw = scan(root, queries, git_root)  # an exception propagates and caches nothing
            cached = MappingProxyType({q: raw.get(q) for q in queries})
            # One query set per root is current; older sets are dead weight.
            self._entries = {k: v for k, v in self._entries.items() if k[0] != root}
            self._entries[key] = cached
            evict_oldest(self._entries, MAX_SCAN_ROOTS)
        return cached

    def __len__(self) -> int:
        return len(self._entries)

    def invalidate(self) -> None:
        """A write/edit/bash result may have changed which paths exist."""
        self._entries.clear()


def _failed(rule_file: RuleFile, message: str) -> ParseResult:
    """A read failure named by the path the source listed (a link's own), not the target."""
    return ParseResult(None, (RuleError("read-failure", rule_file.path, message, rule_file.plugin),))
