"""Glob matching for rule scopes: picomatch semantics on top of wcmatch.

Path patterns behave like picomatch 4 with ``{dot: true}``; model ids and
branch names ("flat" tokens) behave like picomatch without ``dot``.  The heavy
lifting (braces, extglobs, classes, globstar, dot rules) is done by
``wcmatch.glob.translate``; this module only rewrites the handful of
constructs where picomatch and wcmatch disagree, then compiles everything into
ONE regex per pattern so matching is a single ``fullmatch`` call.
docs/globs.md describes the user-facing semantics.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from re import _compiler as _sre  # re.compile without re's own 512-entry, size-blind cache

from wcmatch import glob as _wg
from wcmatch._wcparse import PatternLimitException as _LimitError  # not re-exported publicly

import rules_core.globs._guard as _glob_guard
from rules_core.globs._budget import EXPANSION_BUDGET, REGEX_BUDGET, BoundedCache, expansion_problem
from rules_core.globs._budget import EXPANSION_LIMIT as _EXPANSION_LIMIT
from rules_core.globs._guard import class_end as _class_end

__all__ = ["GlobError", "Glob", "compile_glob", "compile_flat", "normalize_path",
           "last_segment", "literal_prefix", "EXPANSION_BUDGET"]

_FLAGS = _wg.GLOBSTAR | _wg.BRACE | _wg.EXTGLOB | _wg.FORCEUNIX | _wg.CASE
_MAX_LENGTH = 65536  # picomatch refuses longer patterns too
MAX_PATTERN_LENGTH = _MAX_LENGTH  # for checks made before compiling (rules_core.discovery.kept_parses)
# The compile cache: entries, and characters of regex kept (~6 bytes of memory each).
_CACHE_ENTRIES = 4096
_CACHE_CHARACTERS = 8 * 1024 * 1024
# PATH_MAX and NAME_MAX: no file on disk has a longer path or name, so a subject beyond
# them names no file and matches nothing. With the pattern limits of _glob_guard this
# caps the time one match can take (docs/globs.md, "Patterns refused as too slow").
MAX_SUBJECT = 4096
MAX_SEGMENT = 255
_MAGIC = frozenset('*?[]{}()!@+\\"')
# picomatch's utils.hasRegexChars: a class whose body has none of these also
# matches its own text literally (so `app/[id]/page.tsx` finds the Next.js file).
_REGEX_CHARS = frozenset("-*+?.^${}(|)[]\\/")
# picomatch reads `{a..c}` as the character class [a-c], never as an expansion.
_RANGE = re.compile(r"[A-Za-z0-9]+(?:\.\.[A-Za-z0-9]+)+")
# picomatch's "fast paths" (used only for non-negated patterns starting with
# `.`/`*`) require at least one character after the dot, which its general
# parser (and wcmatch) do not; `?*` expresses "one or more" in glob terms.
_FASTPATHS = {"*.*": "*.?*", "**/*.*": "**/*.?*", ".*": ".?*", "**/.*": "**/.?*"}
_FAST_EXT = re.compile(r"\*\*\.[A-Za-z0-9_]+")  # fast path `**.ts` is a real globstar
_SUFFIX = re.compile(r"[A-Za-z0-9._-]+\Z")  # never magic, even right after `\\`
_GLOBSTAR_RUN = re.compile(r"(^|/)\*\*(?:/\*\*)+(?=/|$)")
# picomatch compiles patterns with none of these as escaped literal text, so
# there `a|b` is literal; any other pattern becomes a regex in which a
# top-level `|` separates alternatives (`*.ts|*.tsx`): wcmatch's SPLIT.
_NEEDS_PARSE = re.compile(r'^[*!]|[/()\[\]{}"]')


class GlobError(ValueError):
    """The pattern cannot be compiled; str(err) is a short message for the user."""


class Glob:
    """A compiled pattern. Immutable; equal/hashable by (pattern, mode)."""

    __slots__ = ("pattern", "flat", "regex", "_fullmatch")
    pattern: str
    flat: bool
    regex: re.Pattern[str]
    _fullmatch: Callable[[str], re.Match[str] | None]  # bound once: saves a lookup per call

    def __init__(self, pattern: str, flat: bool, regex: re.Pattern[str]) -> None:
        for name, value in (("pattern", pattern), ("flat", flat), ("regex", regex),
                            ("_fullmatch", regex.fullmatch)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Glob is immutable")

    def __reduce__(self) -> tuple[Callable[[str], Glob], tuple[str]]:
        return (compile_flat if self.flat else compile_glob), (self.pattern,)  # workers recompile

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Glob):
            return NotImplemented
        return self.pattern == other.pattern and self.flat == other.flat

    def __hash__(self) -> int:
        return hash((self.pattern, self.flat))

    def __repr__(self) -> str:
        return f"{'compile_flat' if self.flat else 'compile_glob'}({self.pattern!r})"

    def match(self, path: str) -> bool:
        """Path mode normalises first (see normalize_path); flat tokens are used as given.
        A subject longer than MAX_SUBJECT, or with a segment longer than MAX_SEGMENT
        characters, matches nothing."""
        if len(path) > MAX_SEGMENT and _overlong(path):
            return False
        return self._fullmatch(path if self.flat else normalize_path(path)) is not None

    def match_normalized(self, path: str) -> bool:
        """Caller guarantees ``path == normalize_path(path)``: just the regex call."""
        if len(path) > MAX_SEGMENT and _overlong(path):
            return False
        return self._fullmatch(path) is not None


def compile_glob(pattern: str) -> Glob:
    """Compile a path pattern (picomatch + dot: true). Raises GlobError."""
    return _compile(pattern, False)


def compile_flat(pattern: str) -> Glob:
    """Compile a pattern for one flat token such as a model id or branch name."""
    return _compile(pattern, True)


def normalize_path(path: str) -> str:
    """'/'-separated path without './' prefix, '.' segments, '//' runs or trailing '/'."""
    if ("//" not in path and "/./" not in path and not path.startswith("./")
            and not path.endswith(("/", "/.")) and path != "."):
        return path  # the common case: already normal, no allocation
    lead = "/" if path.startswith("/") else ""
    return lead + "/".join(s for s in path.split("/") if s and s != ".")


def last_segment(pattern: str) -> str:
    """The last '/'-separated segment, ignoring '/' inside {...}, [...] and (...)."""
    start, depth, i = 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and (end := _class_end(pattern, i)) > 0:
            i = end + 1
            continue
        if c in "{(":
            depth += 1
        elif c in "})" and depth:
            depth -= 1
        elif c == "/" and not depth:
            start = i + 1
        i += 1
    return pattern[start:]


def literal_prefix(pattern: str) -> str:
    """Leading directory segments free of glob magic ('' when none or negated)."""
    norm = normalize_path(pattern)
    if norm.startswith("!") or "|" in norm:  # `a/b|c/d` has alternatives from the root
        return ""
    keep: list[str] = []
    for seg in norm.split("/")[:-1]:  # the last segment is never a directory
        if _MAGIC.intersection(seg):
            break
        keep.append(seg)
    return "/".join(keep)


def _build(pattern: str, flat: bool) -> Glob:
    if not isinstance(pattern, str):
        raise GlobError(f"pattern must be a string, not {type(pattern).__name__}")
    if len(pattern) > _MAX_LENGTH:
        raise GlobError(f"pattern is longer than {_MAX_LENGTH} characters")
    body, negated = pattern, False
    while True:  # `./` and `!` may interleave (`!./x`); picomatch strips both
        if body.startswith("./"):
            body = body[2:]
        elif body.startswith("!") and not body.startswith("!("):
            body, negated = body[1:], not negated  # `!!x` is x again
        else:
            break
    if not body:
        raise GlobError("empty pattern" if not pattern.strip("!./") else
                        f"pattern {pattern!r} is empty once '!' and './' are removed")
    # picomatch folds `x/**/**` into `x/**` before looking at what `**` touches
    body = _GLOBSTAR_RUN.sub(r"\1**", body)
    if not negated:
        body = _FASTPATHS.get(body, body)
        if _FAST_EXT.fullmatch(body):
            body = "**/*" + body[2:]
    text, dead = _rewrite(body)
    refusal, chainable = _glob_guard.check(text)
    variants = [text]
    # picomatch: a trailing `/**` also matches the directory itself (`src/**`
    # matches `src`), unless `/**` is the whole pattern or follows a star.
    if body.endswith("/**") and len(body) > 3 and body[-4] not in "*/" and text.endswith("/**"):
        variants.append(text[:-3])
    # Refused before anything is translated; the expansion count speaks first, as the
    # more specific message (docs/globs.md, "Invalid patterns").
    for problem in (expansion_problem(variants), refusal):
        if problem:
            raise GlobError(problem)
    flags = _FLAGS if flat else _FLAGS | _wg.DOTGLOB
    if _NEEDS_PARSE.search(_strip_dot_slash(pattern)):
        flags |= _wg.SPLIT
    if dead:
        main = "(?!)"  # picomatch builds an invalid regex and falls back to "match nothing"
    else:
        try:
            regexes, _ = _wg.translate(variants, flags=flags, limit=_EXPANSION_LIMIT)
        except _LimitError:  # `a|b|…` pieces count too
            raise GlobError(f"brace expansion yields more than {_EXPANSION_LIMIT} patterns") from None
        except RecursionError:  # wcmatch recurses per nested group; the guard explains it
            raise GlobError("pattern nests too deeply") from None
        main = _alternatives(regexes, flat, chainable)
        if negated:  # plain complement: `!p` matches exactly the inputs p does not
            main = f"(?!(?:{main})\\Z)(?s:.*)"
        elif "**" in body and "|" not in body and (sfx := _SUFFIX.search(body)):
            # Pure speed-up: wcmatch's globstar loop costs ~1us per path; checking
            # the literal ending first (`**/*.ts` needs `.ts`) rejects most paths
            # ~7x faster. `/*` mirrors the trailing slashes wcmatch tolerates.
            main = f"(?=(?s:.*){re.escape(sfx.group())}/*\\Z){main}"
    # picomatch answers true whenever the input equals the pattern text, and
    # false for the empty input whatever the pattern (hence the lookahead).
    literal = re.escape(pattern if flat else _strip_dot_slash(pattern))
    source = f"(?s:(?=.))(?:{literal}|{main})"
    if len(source) > REGEX_BUDGET:  # checked before compiling, which is what costs
        raise GlobError(f"the glob compiles to more than {REGEX_BUDGET:,} characters of regex; "
                        "shorten it or split it into several globs")
    try:
        regex = _sre.compile(source, 0)
    except (re.error, RecursionError, OverflowError) as exc:  # defensive: wcmatch output is valid
        raise GlobError(f"pattern cannot be compiled: {exc}") from None
    return Glob(pattern, flat, regex)


# Globs are immutable and the same patterns recur across rules (`**/*.ts`): each is
# compiled once, and what the cache keeps is bounded by its regex text too.
_compile = BoundedCache(_build, lambda glob: len(glob.regex.pattern), _CACHE_ENTRIES, _CACHE_CHARACTERS)


def _overlong(path: str) -> bool:
    return len(path) > MAX_SUBJECT or any(len(segment) > MAX_SEGMENT for segment in path.split("/"))


def _alternatives(regexes: list[str], flat: bool, chainable: bool) -> str:
    """One regex for wcmatch's alternatives; chains of `**` made atomic where sound."""
    main = "|".join(f"(?:{r})" for r in regexes) or "(?!)"
    atomic = [_glob_guard.atomic_globstars(r, flat) if chainable else None for r in regexes]
    if not any(atomic):
        return main
    fast = "|".join(f"(?:{a or r})" for a, r in zip(atomic, regexes))
    # Subjects with a segment `**` cannot absorb (`..`, or a hidden one for flat
    # tokens) keep the plain regex: the atomic chain is only equivalent without them.
    odd = _glob_guard.unabsorbable(flat)
    return f"(?:(?!{odd})(?:{fast})|(?={odd})(?:{main}))"


