"""Git's ignore rules, for the exists scanner (docs/scanning.md) and the tree walk.

Each line means what it means to git (dir.c: parse_path_pattern, match_basename,
match_pathname), on bytes as git sees them; its wildcards are matched by
rules_core.discovery._wildmatch in linear time (issue 14, attack 2). A walking scanner asks only
"does this line match this very entry?" (the walk already skipped excluded directories).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from re import _compiler as _sre  # re.compile without re's size-blind cache

from rules_core.globs._budget import BoundedCache
from rules_core.discovery._wildmatch import literal as _literal, translate as _translate
from rules_core.discovery.observe import depends_on

# Git skips pattern files of 100 MiB or more (dir.c, PATTERN_MAX_FILE_SIZE); here a file
# over MAX_IGNORE_BYTES, or with more than MAX_WILDCARD_LINES lines that need wildcard
# matching (or MAX_WILDCARD_BYTES of them), is skipped the same way: treated as absent,
# nothing in it applies, and its path is recorded in IgnoreStack.skipped. Plain names,
# `*.ext` and plain paths cost a dict or suffix look-up; a wildcard line costs a regex
# compile (~10 us a byte) and a match for every entry checked (docs/scanning.md).
MAX_IGNORE_BYTES = 256 * 1024
MAX_WILDCARD_LINES = 1000
MAX_WILDCARD_BYTES = 32 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_SLASH, _STAR, _BACKSLASH, _SPACE = b"/*\\ "
_SIMPLE_STOP = frozenset(b"*?[\\")  # git's is_glob_special: where a line's literal prefix ends

_Hit = tuple[int, bool]  # (line number, ignores): the line that decides, and how
_Plain = dict[bytes, list[tuple[int, bool, bool]]]  # text -> (line, ignores, directories only)


class _Spec:
    """One ignore file, lines sorted by kind, each list last line first (the last matching
    line decides). git's own shortcuts (dir.c, match_basename) first: a base name equal
    to a plain line, or ending with a `*literal` one, and a path equal to a plain path
    line; only the remaining lines are regexes (rules_core.discovery._wildmatch)."""

    __slots__ = ("names", "paths", "ends", "suffixes", "wild", "size", "oversized")

    def __init__(self, size: int) -> None:
        self.size, self.oversized = size, False  # bytes of the file; past the wildcard caps
        self.names: _Plain = {}
        self.paths: _Plain = {}
        self.ends: _Plain = {}  # `*literal` base-name lines, by literal
        self.suffixes: tuple[bytes, ...] = ()
        # (line, ignores, directories only, matches the base name, fullmatch)
        self.wild: list[tuple[int, bool, bool, bool, Callable[[bytes], object]]] = []

    def decide(self, local: bytes, is_dir: bool) -> bool | None:
        """Whether the last matching line ignores ``local`` (True) or re-includes it
        (False); None when no line matches."""
        name = local.rpartition(b"/")[2]
        best = _later(_first(self.names.get(name, ()), is_dir), _first(self.paths.get(local, ()), is_dir))
        if self.suffixes and name.endswith(self.suffixes):  # then each ending of the name, once
            for start in range(len(name) + 1):
                best = _later(best, _first(self.ends.get(name[start:], ()), is_dir))
        for number, ignores, dir_only, on_name, fullmatch in self.wild:
            if best is not None and number < best[0]:
                break
            if (is_dir or not dir_only) and fullmatch(name if on_name else local) is not None:
                best = (number, ignores)
                break
        return None if best is None else best[1]


def _first(lines: Iterable[tuple[int, bool, bool]], is_dir: bool) -> _Hit | None:
    return next(((number, ignores) for number, ignores, dir_only in lines if is_dir or not dir_only), None)


def _later(a: _Hit | None, b: _Hit | None) -> _Hit | None:
    return b if a is None or (b is not None and b[0] > a[0]) else a


def _compile_spec(data: bytes) -> _Spec | None:
    """Compile an ignore file's bytes, read as git reads them; None when no line can
    match; a spec marked ``oversized`` past the wildcard caps."""
    spec = _Spec(len(data))
    rows = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")  # git skips a UTF-8 BOM
    later: set[bytes] = set()  # a line repeated further down always wins over this one
    wild_bytes = 0
    for number in range(len(rows) - 1, -1, -1):  # last line first
        row = _trim_trailing_spaces(rows[number].removesuffix(b"\r"))
        if not rows[number] or rows[number][0] == ord("#") or row in later:
            continue
        later.add(row)
        ignores = not row.startswith(b"!")
        body = row if ignores else row[1:]
        dir_only = body.endswith(b"/")  # git strips ONE trailing `/` and remembers it
        body = body[:-1] if dir_only else body
        on_name = _SLASH not in body  # match_basename; else match_pathname, anchored
        if not on_name:
            body = body.removeprefix(b"/")
            if body.startswith(b"**/") and _SLASH not in body[3:]:  # `**/x` is the base name x
                body, on_name = body[3:], True
        if not body:
            continue
        entry = (number, ignores, dir_only)
        if not _SIMPLE_STOP.intersection(body):
            (spec.names if on_name else spec.paths).setdefault(body, []).append(entry)
        elif on_name and body[0] == _STAR and not _SIMPLE_STOP.intersection(body[1:]):
            spec.ends.setdefault(body[1:], []).append(entry)
        else:
            regex = _translate(body) if on_name else _pathname(body)
            if regex is not None:
                wild_bytes += len(body)
                if len(spec.wild) == MAX_WILDCARD_LINES or wild_bytes > MAX_WILDCARD_BYTES:
                    spec.oversized, spec.wild = True, []
                    return spec
                spec.wild.append((*entry, on_name, _sre.compile(regex.encode("ascii"), 0).fullmatch))
    spec.suffixes = tuple(spec.ends)
    return spec if spec.names or spec.paths or spec.ends or spec.wild else None


def _pathname(body: bytes) -> str | None:
    """match_pathname: git compares the literal prefix first and wildmatches the rest as a
    pattern of its own, so a `**` right after that prefix counts as the pattern's start
    (`a**/b` matches `a/x/b`); the rest is translated on its own too."""
    prefix = next((i for i, c in enumerate(body) if c in _SIMPLE_STOP), len(body))
    rest = _translate(body[prefix:])
    return None if rest is None else _literal(body[:prefix]) + rest


# The engine rescans after writes: same files, same bytes. Bounded by the bytes kept.
compile_spec = BoundedCache(_compile_spec, lambda spec: spec.size if spec else 0, 256, 8 * 1024 * 1024)


def _trim_trailing_spaces(line: bytes) -> bytes:
    """Git's trim_trailing_spaces, in one pass: drop trailing spaces unless a backslash
    quotes them (tabs stay)."""
    if not line.endswith(b" "):
        return line
    last_space, i, n = -1, 0, len(line)
    while i < n:
        if line[i] == _SPACE:
            last_space = i if last_space < 0 else last_space
        else:
            i += line[i] == _BACKSLASH  # the quoted character is never trimmed
            last_space = -1
        i += 1
    return line if last_space < 0 else line[:last_space]


def read_ignore_file(path: str, skipped: list[str] | None = None) -> _Spec | None:
    """Read and compile one ignore file; anything unreadable or odd is absent, and so is a
    file past the caps (MAX_IGNORE_BYTES, MAX_WILDCARD_*), whose path is then appended
    to ``skipped``.

    Git does not follow a symlinked ``.gitignore``; neither do we (O_NOFOLLOW), and a
    FIFO with that name never blocks us (O_NONBLOCK, then regular files only).
    """
    depends_on(path)  # an answer kept across processes is re-checked against this file
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        data = b""
        if info.st_size <= MAX_IGNORE_BYTES:  # a file that claims less is still read to the cap only
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read(MAX_IGNORE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    too_big = info.st_size > MAX_IGNORE_BYTES or len(data) > MAX_IGNORE_BYTES
    spec = None if too_big else compile_spec(data)
    if too_big or (spec is not None and spec.oversized):
        if skipped is not None:
            skipped.append(path)
        return None
    return spec


class IgnoreStack:
    """The ignore files in force for the directory being walked, deepest last.

    Paths are kept relative to ``git_root``; each entry ``(spec, cut)`` turns such a
    path, as bytes, into one relative to that ignore file's directory with ``path[cut:]``.
    ``skipped`` lists the ignore files not applied because they exceed MAX_IGNORE_BYTES.
    """

    def __init__(self, root: str, git_root: str) -> None:
        self.stack: list[tuple[_Spec, int]] = []
        self.skipped: list[str] = []
        self.root_excluded = False
        self.prefix = ""  # root relative to git_root, with a trailing "/" unless empty
        rel_root = os.path.relpath(root, git_root).replace(os.sep, "/")
        if rel_root == ".." or rel_root.startswith("../"):
            return  # git_root is not above root: nothing outside root is known
        parts = [] if rel_root == "." else rel_root.split("/")
        self.prefix = "".join(p + "/" for p in parts)
        dot_git = os.path.join(git_root, ".git")
        try:  # a `.git` FILE is a worktree/submodule pointer: its exclude lives elsewhere
            real_git_dir = stat.S_ISDIR(os.lstat(dot_git).st_mode)
        except OSError:
            real_git_dir = False
        if real_git_dir:
            self._push(os.path.join(dot_git, "info", "exclude"), "")
        # The .gitignore files from git_root down to root's parent apply below root too,
        # and if a directory on the way is ignored itself, all of root is.
        for depth in range(len(parts)):
            above = "".join(p + "/" for p in parts[:depth])
            self._push(os.path.join(git_root, above, ".gitignore"), above)
            if self._excluded(above + parts[depth], True):
                self.root_excluded = True
                return

    def _push(self, path: str, base: str) -> bool:
        spec = read_ignore_file(path, self.skipped)
        if spec is None:
            return False
        self.stack.append((spec, len(os.fsencode(base))))
        return True

    def push_dir(self, abs_dir: str, rel_dir: str) -> bool:
        """Read ``abs_dir/.gitignore`` (``rel_dir`` relative to root); True if pushed."""
        base = self.prefix + rel_dir + "/" if rel_dir else self.prefix
        return self._push(os.path.join(abs_dir, ".gitignore"), base)

    def pop(self) -> None:
        self.stack.pop()

    def excluded(self, rel: str, is_dir: bool) -> bool:
        """Git's verdict for root-relative ``rel`` whose parent directory is not ignored."""
        return self._excluded(self.prefix + rel, is_dir)

    def _excluded(self, path: str, is_dir: bool) -> bool:
        # Deepest file first; the first file with a matching line decides, and in it the
        # last matching line: a pattern excludes, a `!` negation re-includes.
        data = os.fsencode(path)
        for spec, cut in reversed(self.stack):
            verdict = spec.decide(data[cut:] if cut else data, is_dir)
            if verdict is not None:
                return verdict
        return False
