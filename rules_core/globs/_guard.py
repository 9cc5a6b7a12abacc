"""Keeping glob matching fast on hostile patterns (ReDoS): a static check and a rewrite.

Glob patterns come from rule files, and ``re`` is a backtracking engine, so some
patterns take exponential or high-polynomial time on long paths: ``+(a|aa)b`` or
``!(a)!(a)!(a)x`` against a few hundred ``a``, ``**/a/**/a/**/a/**/a/**/b`` against
``a/a/…/b``. This module (used by ``globs._compile``) does two things:

* :func:`check` refuses the constructs that can backtrack badly (and extglobs nested
  deeper than wcmatch's parser can recurse), so the pattern becomes an
  ``invalid-value`` error instead of hanging or crashing the host;
* :func:`atomic_globstars` makes a chain of ``**`` segments match in linear time by
  committing each ``**`` to the first place the fixed piece after it matches.

docs/globs.md ("Patterns refused as too slow") and docs/reliability.md say why.
"""

from __future__ import annotations

import re

# The cost model (docs/globs.md, "Patterns refused as too slow"): a failing match costs
# about n ** degree regex steps for an n-character subject, where the degree counts the
# loops (`*`, `*(…)`, `+(…)`, `!(…)`, `**`) whose choices the engine may have to combine.
# Degree 2 stays well under a second on the longest path a file can have; degree 3 takes
# minutes. The alternatives of groups and braces multiply in as well.
_MAX_DEGREE = 2
_MAX_WORK = 1 << 16  # choices x 64 ** degree
_MAX_NEGATED = 1
_MAX_NESTING = 32  # wcmatch parses nested extglobs recursively: 3000 deep raised RecursionError
_MAX_PLAIN_GLOBSTARS = 1  # `**` segments allowed when the chain cannot be made atomic
_MAX_CODE_WORDS = 64  # Sardinas–Patterson is quadratic in the alternatives
_MAX_CODE_LENGTH = 1024  # ... and linear in the suffixes it may meet
_ANY = None  # an atom that may be any character (`?`, a negated or POSIX class)

# wcmatch's translation of a whole-segment `**` (path mode with DOTGLOB, and flat mode).
_GLOBSTARS = (r"(?:(?!(?:[/]|^)(?:\.{1,2})(?:$|[/])).)*?", r"(?:(?!(?:[/]|^)\.).)*?")
# Subjects a `**` cannot absorb whole, for which the atomic chain is not equivalent.
_UNABSORBABLE = (r"(?s:.*?)(?:^|(?<=/))\.{1,2}(?:/|\Z)", r"(?s:.*?)(?:^|(?<=/))\.")


class _Group:
    __slots__ = ("kind", "branches", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int) -> None:
        self.kind, self.text, self.start, self.end = kind, text, start, len(text)
        self.branches: list[list[object]] = [[]]

    @property
    def source(self) -> str:
        # sliced on demand: slicing 20,000 nested groups up front was quadratic
        return self.text[self.start:self.end]


def class_end(p: str, i: int) -> int:
    """Index of the `]` closing the class opened at p[i], or -1 (then `[` is literal)."""
    j = i + 1
    if p.startswith("^", j):
        j += 1
    if p.startswith("]", j):  # `[]...]` and `[^]...]`: first `]` is a member (not after `[!`)
        j += 1
    while j < len(p):
        if p[j] == "\\":
            j += 2
            continue
        if p.startswith("[:", j) and (k := p.find(":]", j + 2)) > 0:
            j = k + 2
            continue
        if p[j] == "]":
            return j
        j += 1
    return -1


def check(text: str) -> tuple[str | None, bool]:
    """For the rewritten (wcmatch-syntax) pattern ``text``: why it may not be compiled
    (or None), and whether :func:`atomic_globstars` may be applied to its regexes."""
    groups: list[_Group] = []
    variants = [1]  # brace alternatives: wcmatch tries each expansion in turn
    items, depth = _parse(text, groups, variants)
    if depth > _MAX_NESTING:
        return f"extglobs nested more than {_MAX_NESTING} deep; simplify the glob", False
    spans = any("/" in g.source for g in groups)  # then pieces between `**` vary in length
    return _problem(items, groups, spans, variants[0]), not spans


def _problem(items: list[object], groups: list[_Group], spans: bool, variants: int) -> str | None:
    choices, negated = min(variants, _MAX_WORK + 1), 0
    for group in groups:
        if group.kind in "*+" and not _unambiguous(group.branches):
            return (f"{group.source[:40]!r} can match a name in several ways (exponential "
                    "time); use distinct alternatives or one class like +([a-z0-9])")
        negated += group.kind == "!"
        if group.kind == "?" or (group.kind in "@!" and not _disjoint_starts(group.branches)):
            choices = min(choices * (len(group.branches) + (group.kind == "?")), _MAX_WORK + 1)
    if negated > _MAX_NEGATED:
        return "more than one negated extglob !(…) (slow to match); split the glob"
    segments = _segments(items)
    globstars = sum(1 for seg in segments if _is_globstar(seg))
    if spans and globstars > _MAX_PLAIN_GLOBSTARS:
        return "'**' more than once with an extglob containing '/' (slow to match); split the glob"
    degree = _degree(segments, atomic=not spans and globstars > 1)
    if degree > _MAX_DEGREE or choices * 64 ** degree > _MAX_WORK:
        return "too many wildcards, repetitions or alternatives (slow to match); split the glob"
    return None