def _strip_dot_slash(text: str) -> str:
    while text.startswith("./"):
        text = text[2:]
    return text


def _rewrite(p: str) -> tuple[str, bool]:
    """Rewrite picomatch syntax into wcmatch syntax meaning the same; also
    report whether picomatch would end up with an invalid regex (unclosed `{`)."""
    out: list[str] = []
    stack: list[tuple[str, int, int]] = []  # (kind, index in out, index in p); kind '{' or '(' + extglob char
    quoted = False
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        i += 1
        if c == '"':  # picomatch: text between double quotes is literal, quotes dropped
            quoted = not quoted
        elif quoted:
            out.append(c if c.isalnum() else "\\" + c)
        elif c == "\\":
            if i == n:  # trailing backslash: picomatch keeps it as a literal backslash
                out.append("\\\\")
            elif p[i].isascii() and p[i].isalnum():
                # picomatch hands `\b`, `\d`, ... to the JS regex engine (word
                # boundary, digit...); we take the backslash literally instead.
                out.append("\\\\")
            else:
                out.append("\\" + p[i])
                i += 1
        elif c == "[":
            end = _class_end(p, i - 1)
            if end < 0:
                out.append("\\[")
                continue
            body, i = p[i:end], end + 1
            if body == "/":
                _slash(out)  # picomatch: `a[/]b` matches `a/b`; wcmatch would take it literally
            elif _quantifier(p, i) == "+":  # picomatch: `[0-9]+` is the regex "one or more"
                out.append("+(" + _class(body).removeprefix("@(").removesuffix(")") + ")")
                i += 1
            else:
                out.append(_class(body))
        elif c == "(":
            ext = out[-1] if out and out[-1] in ("!", "@", "?", "+", "*") else ""
            stack.append(("(" + ext, len(out), i - 1))
            out.append("(")
        elif c == ")" and stack and stack[-1][0][0] == "(":
            kind, at, start = stack.pop()
            if kind in ("(", "(@"):
                # picomatch: a bare `(a|b)` is a group (wcmatch: literal text),
                # and a `+`/`?` after a group is the regex quantifier.
                quant = _quantifier(p, i)
                if kind == "(@":
                    out[at - 1] = ""  # the `@` is re-emitted below (or becomes `+`/`?`)
                out[at] = (quant or "@") + "("
                i += len(quant)
            elif kind == "(!" and i - start > 2 and not _negation_is_exact(p[start + 1:i - 1], p[i:]):
                # picomatch: `!(x)` followed by more pattern only checks that
                # the text there does not START with x (`src/!(vendor)/**`
                # rejects `src/vendorx/y`).
                out[at] = "(@("
                out.append(")*")
            out.append(")")
        elif c == "{":
            stack.append(("{", len(out), i - 1))
            out.append("{")
        elif c == "}" and stack and stack[-1][0] == "{":
            _, at, start = stack.pop()
            if _RANGE.fullmatch(p[start + 1:i - 1]):
                out[at:] = [_range(p[start + 1:i - 1])]
            else:
                out.append("}")
        elif c == "," and stack and stack[-1][0][0] == "(":
            out.append("\\,")  # picomatch: a comma inside (...) never splits an enclosing brace
        elif c == "/":
            _slash(out)
        else:
            out.append(c)
    for kind, at, _ in stack:
        if kind == "(":
            out[at] = "\\("  # unbalanced bare `(` is literal in picomatch
    return "".join(out), any(kind == "{" for kind, _, _ in stack)


