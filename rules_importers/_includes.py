"""Expanding file imports in place: Claude Code's ``@path`` (CLAUDE.md), Gemini CLI's
``@./path`` (GEMINI.md) and Kiro's ``#[[file:path]]`` steering references.

``expand`` replaces each import written outside code (fenced blocks, inline code, and
for Claude HTML comments) with the imported file's text, its final newline dropped.
Claude and Gemini imports are relative to the importing file's folder and nest up to
``MAX_DEPTH`` hops; a file already on the import chain is not expanded again. Kiro
references are relative to the workspace root and inserted verbatim, never expanded
further: Kiro documents them as links to live workspace files (an OpenAPI spec, a
component, ``.env.example``), not as nested steering.

Repositories can be hostile: every file is resolved by ``Containment`` inside ``bound``
(a symlink leading out is never followed) and read size-capped; at most ``MAX_LOOKUPS``
imports are looked up and ``MAX_IMPORTS`` files inserted, and the result never passes
``MAX_RULE_BYTES``. Each import not read is one problem line naming it as written and
the fix (at most ``MAX_PROBLEMS``, then a count). A mention that is not plainly a path
(``@alice``, ``@tanstack/react-query``, ``@/components``: no ``./ ../ ~/`` prefix, no
extension) is imported when the file exists, else it is prose and stays, unreported.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import Literal

from rules_core.discovery.containment import Containment, Unresolved
from rules_core.model import RuleError
from rules_core.discovery.reading import MAX_RULE_BYTES, read_rule_text

from ._regions import code_regions, comment_regions, inside_any, strip_html_comments

MAX_DEPTH = 5  # hops, as Claude Code and Gemini CLI document
MAX_IMPORTS = 256  # files inserted per expansion (a file imported twice counts twice)
MAX_LOOKUPS = 1024  # imports resolved on disk per expansion
MAX_PROBLEMS = 20

Syntax = Literal["claude", "gemini", "kiro"]


@dataclass(frozen=True)
class Expanded:
    """The expanded text; ``depends``: the physical path of every file read and, for a
    missing import, the nearest existing folder on its path (creating the file changes
    it); ``problems``: one line per import not read; ``pointed``: the ``elsewhere`` files
    an import became a pointer to."""

    text: str
    depends: tuple[str, ...]
    problems: tuple[str, ...]
    pointed: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Token:
    start: int  # text[start:end] is replaced by the imported text
    end: int
    written: str  # as written, for messages
    target: str  # the path it names
    plain: bool  # unmistakably a file path: reported when it cannot be read


def expand(text: str, *, path: str, bound: str, home: str | None, syntax: Syntax,
           root: str | None = None, elsewhere: tuple[str, ...] = ()) -> Expanded:
    """``text`` (the file at ``path``) with its imports expanded; never raises for any
    text. ``bound``: the only folder files may be read from (empty: none); ``home``: what
    ``@~/`` names (Claude); ``root``: what Kiro references are relative to (default
    ``bound``); ``elsewhere``: files that are rules of their own — an import of one
    becomes a pointer (``CLAUDE.md`` holding ``@AGENTS.md`` must not send it twice)."""
    run = _Run(path=os.path.normpath(path), bound=bound, home=home, syntax=syntax, root=root)
    run.elsewhere = frozenset(os.path.normpath(p) for p in elsewhere)
    return run.result(text)


def import_targets(text: str, *, path: str, home: str | None, syntax: Syntax) -> tuple[str, ...]:
    """The paths the imports written in ``text`` (outside code) name, as written, resolved
    against ``path``'s folder — nothing is read, nothing nested is followed."""
    run = _Run(path=os.path.normpath(path), bound="", home=home, syntax=syntax, root=None)
    regions = _skipped(text, syntax)
    starts = [r[0] for r in regions]
    found = (run._lexical(t, run.path, "") for t in _tokens(text, syntax) if not inside_any(regions, starts, t.start))
    return tuple(dict.fromkeys(p for p in found if p is not None))


def _skipped(text: str, syntax: Syntax) -> list[tuple[int, int]]:
    """Where imports are not read: code, and for Claude Code HTML comments too."""
    regions = code_regions(text)
    return _merge(regions, comment_regions(text, regions)) if syntax == "claude" else regions


# -- import tokens, per syntax ------------------------------------------------------------

_AT_CLAUDE = re.compile(r"(?<!\S)@((?:[^\s\\]|\\ )+)")  # "\ " escapes a space
_AT_GEMINI = re.compile(r"(?<!\S)@(\S+)")
_KIRO = re.compile(r"#\[\[file:([^\]\n]*)\]\]")
_TRAILING = ".,;:!?)]}\"'"  # sentence punctuation after a path is prose, not the path
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]*$")


