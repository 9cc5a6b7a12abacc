"""The discovery cache (parsed files by mtime) and the exists-scan cache (RULE-SPEC §5)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from .fs import file_signature, read_rule_text
from .model import ParseResult, RuleError, RuleFile

Parser = Callable[[RuleFile, str], ParseResult]


class FileCache:
    """Parsed rule files, reused while the file's (mtime, size, inode) is unchanged.

    A vanished file is dropped; a changed one is re-read and re-parsed. The entry is
    also keyed by the ``RuleFile`` itself, so a file seen by another source is parsed
    for that source.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[int, int, int], RuleFile, ParseResult | None]] = {}

    def load(self, rule_file: RuleFile, parse: Parser) -> ParseResult | None:
        """The parse result, or ``None`` when the file vanished (skipped silently)."""
        signature = file_signature(rule_file.path)
        cached = self._entries.get(rule_file.path)
        if signature is not None and cached is not None:
            if cached[0] == signature and cached[1] == rule_file:
                return cached[2]
        text = read_rule_text(rule_file.path)
        if text is None:
            self._entries.pop(rule_file.path, None)
            return None
        if isinstance(text, RuleError):
            result = ParseResult(None, (_with_plugin(text, rule_file.plugin),))
        else:
            result = parse(rule_file, text)
        if signature is not None:
            self._entries[rule_file.path] = (signature, rule_file, result)
        return result

    def retain(self, paths: set[str]) -> None:
        """Forget files no source listed this cycle, so the cache cannot grow without bound."""
        for path in [p for p in self._entries if p not in paths]:
            del self._entries[path]


class ScanCache:
    """Exists-scan results per (root, pattern set); frozen snapshots, errors never cached."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, tuple[str, ...]], Mapping[str, tuple[str, ...]]] = {}

    def get(
        self,
        root: str,
        patterns: tuple[str, ...],
        scan: Callable[[str, Sequence[str]], Mapping[str, Sequence[str]]],
    ) -> Mapping[str, tuple[str, ...]]:
        key = (root, patterns)
        cached = self._entries.get(key)
        if cached is None:
            raw = scan(root, patterns)  # an exception propagates and caches nothing
            cached = MappingProxyType({p: tuple(raw.get(p, ())) for p in patterns})
            # One pattern set per root is current; older sets are dead weight.
            self._entries = {k: v for k, v in self._entries.items() if k[0] != root}
            self._entries[key] = cached
        return cached

    def invalidate(self) -> None:
        """A write/edit/bash result may have changed which paths exist."""
        self._entries.clear()


def _with_plugin(error: RuleError, plugin: str) -> RuleError:
    return RuleError(error.kind, error.path, error.message, error.plugin or plugin)