def _quantifier(p: str, i: int) -> str:
    """`+` or `?` at p[i] when picomatch passes it to the regex as a quantifier."""
    q = p[i:i + 1]
    return q if q in ("+", "?") and not p.startswith("(", i + 1) else ""


def _slash(out: list[str]) -> None:
    # wcmatch collapses `//` into one separator; picomatch needs two slashes,
    # which a normalised path never has. An escaped second slash keeps two.
    out.append("\\/" if out and out[-1] in ("/", "\\/") else "/")


def _class(body: str) -> str:
    # picomatch reads `[!a]` as the set {!, a} (only `[^a]` negates); commas
    # are escaped so that brace expansion never splits a class.
    members = ("\\!" + body[1:] if body.startswith("!") else body).replace(",", "\\,")
    if _REGEX_CHARS.intersection(body):
        return f"[{members}]"
    literal = "".join(ch if ch.isalnum() else "\\" + ch for ch in body)
    return f"@(\\[{literal}\\]|[{members}])"


def _range(body: str) -> str:
    # picomatch (without micromatch's `braces`) turns `{x..y}` into the JS
    # class `[x-y]` with sorted ends, or the literal `x..y` when JS rejects
    # that class (`{01..03}` -> `[01-03]` is out of order -> literal text).
    ends = sorted(body.split(".."))
    spec, items, k = "-".join(ends), [], 0
    while k < len(spec):
        if k + 2 < len(spec) and spec[k + 1] == "-":
            if spec[k] > spec[k + 2]:
                return "..".join(ends)
            items.append(f"{spec[k]}-{spec[k + 2]}")
            k += 3
        else:
            items.append("\\-" if spec[k] == "-" else spec[k])
            k += 1
    return "[" + "".join(items) + "]"


def _negation_is_exact(inner: str, rest: str) -> bool:
    """Whether picomatch anchors `!(inner)` to the end rather than as a prefix test."""
    return (not rest.strip(")")
            or ("/" in inner and len(inner) > 1)
            or ("*" in inner and re.fullmatch(r"\.[^\\/.]+", rest) is not None))