def _segments(items: list[object]) -> list[list[object]]:
    segments: list[list[object]] = [[]]
    for item in items:
        if item == "/":
            segments.append([])
        else:
            segments[-1].append(item)
    return segments


def _is_globstar(segment: list[object]) -> bool:
    return segment == ["*", "*"]


def _degree(segments: list[list[object]], atomic: bool) -> int:
    """The exponent of a failing match's cost. ``ways`` is how many loops earlier parts
    leave the engine free to retry; a segment anchored by '/' on both sides keeps all
    but one of its own. A `**` is one more loop, but its choice of segment and the
    positions inside the segment after it trade off (n total), so they do not stack.
    With ``atomic`` every `**` but the last commits (atomic_globstars): its piece's
    choices are gone once it has matched."""
    degree = ways = 0
    saved: int | None = None
    last = max((i for i, seg in enumerate(segments) if _is_globstar(seg)), default=-1)
    after_globstar = False
    for index, segment in enumerate(segments):
        if _is_globstar(segment):
            if saved is not None:
                ways, saved = saved, None
            if atomic and index != last:
                saved = ways
            ways += 1
            degree, after_globstar = max(degree, ways), True
            continue
        work, loops = _work(segment)
        base = ways - 1 if after_globstar else ways
        degree = max(degree, base + max(work, 1 if after_globstar else 0))
        ways, after_globstar = ways + max(loops - 1, 0), False
    return degree


def _work(items: list[object]) -> tuple[int, int]:
    """(exponent of the work of one attempt, loops left to retry) for one segment or
    one branch, mirroring wcmatch: a `*` is atomic up to the next `*` unless a group
    lies between them; `!(B)rest` runs a lookahead over B and the rest of the segment."""
    work = ways = 0
    for i, item in enumerate(items):
        if item == "*":
            following = next((j for j in range(i + 1, len(items)) if items[j] == "*"), None)
            atomic = following is not None and not any(isinstance(x, _Group) for x in items[i + 1:following])
            work, ways = max(work, ways + 1), ways + (not atomic)
        elif isinstance(item, _Group):
            inner = [_work(b) for b in item.branches]
            if item.kind in "*+":
                work, ways = max(work, ways + 1), ways + 1
            elif item.kind == "!":
                look = max(w for w, _ in inner) + _work(items[i + 1:])[0]
                work, ways = max(work, ways + look, ways + 1), ways + 1
            else:
                work = max(work, ways + max(w for w, _ in inner))
                ways += max(n for _, n in inner)
    return work, ways


def atomic_globstars(regex: str, flat: bool) -> str | None:
    """An equivalent regex for subjects every ``**`` can absorb, in which each ``**`` but
    the last is atomic; None when the regex has fewer than two or they are nested.

    Why it is equivalent: a piece between two ``**`` matches a fixed number of whole
    segments (checked by the caller: no extglob spans ``/``), so taking its earliest
    match never hurts — the next ``**`` absorbs whatever a later choice would have
    skipped. wcmatch already does the same for ``*`` within a segment.
    """
    star = _GLOBSTARS[1 if flat else 0]
    parts = regex.split(star)
    if len(parts) < 3 or not all(_balanced(p) for p in parts[1:-1]):
        return None
    middle = "".join(f"(?>{star}{part})" for part in parts[1:-1])
    return parts[0] + middle + star + parts[-1]


def unabsorbable(flat: bool) -> str:
    """A lookahead body true for subjects with a segment some ``**`` cannot absorb."""
    return _UNABSORBABLE[1 if flat else 0]