def _tokens(text: str, syntax: Syntax) -> list[_Token]:
    if syntax == "kiro":
        return [_Token(m.start(), m.end(), m.group(), m.group(1).strip(), True)
                for m in _KIRO.finditer(text) if m.group(1).strip()]
    found = []
    for match in (_AT_CLAUDE if syntax == "claude" else _AT_GEMINI).finditer(text):
        raw = match.group(1).rstrip(_TRAILING)  # Claude: "#section" is a fragment, "\ " a space
        target = raw.split("#", 1)[0].replace("\\ ", " ") if syntax == "claude" else raw
        if not target or "://" in target or not _accepted(target, syntax):
            continue
        # "@/components/Button" (a bundler alias) is prose too: an absolute path needs an extension.
        plain = target.startswith(("./", "../", "~/")) or bool(_EXTENSION.search(target.rsplit("/", 1)[-1]))
        found.append(_Token(match.start(), match.start() + 1 + len(raw), "@" + raw, target, plain))
    return found


def _accepted(target: str, syntax: Syntax) -> bool:
    """The spellings each tool reads as an import (the rest is prose: ``@@x``, ``@#!``)."""
    if syntax == "gemini":  # Gemini CLI: a path starting with ".", "/" or a letter
        return target != "/" and (target[0] in "./" or "a" <= target[0].lower() <= "z")
    return target.startswith(("./", "~/")) or (target.startswith("/") and target != "/") or (
        target[0].isascii() and (target[0].isalnum() or target[0] in "._-"))


# -- one expansion ------------------------------------------------------------------------


