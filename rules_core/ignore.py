"""Git's ignore rules, for the exists scanner (docs/scanning.md) and the tree walk.

``pathspec`` translates each gitignore pattern into a regex; this module adds only what a
walking scanner needs on top: reading the files the way git does, and asking "does this
pattern match this very entry?" instead of pathspec's "this path or one of its parents?",
because the walk already skipped every excluded directory.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from typing import Callable

import pathspec

# A hostile or broken ignore file must not be read into memory; 100 MiB is git's own cap
# for .gitattributes. Bigger ignore files are treated as absent (docs/scanning.md).
_MAX_BYTES = 100 * 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>")  # pathspec's directory marker (`ps_d`)
_ANY_DIRS = "^(?:.+/)?"  # how pathspec starts a pattern that may match at any depth


class _Spec:
    """One ignore file: a combined regex says quickly whether any line can match."""

    __slots__ = ("quick", "rules")

    def __init__(self, rules: list[tuple[Callable[[str], object], bool, bool]], quick: str):
        self.rules = rules  # (search, ignores, dir_only), LAST line first: last match wins
        try:
            self.quick: Callable[[str], object] = re.compile(quick).search
        except (re.error, RecursionError, OverflowError):  # defensive: lines compiled alone
            self.quick = lambda _: True  # "maybe": the precise loop decides


@functools.lru_cache(maxsize=256)  # the engine rescans after writes: same files, same text
def compile_spec(text: str) -> _Spec | None:
    """Compile an ignore file's text; ``None`` when it has no pattern."""
    rules: list[tuple[Callable[[str], object], bool, bool]] = []
    based: list[str] = []  # quick-check alternatives that start with _ANY_DIRS
    other: list[str] = []
    for line in text.removeprefix("\ufeff").split("\n"):  # git skips a UTF-8 BOM
        line = _trim_trailing_spaces(line.removesuffix("\r"))
        negated = line.startswith("!")
        body = line[1:] if negated else line
        # git itself strips ONE trailing '/' and remembers "directories only"; pathspec
        # then sees a plain pattern, whose regex we can ask about the entry itself.
        dir_only = body.endswith("/")
        if dir_only:
            body = body[:-1]
        if not body or line.startswith("#"):
            continue
        try:
            patterns = pathspec.GitIgnoreSpec.from_lines([("!" if negated else "") + body]).patterns
        except (ValueError, TypeError):
            continue  # git skips a line it cannot use (e.g. an unclosed `[`); so do we
        for pattern in patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is None or regex is None:
                continue
            source = regex.pattern
            # pathspec's named group marks "matched a parent directory" (`foo` matches
            # `foo/bar`). For the entry itself that match must not count: fail it, so the
            # engine backtracks to a match of the whole entry or reports none.
            own = source + "".join(f"(?({name})(?!))" for name in regex.groupindex)
            try:
                rules.append((re.compile(own).search, pattern.include, dir_only))
            except re.error:
                continue
            plain = _NAMED_GROUP.sub("(?:", source)  # one regex can't repeat a group name
            if plain.startswith(_ANY_DIRS):
                based.append(f"(?:{plain[len(_ANY_DIRS):]})")
            else:
                other.append(f"(?:{plain})")
    if not rules:
        return None
    rules.reverse()
    # Most lines are basename patterns (`*.log`), which pathspec starts with
    # `^(?:.+/)?`: factored out, that prefix backtracks once per check, not once per line.
    if based:
        other.insert(0, _ANY_DIRS + "(?:" + "|".join(based) + ")")
    return _Spec(rules, "|".join(other))


def _trim_trailing_spaces(line: str) -> str:
    """Git's rule: drop trailing spaces unless a backslash quotes them (tabs stay)."""
    end = len(line)
    while end and line[end - 1] == " ":
        quoted = len(line[:end - 1]) - len(line[:end - 1].rstrip("\\"))
        if quoted % 2:
            break
        end -= 1
    return line[:end]


def read_ignore_file(path: str) -> _Spec | None:
    """Read and compile one ignore file; anything unreadable, odd or huge is absent.

    Git does not follow a symlinked ``.gitignore``; neither do we (O_NOFOLLOW), and a
    FIFO with that name never blocks us (O_NONBLOCK, then regular files only).
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return compile_spec(data.decode("utf-8", "surrogateescape"))  # as os.fsdecode names


class IgnoreStack:
    """The ignore files in force for the directory being walked, deepest last.

    Paths are kept relative to ``git_root``; each entry ``(spec, cut)`` turns such a
    path into one relative to that ignore file's directory with ``path[cut:]``.
    """

    def __init__(self, root: str, git_root: str) -> None:
        self.stack: list[tuple[_Spec, int]] = []
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
            self._push(read_ignore_file(os.path.join(dot_git, "info", "exclude")), 0)
        # The .gitignore files from git_root down to root's parent apply below root too,
        # and if a directory on the way is ignored itself, all of root is.
        for depth in range(len(parts)):
            above = "".join(p + "/" for p in parts[:depth])
            self._push(read_ignore_file(os.path.join(git_root, above, ".gitignore")), len(above))
            if self._excluded(above + parts[depth], True):
                self.root_excluded = True
                return

    def _push(self, spec: _Spec | None, cut: int) -> bool:
        if spec is None:
            return False
        self.stack.append((spec, cut))
        return True

    def push_dir(self, abs_dir: str, rel_dir: str) -> bool:
        """Read ``abs_dir/.gitignore`` (``rel_dir`` relative to root); True if pushed."""
        base = self.prefix + rel_dir + "/" if rel_dir else self.prefix
        return self._push(read_ignore_file(os.path.join(abs_dir, ".gitignore")), len(base))

    def pop(self) -> None:
        self.stack.pop()

    def excluded(self, rel: str, is_dir: bool) -> bool:
        """Git's verdict for root-relative ``rel`` whose parent directory is not ignored."""
        return self._excluded(self.prefix + rel, is_dir)

    def _excluded(self, path: str, is_dir: bool) -> bool:
        # Deepest file first; the first file with a matching line decides, and in it the
        # last matching line: a pattern excludes, a `!` negation re-includes.
        for spec, cut in reversed(self.stack):
            local = path[cut:] if cut else path
            if not spec.quick(local):
                continue
            for search, ignores, dir_only in spec.rules:
                if (is_dir or not dir_only) and search(local) is not None:
                    return ignores
        return False
