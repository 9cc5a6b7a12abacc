"""The ``scanner`` plugin: which files exist for ``exists``/``both`` rules (docs/scanning.md).

One sorted depth-first ``os.scandir`` walk answers every query: the first file found for
a query is its answer, the walk stops once all are answered, and directories that no
unanswered query can reach are never listed. Inside a git repository, git's ignore
rules apply (``rules_core.discovery.ignore``); ``.git`` and ``node_modules`` are never entered and
symlinked directories never followed. A symlink counts as a file only when it leads to a
regular file inside the bound (the git root, or ``root`` without one), resolved by
``Containment``, which never touches a target outside: a link out must not make a
rule's activation depend on a file outside the project (issue 14, attack 10).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Callable, Iterator, Sequence

from rules_core import hookimpl
from rules_core.discovery.containment import Containment
from rules_core.discovery.listing import NEVER_SCANNED
from rules_core.globs.matching import Glob, GlobError, compile_glob, last_segment, literal_prefix

from rules_core.deadline import check as check_deadline
from rules_core.discovery.ignore import IgnoreStack
from rules_core.discovery.observe import claim, depends_on, unstable

__all__ = ["pi_rules_scan", "present_files"]

# Over-counting magic only shortens a tail, which is always safe.
_TAIL_MAGIC = frozenset('*?[]{}()!@+|^$,<>\\"')
_BRACE_LIST = re.compile(r"\{([\w.-]+(?:,[\w.-]+)+)\}\Z")  # `{ts,tsx}` at the very end


@hookimpl(trylast=True)
def pi_rules_scan(
    root: str, queries: Sequence[tuple[str, ...]], git_root: str | None
) -> dict[tuple[str, ...], str | None]:
    answers: dict[tuple[str, ...], str | None] = {q: None for q in queries}
    claim("scanner")  # every directory listed below is reported (rules_core.discovery.persistent)
    try:
        _Scan(root, list(answers), git_root, answers).run()
    except (OSError, RecursionError, ValueError):
        unstable()  # a partial answer is never kept across processes
        # never raise: whatever was found before the fault stands
    return answers


def present_files(root: str, git_root: str | None) -> list[str]:
    """Every file the scan considers present, in scan (sorted) order; for tests and tools."""
    ignores = _ignores(root, git_root)
    if ignores is not None and ignores.root_excluded:
        return []
    return [
        f"{d}/{name}" if d else name
        for d, names in _walk(root, ignores, lambda _: True, _bound(root, git_root))
        for name in names
        if ignores is None or not ignores.excluded(f"{d}/{name}" if d else name, False)
    ]


class _Query:
    __slots__ = ("key", "negations", "globs")

    def __init__(self, key: tuple[str, ...], negations: list[Glob]) -> None:
        self.key, self.negations = key, negations
        self.globs: list[_Positive] = []


class _Positive:
    """One distinct positive glob and the unanswered queries that contain it."""

    __slots__ = ("glob", "group", "queries")

    def __init__(self, glob: Glob, group: _Group) -> None:
        self.glob, self.group = glob, group
        self.queries: list[_Query] = []


# (tail, head, positive): a file can only match if its name ends with tail and starts
# with head; both are plain string tests, far cheaper than the glob's regex.
_Filter = tuple[str, str, _Positive]


class _Group:
    """The positives sharing a literal prefix, bucketed by their tail's extension."""

    __slots__ = ("prefix", "parent", "live", "filters")

    def __init__(self, prefix: str) -> None:
        self.prefix, self.parent = prefix, prefix.rpartition("/")[0]
        self.live = 0  # positives that still have an unanswered query
        self.filters: dict[str, list[_Filter]] = {}  # extension, or "*" for tails without

    def reaches(self, d: str) -> bool:
        """Whether the walk must list directory ``d`` (root-relative) for this group."""
        p = self.prefix
        return not p or p == d or p.startswith(d + "/") or d.startswith(p + "/")

    def holds(self, d: str) -> bool:
        """Whether files directly in ``d`` can match (``src/**`` matches a file ``src``)."""
        p = self.prefix
        return not p or d == p or d.startswith(p + "/") or self.parent == d