class _Run:
    """The state of one ``expand`` call: budgets, files read, problems."""

    def __init__(self, *, path: str, bound: str, home: str | None, syntax: Syntax, root: str | None) -> None:
        self.path, self.syntax = path, syntax
        self.bound = os.path.normpath(bound) if bound else ""
        self.home = os.path.normpath(home) if home else None
        self.in_home = bool(self.bound) and self.home == self.bound
        self.label = "your home folder" if self.in_home else _label(self.bound)
        self.contain = Containment(self.bound, self.label) if self.bound else None
        self.root = os.path.normpath(root) if root else self.bound
        self.budget = self.inserted = self.lookups = self.more = 0
        self.depends: dict[str, None] = {}
        self.problems: dict[str, None] = {}
        self.cache: dict[str, str] = {}
        self.elsewhere: frozenset[str] = frozenset()
        self.pointed: dict[str, None] = {}

    def result(self, text: str) -> Expanded:
        self.budget = max(0, MAX_RULE_BYTES - _size(text))
        top = self._lookup(self.path)
        expanded = self._expand(text, self.path, (top[0] if isinstance(top, tuple) else self.path,), 0)
        more = [f"… and {self.more} more imports not read; fix the ones above first"] if self.more else []
        return Expanded(expanded, tuple(self.depends), (*self.problems, *more), tuple(self.pointed))

    def _expand(self, text: str, importer: str, chain: tuple[str, ...], depth: int) -> str:
        tokens = _tokens(text, self.syntax)
        if not tokens:
            return text
        regions = _skipped(text, self.syntax)
        starts = [r[0] for r in regions]
        pieces, last = [], 0
        for token in tokens:
            if not inside_any(regions, starts, token.start):
                replacement = self._import(token, importer, chain, depth)
                if replacement is not None:
                    pieces += [text[last:token.start], replacement]
                    last = token.end
        return "".join(pieces) + text[last:]

    def _import(self, token: _Token, importer: str, chain: tuple[str, ...], depth: int) -> str | None:
        """The text replacing ``token``, or None (left as written; a problem when plain)."""
        where = f"import {token.written}" + (f" in {self._shown(importer)}" if importer != self.path else "")
        if depth >= MAX_DEPTH or self.lookups >= MAX_LOOKUPS or self.inserted >= MAX_IMPORTS:
            if token.plain:  # not even looked up: the limits bound the work too
                self._problem(f"{where}: not read — imports nest more than {MAX_DEPTH} levels deep; import the "
                              f"file from one nearer {os.path.basename(self.path)}" if depth >= MAX_DEPTH else
                              f"{where}: not read — this file's imports, nested ones included, pass the limit "
                              f"({MAX_IMPORTS} files inserted, {MAX_LOOKUPS} looked up); import fewer files")
            return None
        self.lookups += 1
        lexical = self._lexical(token, importer, where)
        if lexical in self.elsewhere:
            self.pointed.setdefault(lexical, None)
            return f"({self._shown(lexical)} reaches you as a rule of its own)"
        found = None if lexical is None else self._resolve(lexical, token, where)
        if lexical is None or found is None:
            return None
        physical, info = found
        shown = self._shown(lexical)
        if physical in chain:
            return self._problem(f"{where}: {shown} is already being imported (a cycle); not expanded again — "
                                 "remove one of the imports")
        too_big = (f"{where}: not read — the expanded text would pass {MAX_RULE_BYTES} bytes, the limit for "
                   "one rule; import smaller or fewer files")
        if info.st_size > self.budget:  # checked before reading: a huge file is never read
            return self._problem(too_big)
        text = self._read(physical, shown, where)
        if text is None or _size(text) > self.budget:  # (it may have grown since the stat)
            return None if text is None else self._problem(too_big)
        self.budget -= _size(text)
        self.inserted += 1
        self.depends.setdefault(physical, None)
        if self.syntax == "claude":
            text = strip_html_comments(text)
        if self.syntax != "kiro":  # Kiro inserts referenced files verbatim
            text = self._expand(text, lexical, (*chain, physical), depth + 1)
        return text[:-1] if text.endswith("\n") else text

    def _lexical(self, token: _Token, importer: str, where: str) -> str | None:
        target, base = token.target, os.path.dirname(importer)
        if self.syntax == "kiro":
            base = self.root
        elif self.syntax == "claude" and target.startswith("~/"):
            if self.home is None:
                return self._problem(f"{where}: the home folder is not known; not read")
            base, target = self.home, target[2:]
        return os.path.normpath(os.path.join(base, target))

    def _resolve(self, lexical: str, token: _Token, where: str) -> tuple[str, os.stat_result] | None:
        if self.contain is None:
            return self._problem(f"{where}: this file may not import other files; not read")
        found, shown = self._lookup(lexical), self._shown(lexical)
        if isinstance(found, Unresolved) and not self.contain.inside(lexical):
            if self.syntax == "claude" and token.target.startswith("~/"):
                return self._problem(f"{where}: in your home folder, outside {self.label} {self.bound}; not read "
                                     "— move the file inside it, or import it from your own ~/.claude/CLAUDE.md")
            return self._problem(f"{where}: {lexical} is outside {self.label} {self.bound}; not read — "
                                 "move the file inside it") if token.plain else None
        if isinstance(found, Unresolved):  # a link leading out (named by Containment), a loop
            return self._problem(f"{where}: {found.message}")
        if found is None:
            self._depend_on_folder(lexical)
            missing = f"{where}: no such file {shown}; create it or correct the path"
            return self._problem(missing) if token.plain else None
        if stat.S_ISDIR(found[1].st_mode):
            return self._problem(f"{where}: {shown} is a folder, not a file; import a file inside it") \
                if token.plain else None
        if not stat.S_ISREG(found[1].st_mode):
            return self._problem(f"{where}: {shown} is not a regular file (FIFO, socket or device); "
                                 "import a plain file")
        return found

    def _read(self, physical: str, shown: str, where: str) -> str | None:
        if physical not in self.cache:
            text = read_rule_text(physical, follow=False)  # resolved already: a link swapped in is not followed
            if text is None:
                return self._problem(f"{where}: no such file {shown}; create it or correct the path")
            if isinstance(text, RuleError):
                return self._problem(f"{where}: {shown}: {text.message}")
            if "\x00" in text:
                return self._problem(f"{where}: {shown} contains NUL bytes (a binary file); import a text file")
            self.cache[physical] = text
        return self.cache[physical]

    def _problem(self, message: str) -> None:
        """Record ``message`` (once; past ``MAX_PROBLEMS`` only counted). None, for returns."""
        if message in self.problems:
            return None
        if len(self.problems) >= MAX_PROBLEMS:
            self.more += 1
        else:
            self.problems[message] = None
        return None

    def _depend_on_folder(self, lexical: str) -> None:
        """The nearest existing folder of a missing import: creating the file changes it."""
        assert self.contain is not None
        folder = os.path.dirname(lexical)
        while self.contain.inside(folder):
            try:
                physical = self.contain.directory(folder)
            except (OSError, ValueError):
                return
            if isinstance(physical, str):
                self.depends.setdefault(physical, None)
            if physical is not None or folder == self.bound:
                return
            folder = os.path.dirname(folder)

    def _lookup(self, path: str) -> tuple[str, os.stat_result] | Unresolved | None:
        if self.contain is None:
            return None
        try:
            return self.contain.resolve(path)
        except (OSError, ValueError) as exc:  # a path the OS refuses outright (NUL, too long)
            return Unresolved(f"cannot be resolved ({exc}); correct the path")

    def _shown(self, path: str) -> str:
        """A path as a user finds it: relative to the bound (``~/…`` in the home folder)."""
        if self.bound and (path == self.bound or path.startswith(self.bound.rstrip("/") + "/")):
            relative = os.path.relpath(path, self.bound)
            return f"~/{relative}" if self.in_home else relative
        return path


def _label(bound: str) -> str:
    """How messages name the bound (``os.path.lexists`` never raises)."""
    return "the git root" if bound and os.path.lexists(os.path.join(bound, ".git")) else "the project directory"


def _merge(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Two sorted span lists as one sorted list of disjoint spans."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(first + second):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
