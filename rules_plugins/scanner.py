"""The ``scanner`` plugin: which files exist for ``exists``/``both`` rules (RULE-SPEC §5).

One walk per evaluation (the engine caches it per pattern set). Files only; ``.git`` and
``node_modules`` are never entered, symlinked directories never followed, ``.gitignore``
is not consulted. Each pattern's literal directory prefix prunes the walk, so
``src/**/*.ts`` never lists ``docs/``.
"""

from __future__ import annotations

import os
from typing import Sequence

from rules_core import hookimpl
from rules_core.fs import NEVER_SCANNED
from rules_core.globs import Glob, GlobError, compile_glob, literal_prefix


@hookimpl(trylast=True)
def pi_rules_scan(root: str, patterns: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {p: [] for p in patterns}
    # prefix -> literal tail -> globs. A file can only match a glob whose literal tail
    # (the text after its last magic character) ends the file's path, so one cheap
    # endswith() per distinct tail replaces most regex calls.
    groups: dict[str, dict[str, list[tuple[str, Glob]]]] = {}
    for pattern in patterns:
        if pattern.startswith("/") or pattern.startswith("../"):
            continue  # outside the scanned tree: absolute globs are not walked
        try:
            glob = compile_glob(pattern)
        except GlobError:
            continue
        tails = groups.setdefault(literal_prefix(pattern), {})
        tails.setdefault(_literal_tail(pattern), []).append((pattern, glob))
    for start in _walk_roots(groups):
        for rel in _files_below(root, start):
            for prefix, tails in groups.items():
                if prefix and not rel.startswith(prefix + "/"):
                    continue
                for tail, globs in tails.items():
                    if tail and not rel.endswith(tail):
                        continue
                    for pattern, glob in globs:
                        if glob.match_normalized(rel):
                            found[pattern].append(rel)
    for paths in found.values():
        paths.sort()
    return found


def _literal_tail(pattern: str) -> str:
    """The text after the pattern's last magic character: every match ends with it."""
    if pattern.startswith("!") or pattern.endswith("/"):
        return ""
    # Over-counting magic only shortens the tail, which is always safe.
    last_magic = max(pattern.rfind(c) for c in "*?[]{}()!+@|^$,<>\\")
    # Only the last segment: '**/' can match zero segments, so '/x' need not be there.
    return pattern[last_magic + 1 :].rsplit("/", 1)[-1]


def _walk_roots(by_prefix: dict[str, object]) -> list[str]:
    """The fewest directories whose walks cover every prefix ('' is the whole tree)."""
    roots: list[str] = []
    for prefix in sorted(by_prefix):
        if not any(prefix == r or r == "" or prefix.startswith(r + "/") for r in roots):
            roots.append(prefix)
    return roots


def _files_below(root: str, start: str) -> list[str]:
    if start and os.path.isfile(os.path.join(root, start)):
        return [start]  # 'src/**' matches a file named 'src' too
    files: list[str] = []
    pending = [start]
    while pending:
        rel_dir = pending.pop()
        directory = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue  # unlistable or vanished: the scan sees what it can
        prefix = rel_dir + "/" if rel_dir else ""
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in NEVER_SCANNED:
                        pending.append(prefix + entry.name)
                elif entry.is_file():
                    files.append(prefix + entry.name)
            except OSError:
                continue
    return files