class _Scan:
    def __init__(self, root: str, queries: list[tuple[str, ...]], git_root: str | None,
                 answers: dict[tuple[str, ...], str | None]) -> None:
        self.root, self.git_root, self.answers = root, git_root, answers
        self.groups: dict[str, _Group] = {}
        positives: dict[str, _Positive] = {}
        self.open = 0  # unanswered queries that can still match something
        for key in queries:
            query = _Query(key, [g for t in key if t.startswith("!") and (g := _compile(t[1:]))])
            for text in dict.fromkeys(t for t in key if not t.startswith("!")):
                if (pos := positives.get(text)) is None and (glob := _compile(text)):
                    prefix = literal_prefix(text)
                    group = self.groups.setdefault(prefix, _Group(prefix))
                    pos = positives[text] = _Positive(glob, group)
                    tails, head = _filters(text)
                    for tail in tails:
                        ext = tail[tail.rfind("."):] if "." in tail else "*"
                        group.filters.setdefault(ext, []).append((tail, head, pos))
                if pos is not None:
                    if not pos.queries:
                        pos.group.live += 1
                    pos.queries.append(query)
                    query.globs.append(pos)
            self.open += bool(query.globs)
        self.everywhere = sum(g.live for g in self.groups.values() if not g.prefix)

    def run(self) -> None:
        if not self.open:
            return  # nothing to look for: not even the root is listed
        ignores = _ignores(self.root, self.git_root)
        if ignores is not None and ignores.root_excluded:
            return
        last_dir: str | None = None
        by_ext: dict[str, list[_Filter]] = {}
        star: list[_Filter] = []
        for rel_dir, names in _walk(self.root, ignores, self._wanted, _bound(self.root, self.git_root)):
            if rel_dir != last_dir:  # a directory yields one run per subdirectory
                last_dir, base = rel_dir, rel_dir + "/" if rel_dir else ""
                groups = [g for g in self.groups.values() if g.live and g.holds(rel_dir)]
                star = [f for g in groups for f in g.filters.get("*", ())]
                by_ext = {}
                for g in groups:
                    for ext, filters in g.filters.items():
                        if ext != "*":
                            by_ext.setdefault(ext, list(star)).extend(filters)
            if not (star or by_ext):
                continue
            for name in names:
                dot = name.rfind(".")
                candidates = by_ext.get(name[dot:], star) if dot >= 0 else star
                if not candidates:
                    continue
                hits = [pos for tail, head, pos in candidates
                        if pos.queries and name.endswith(tail) and name.startswith(head)
                        and pos.glob.match_normalized(base + name)]
                if hits and self._take(hits, base + name, ignores):
                    return  # every query answered: stop the walk right here

    def _wanted(self, d: str) -> bool:
        return self.everywhere > 0 or any(g.live and g.reaches(d) for g in self.groups.values())

    def _take(self, hits: list[_Positive], path: str, ignores: IgnoreStack | None) -> bool:
        """Answer the queries ``path`` satisfies; True once none is left open."""
        if ignores is not None and ignores.excluded(path, False):
            return False  # asked only now: most files match no glob and never pay for it
        for pos in hits:
            for query in list(pos.queries):
                if not any(n.match_normalized(path) for n in query.negations):
                    self._answer(query, path)
        return not self.open

    def _answer(self, query: _Query, path: str) -> None:
        self.answers[query.key] = path
        self.open -= 1
        for pos in query.globs:
            pos.queries.remove(query)
            if not pos.queries:
                pos.group.live -= 1
                self.everywhere -= not pos.group.prefix


def _compile(text: str) -> Glob | None:
    """The compiled glob, or None when it is unusable (uncompilable, or outside root)."""
    if text.startswith(("/", "../")):
        return None  # absolute or above root: nothing a walk of root can find
    try:
        return compile_glob(text)
    except GlobError:
        return None


def _filters(pattern: str) -> tuple[list[str], str]:
    """``(tails, head)``: a match's name ends with one of ``tails`` and starts with ``head``.

    Tails come from the text after the last magic character; a final brace list of plain
    words (``*.{ts,tsx}``) gives one tail per word, plus the pattern's own last segment
    (picomatch also matches a path equal to the pattern text). The head is the literal
    start of the last segment (``.env*``) when that segment is surely the name's.
    """
    last = pattern.rpartition("/")[2]
    tails = [_literal_tail(pattern)]
    if (m := _BRACE_LIST.search(pattern)) and "|" not in pattern and '"' not in pattern:
        before = pattern[: m.start()]
        if not before.endswith("\\") and ".." not in m.group(1):
            lead = _literal_tail(before)
            tails = [lead + word for word in m.group(1).split(",")] + [last]
    magic = next((i for i, c in enumerate(last) if c in _TAIL_MAGIC), -1)
    simple = magic > 0 and last_segment(pattern) == last and "|" not in pattern
    return tails, last[:magic] if simple else ""


