"""The ``nested`` source: ``.pi/rules`` directories below cwd (RULE-SPEC §1).

One bounded, breadth-first search (cached until ``Engine.invalidate_scans``): a rule base at most ``MAX_DEPTH`` directory segments
below cwd (``packages/b`` is 2), never into ``.git``, ``node_modules`` or ``.pi``, never
through a symlinked directory — so never outside cwd. Shallow bases come first,
lexicographic within a depth, whatever the filesystem's enumeration order. Hidden
directories (``.venv``, ``.cache``, ``.github`` …) are not searched either.
"""

from __future__ import annotations

import os

from rules_core import hookimpl
from rules_core.fs import NEVER_SCANNED, list_rule_files
from rules_core.model import ORDER_NESTED, DiscoveryContext, RuleError, RuleFile

from .native import is_markdown

MAX_DEPTH = 6


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not context.trusted:
        return []
    found: list[RuleFile | RuleError] = []
    for depth, relative_base in _cached_bases(context):
        base = os.path.join(context.cwd, relative_base)
        found.extend(
            list_rule_files(
                os.path.join(base, ".pi", "rules"),
                accept=is_markdown,
                plugin="nested",
                schema="v1",
                source="project",
                base=base,
                cache=context.listing_cache,
                group=ORDER_NESTED,
                rank=depth,
                scope=relative_base,
            )
        )
    return found


def _cached_bases(context: DiscoveryContext) -> list[tuple[int, str]]:
    """The search walks every directory up to six levels down — on a monorepo far more
    than the rest of discovery — so its result is kept until the engine is told the tree
    changed. Rules inside the bases found are still re-listed every cycle."""
    cache = context.tree_cache
    key = ("nested", context.cwd)
    if cache is not None and key in cache:
        return cache[key]
    bases = find_nested_bases(context.cwd)
    if cache is not None:
        cache[key] = bases
    return bases


def find_nested_bases(cwd: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative base) of every directory below cwd owning a real ``.pi/rules``.

    Each directory is listed once: its listing yields both its subdirectories and
    whether it owns a ``.pi`` directory.
    """
    bases: list[tuple[int, str]] = []
    level, _ = _list(cwd)
    for depth in range(1, MAX_DEPTH + 1):
        next_level: list[str] = []
        for relative in level:
            subdirectories, owns_pi = _list(os.path.join(cwd, relative))
            if owns_pi and _owns_rules(os.path.join(cwd, relative)):
                bases.append((depth, relative))
            if depth < MAX_DEPTH:
                next_level.extend(f"{relative}/{name}" for name in subdirectories)
        level = next_level
    return sorted(bases)


def _list(directory: str) -> tuple[list[str], bool]:
    """Sorted real subdirectories worth descending, and whether a real ``.pi`` is here."""
    names: list[str] = []
    owns_pi = False
    try:
        with os.scandir(directory) as it:
            for entry in it:
                if not _is_real_directory(entry):
                    continue
                if entry.name == ".pi":
                    owns_pi = True
                elif not entry.name.startswith(".") and entry.name not in NEVER_SCANNED:
                    # Hidden directories (.git, .venv, .cache, other tools' config) hold
                    # no packages, and can be huge: the search never enters them.
                    names.append(entry.name)
    except OSError:
        pass  # unlistable below cwd: nothing nested can be found there
    return sorted(names), owns_pi


def _is_real_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _owns_rules(base: str) -> bool:
    """``<base>/.pi/rules`` is a real directory (not a symlink)."""
    rules_dir = os.path.join(base, ".pi", "rules")
    try:
        return os.path.isdir(rules_dir) and not os.path.islink(rules_dir)
    except (OSError, ValueError):
        return False
