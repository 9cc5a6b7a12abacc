"""The ``scanner`` plugin: which files exist for ``exists``/``both`` rules (RULE-SPEC §5).

One walk per evaluation (the engine caches it per pattern set). Files only; ``.git`` and
``node_modules`` are never entered, symlinked directories never followed, ``.gitignore``
is not consulted. Each pattern's literal directory prefix prunes the walk, so
``src/**/*.ts`` never lists ``docs/``.
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

from rules_core import hookimpl
from rules_core.fs import NEVER_SCANNED
from rules_core.globs import Glob, GlobError, compile_glob, literal_prefix


# A group: the globs sharing one literal prefix, bucketed by the extension of their
# literal tail ("*" for tails without one). Only buckets for a file's own extension are
# tried, and only globs whose tail ends the path reach a regex.
_Bucket = list[tuple[str, list[tuple[str, Glob]]]]


@hookimpl(trylast=True)
def pi_rules_scan(root: str, patterns: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {p: [] for p in patterns}
    groups: dict[str, dict[str, dict[str, list[tuple[str, Glob]]]]] = {}
    for pattern in patterns:
        if pattern.startswith("/") or pattern.startswith("../"):
            continue  # outside the scanned tree: absolute globs are not walked
        try:
            glob = compile_glob(pattern)
        except GlobError:
            continue
        tail = _literal_tail(pattern)
        ext = tail[tail.rfind(".") :] if "." in tail else "*"
        buckets = groups.setdefault(literal_prefix(pattern), {})
        buckets.setdefault(ext, {}).setdefault(tail, []).append((pattern, glob))
    indexes = {
        prefix: {ext: list(tails.items()) for ext, tails in buckets.items()}
        for prefix, buckets in groups.items()
    }
    for start in _walk_roots(indexes):
        for rel_dir, names in _directories_below(root, start):
            active = [index for prefix, index in indexes.items() if _covers(prefix, rel_dir)]
            base = rel_dir + "/" if rel_dir else ""
            for name in names:
                rel = base + name
                dot = name.rfind(".")
                ext = name[dot:] if dot >= 0 else ""
                for index in active:
                    for bucket in (index.get(ext), index.get("*")):
                        if bucket:
                            _match_bucket(bucket, rel, found)
    for paths in found.values():
        paths.sort()
    return found


def _match_bucket(bucket: _Bucket, rel: str, found: dict[str, list[str]]) -> None:
    for tail, globs in bucket:
        if rel.endswith(tail):
            for pattern, glob in globs:
                if glob.match_normalized(rel):
                    found[pattern].append(rel)


def _covers(prefix: str, rel_dir: str) -> bool:
    """Whether files directly in ``rel_dir`` can match globs with this literal prefix."""
    return not prefix or rel_dir == prefix or rel_dir.startswith(prefix + "/")


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


def _directories_below(root: str, start: str) -> Iterator[tuple[str, list[str]]]:
    """(directory relative to root, the file names directly in it) for every directory."""
    if start and os.path.isfile(os.path.join(root, start)):
        # 'src/**' matches a file named 'src' too: report it from its parent.
        parent, _, name = start.rpartition("/")
        yield parent, [name]
        return
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
        names = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in NEVER_SCANNED:
                        pending.append(prefix + entry.name)
                elif entry.is_file():
                    names.append(entry.name)
            except OSError:
                continue
        yield rel_dir, names