def _parse(text: str, groups: list[_Group], variants: list[int]) -> tuple[list[object], int]:
    """Items of ``text``: a frozenset (one character from it), _ANY, "*" (a star or
    globstar), "/" or a _Group; every group is also appended to ``groups``, and
    ``variants[0]`` is multiplied by the alternatives of every brace set. Also returns
    the deepest nesting of groups."""
    top: list[object] = []
    depth = 0
    stack: list[tuple[_Group, int]] = []
    # one per open brace set: [expansions of its finished branches, of the branch being
    # read, of every set closed inside it]. Nested sets add up across commas and multiply
    # within a branch (`{a,{b,c}}` is 3, as bracex expands it, not 2 x 2); an unclosed
    # `{` is literal text, so only the sets closed inside it count (the third number).
    braces: list[list[int]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        current = stack[-1][0].branches[-1] if stack else top
        if c == "\\" and i + 1 < n:
            current.append(frozenset(text[i + 1]))
            i += 2
            continue
        if c == "[" and (end := class_end(text, i)) > 0:
            current.append(_class_set(text[i + 1:end]))
            i = end + 1
            continue
        if c in "@?*+!" and text.startswith("(", i + 1):
            group = _Group(c, text, i)
            groups.append(group)
            current.append(group)
            stack.append((group, i))
            depth = max(depth, len(stack))
            i += 2
            continue
        if c == ")" and stack:
            group, _ = stack.pop()
            group.end = i + 1
            i += 1
            continue
        if c == "|" and stack:
            stack[-1][0].branches.append([])
        elif c == "*":
            current.append("*")
        elif c == "?":
            current.append(_ANY)
        elif c == "/":
            current.append("/")
        elif c == "{":  # braces are expanded by wcmatch: transparent here, but counted
            braces.append([0, 1, 1])
        elif c == "," and braces:
            braces[-1][0] += braces[-1][1]
            braces[-1][1] = 1
        elif c == "}" and braces:
            done, branch, _ = braces.pop()
            _count_expansions(done + branch, braces, variants)
        else:
            current.append(frozenset(c))
        i += 1
    while braces:
        _count_expansions(braces.pop()[2], braces, variants)
    return top, depth  # an unclosed group runs to the end: wcmatch takes it literally; judged anyway


def _count_expansions(count: int, braces: list[list[int]], variants: list[int]) -> None:
    """Multiply a closed brace set's ``count`` into the set around it, or into the total."""
    if braces:
        outer = braces[-1]
        outer[1], outer[2] = min(outer[1] * count, _MAX_WORK + 1), min(outer[2] * count, _MAX_WORK + 1)
    else:
        variants[0] = min(variants[0] * count, _MAX_WORK + 1)


def _class_set(body: str) -> frozenset[str] | None:
    if body.startswith("^") or "[:" in body:
        return _ANY
    chars: set[str] = set()
    members = re.findall(r"\\.|.", body, re.S)
    k = 0
    while k < len(members):
        first = members[k][-1]
        if k + 2 < len(members) and members[k + 1] == "-":
            last = members[k + 2][-1]
            if ord(last) - ord(first) > 256:
                return _ANY
            chars.update(chr(o) for o in range(ord(first), ord(last) + 1))
            k += 3
        else:
            chars.add(first)
            k += 1
    return frozenset(chars)


def _fixed(branch: list[object]) -> bool:
    """A non-empty branch of single-character atoms only (fixed width, no groups)."""
    return bool(branch) and all(a is _ANY or isinstance(a, frozenset) for a in branch)


def _disjoint_starts(branches: list[list[object]]) -> bool:
    """No character can start two branches: the regex engine never has to choose."""
    seen: set[str] = set()
    for branch in branches:
        first = branch[0] if branch else _ANY
        if first is _ANY or not isinstance(first, frozenset) or seen & first:
            return len(branches) == 1
        seen |= first
    return True


def _unambiguous(branches: list[list[object]]) -> bool:
    """A repeated body that splits any text into iterations in at most one way."""
    if not all(_fixed(b) for b in branches):
        return False
    if _disjoint_starts(branches):
        return True
    if len(branches) > _MAX_CODE_WORDS or not all(
            all(isinstance(a, frozenset) and len(a) == 1 for a in b) for b in branches):
        return False
    words = ["".join(next(iter(a)) for a in b) for b in branches]  # type: ignore[arg-type]
    return sum(map(len, words)) <= _MAX_CODE_LENGTH and _uniquely_decodable(words)


def _uniquely_decodable(words: list[str]) -> bool:
    """Sardinas–Patterson: no text is two different concatenations of ``words``. Each
    dangling suffix is examined once (the union of the S_i): bounded by suffixes x words."""
    code = set(words)
    if len(code) != len(words):
        return False

    def dangling(left: set[str], right: set[str]) -> set[str]:
        return {b[len(a):] for a in left for b in right if b != a and b.startswith(a)}

    seen: set[str] = set()
    fresh = dangling(code, code)
    while fresh:
        if fresh & code:
            return False
        seen |= fresh
        fresh = (dangling(code, fresh) | dangling(fresh, code)) - seen
    return True


def _balanced(part: str) -> bool:
    """Whether a regex fragment opens and closes its own groups (so it can be wrapped)."""
    depth, i = 0, 0
    while i < len(part):
        c = part[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # a class: `]` first (after an optional `^`) is a member, `\\` escapes
            i += 2 if part.startswith("[^", i) else 1
            i += part.startswith("]", i)
            while i < len(part) and part[i] != "]":
                i += 2 if part[i] == "\\" else 1
            i += 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0
