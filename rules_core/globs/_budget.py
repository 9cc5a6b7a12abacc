"""Bounding what compiling a glob may cost and what the compile cache keeps (issue 14).

Translating a glob builds one regex per brace expansion and joins them, so a pattern's
text times its expansions is what compiling it costs: ``{a,b}`` x 9 before 12,000
characters built 512 variants of 12 KB, ~6 MB of regex, 10 s and 0.6 GB, and the
compile cache kept it. :func:`expansion_problem` refuses such a pattern before any
variant is built; :class:`BoundedCache` keeps the cache bounded by the regex text it holds,
not only by its number of entries (rules_core.discovery.ignore uses it too). docs/globs.md
("Invalid patterns") says what users see.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Hashable, TypeVar

import bracex  # wcmatch's brace expander, asked to count before it builds anything

EXPANSION_LIMIT = 1000  # patterns; wcmatch's default, a bigger brace product is a mistake
# Characters brace expansion may build for one pattern (its text x its expansions). The
# longest plain pattern (65,536 characters) costs the same, about 1 s to compile.
EXPANSION_BUDGET = 65536
# Characters of regex one glob may compile to. Compiling costs ~2 us a character (re's
# parser is Python); wcmatch writes each `**` as ~45 characters, so `**/a/` x 3,000 made
# 2 MB and 6 s. The longest plain pattern makes 131,072; `*.{ts,tsx}` makes 250.
REGEX_BUDGET = 262144
# bracex recurses per brace group and, from a group with `..`, scans ahead to the end:
# 6,000 groups raised RecursionError, 21,000 unclosed `{..` took 19 s. Counting the
# expansions costs that parse, so the groups are capped before it.
MAX_BRACE_GROUPS = 32
_BRACE_OR_ESCAPE = re.compile(r"\\.|\{", re.S)


def expansion_problem(variants: list[str]) -> str | None:
    """Why brace expansion may not run on the rewritten pattern ``variants``: more than
    EXPANSION_LIMIT patterns, or more than EXPANSION_BUDGET characters in all. bracex
    counts the expansions first and raises past its ``limit`` before building one."""
    groups = sum(1 for m in _BRACE_OR_ESCAPE.finditer(variants[0]) if m.group() == "{")
    if groups > MAX_BRACE_GROUPS:
        return f"brace expansion of more than {MAX_BRACE_GROUPS} groups {{...}} is refused; split the glob"
    size = sum(map(len, variants))
    fits = EXPANSION_BUDGET // max(size, 1)  # `""` rewrites to nothing
    if not fits:  # a class becomes `@(\[x\]|[x])`: a pattern can grow once rewritten
        return f"the glob is longer than {EXPANSION_BUDGET:,} characters once rewritten; shorten it"
    limit = min(fits, EXPANSION_LIMIT)
    if not _expands_past(variants, limit):
        return None
    if limit == EXPANSION_LIMIT or _expands_past(variants, EXPANSION_LIMIT):
        return f"brace expansion yields more than {EXPANSION_LIMIT} patterns"
    return (f"brace expansion would build more than {EXPANSION_BUDGET:,} characters (over {limit} "
            f"patterns of {size:,}); use fewer braces or a shorter glob")


def _expands_past(variants: list[str], limit: int) -> bool:
    try:
        for variant in variants:
            next(bracex.iexpand(variant, keep_escapes=True, limit=limit), None)
    except bracex.ExpansionLimitException:
        return True
    except Exception:  # noqa: BLE001 - wcmatch, too, falls back to the unexpanded text
        pass
    return False


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A least-recently-used cache of ``build`` bounded by entries AND by the summed
    ``weight`` of its values (one compiled glob, or one ignore file, can hold a megabyte).
    Thread-safe; a value heavier than the whole budget is returned and not kept."""

    def __init__(self, build: Callable[..., V], weight: Callable[[V], int], entries: int, budget: int) -> None:
        self.__wrapped__ = build  # callers (tests, benchmarks) reach the uncached function here
        self.weight, self.entries, self.budget = weight, entries, budget
        self.held = 0
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, *key: K) -> V:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = self.__wrapped__(*key)
        with self._lock:
            if key not in self._values:
                self._values[key] = value
                self.held += self.weight(value)
            while self._values and (len(self._values) > self.entries or self.held > self.budget):
                self.held -= self.weight(self._values.popitem(last=False)[1])
        return value

    def __len__(self) -> int:
        return len(self._values)

    def cache_clear(self) -> None:
        with self._lock:
            self._values.clear()
            self.held = 0