def _literal_tail(pattern: str) -> str:
    """Text after the pattern's last magic character, within its last segment."""
    i = len(pattern)
    while i and pattern[i - 1] not in _TAIL_MAGIC and pattern[i - 1] != "/":
        i -= 1
    return pattern[i:]


def _ignores(root: str, git_root: str | None) -> IgnoreStack | None:
    return None if git_root is None else IgnoreStack(root, git_root)


def _bound(root: str, git_root: str | None) -> Containment:
    """Where a symlink's target must lie for the link to count: the git root when it
    holds ``root``, else ``root`` itself (the engine's bound without git is cwd, at or
    above ``root`` for project rules, so this is never wider)."""
    root = os.path.normpath(root)
    if git_root is not None:
        git_root = os.path.normpath(git_root)
        if root == git_root or root.startswith(git_root.rstrip("/") + "/"):
            return Containment(git_root, "the git root")
    return Containment(root, "the scan root")


def _leads_to_file(bound: Containment, path: str) -> bool:
    """Whether the symlink ``path`` resolves, inside ``bound``, to a regular file. A link
    leading out is never stat-ed through (``DirEntry.is_file()`` would)."""
    resolved = bound.resolve(os.path.normpath(path))
    return isinstance(resolved, tuple) and stat.S_ISREG(resolved[1].st_mode)


def _walk(root: str, ignores: IgnoreStack | None, wanted: Callable[[str], bool],
          bound: Containment) -> Iterator[tuple[str, list[str]]]:
    """Yield ``(directory, run of file names)`` so that files come in sorted path order.

    Depth-first, entries sorted by ``name + "/"`` for directories and ``name`` for files:
    every path below directory ``d`` starts with ``d/``, so this order IS the code-point
    order of full paths (``a.txt`` < ``a/b`` because ``.`` < ``/``). A directory is
    listed only if ``wanted`` (asked when reached, so answered queries prune) and not
    ignored; an unlistable or vanished one is skipped.
    """
    frames: list[tuple[str, list[tuple[str, str, bool]], list[int], bool]] = []

    def enter(rel: str) -> None:
        check_deadline()  # a huge tree must not outlive the host call (rules_core.deadline)
        path = os.path.join(root, rel) if rel else root
        entries: list[tuple[str, str, bool]] = []
        has_ignore_file = False
        depends_on(path)  # signature taken before listing: a later change always shows
        try:
            with os.scandir(path) as it:
                for e in it:
                    if e.name in NEVER_SCANNED:
                        continue  # never entered, and (as git does for `.git`) never a file
                    try:
                        if e.is_dir(follow_symlinks=False):
                            entries.append((e.name + "/", e.name, True))
                        elif e.is_file(follow_symlinks=False):  # a regular file
                            entries.append((e.name, e.name, False))
                            has_ignore_file |= e.name == ".gitignore"
                        elif e.is_symlink():
                            unstable()  # its target may change where no listed directory shows it
                            if _leads_to_file(bound, os.path.join(path, e.name)):
                                entries.append((e.name, e.name, False))
                    except OSError:
                        continue  # vanished between listing and looking
        except OSError:
            return
        entries.sort()
        pushed = ignores is not None and has_ignore_file and ignores.push_dir(path, rel)
        frames.append((rel, entries, [0], pushed))

    enter("")
    while frames:
        rel, entries, cursor, pushed = frames[-1]
        run: list[str] = []
        descended = False
        while cursor[0] < len(entries):
            _, name, is_dir = entries[cursor[0]]
            cursor[0] += 1
            if not is_dir:
                run.append(name)
                continue
            if run:  # let the consumer see earlier files first: an answer may prune
                yield rel, run
                run = []
            child = f"{rel}/{name}" if rel else name
            if wanted(child) and not (ignores is not None and ignores.excluded(child, True)):
                depth = len(frames)
                enter(child)
                if descended := len(frames) > depth:
                    break  # walk the child first; this frame resumes at its cursor
        if descended:
            continue
        if run:
            yield rel, run
        frames.pop()
        if pushed and ignores is not None:
            ignores.pop()
