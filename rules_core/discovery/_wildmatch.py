"""Git's wildmatch (wildmatch.c, WM_PATHNAME mode) as regexes that match in linear time.

Used for ``.gitignore`` lines (rules_core.discovery.ignore). Git's own matcher is a recursive
backtracker with two pruning return codes; the stdlib regex pathspec built from a line
had no such pruning: ``*a*a*a*a*a*a*b`` against a name of 200 ``a`` backtracked for hours
(issue 14, attack 2). Here a line becomes a regex in which no two loops can trade
characters back and forth:

* within a run without ``**``, every ``*`` but the last commits (an atomic group) to the
  first place where the fixed piece after it matches: a ``*`` never crosses ``/`` and the
  pieces have a fixed width, so a later place could only leave the next ``*`` less to
  absorb — the classic greedy glob match, linear per start;
* every ``**`` but the last commits likewise to the first place where the run after it
  matches: that run spans whole segments and ends at a ``/``, so a later place could
  only leave the next ``**`` less to absorb (as globs.py does for rule globs).

Matching one path costs about (path length) x (line length), as in git. The regexes are
for bytes (git compares bytes: `?` is one byte of a UTF-8 name) and for subjects ending
in NUL, which no path contains. tests/suites/test_attacks_patterns.py checks them against
a line-for-line port of git's ``dowild`` on random lines and paths.
"""

from __future__ import annotations

NOT_SLASH = r"[^/\x00]"  # `*`, `?` and classes never match `/` (WM_PATHNAME); NUL ends a subject
_ANY = r"[^\x00]"
_SLASH, _STAR, _BACKSLASH, _QUESTION, _OPEN, _CLOSE, _DASH, _COLON = b"/*\\?[]-:"
_STAR_ATOM = "*"  # marks a `*` among the atoms of a run
_PUNCT = frozenset(range(33, 48)) | frozenset(range(58, 65)) | frozenset(range(91, 97)) | frozenset(range(123, 127))
_UPPER, _LOWER, _DIGIT = frozenset(range(65, 91)), frozenset(range(97, 123)), frozenset(range(48, 58))
_POSIX = {  # git's ASCII-only ctype (ctype.c, git-compat-util.h)
    b"alnum": _UPPER | _LOWER | _DIGIT, b"alpha": _UPPER | _LOWER, b"blank": frozenset(b" \t"),
    b"cntrl": frozenset(range(32)) | {127}, b"digit": _DIGIT, b"graph": frozenset(range(33, 127)),
    b"lower": _LOWER, b"print": frozenset(range(32, 127)), b"punct": _PUNCT,
    b"space": frozenset(b"\t\n\r "), b"upper": _UPPER, b"xdigit": _DIGIT | frozenset(b"abcdefABCDEF"),
}


def translate(p: bytes) -> str | None:
    """The regex for what git's wildmatch(p, text, WM_PATHNAME) matches; None
    when p can never match (git aborts on a malformed class or a trailing backslash)."""
    runs: list[list[str]] = [[]]  # atoms between `**`s
    crossings: list[str] = []  # each `**` between two runs: "dirs" (`**/`) or "any"
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == _STAR:
            j = i
            while j < n and p[j] == _STAR:
                j += 1
            # wildmatch: `**` is special only as a whole segment (or the pattern's start)
            if j - i > 1 and (i == 0 or p[i - 1] == _SLASH) and (j == n or p[j] == _SLASH or p[j:j + 2] == b"\\/"):
                dirs = j < n and p[j] == _SLASH  # `**/` may also match nothing, slash included
                crossings.append("dirs" if dirs else "any")
                runs.append([])
                i = j + dirs
            else:
                runs[-1].append(_STAR_ATOM)
                i = j
            continue
        if c == _BACKSLASH:
            if i + 1 == n:
                return None
            atom, i = literal(p[i + 1:i + 2]), i + 2
        elif c == _QUESTION:
            atom, i = NOT_SLASH, i + 1
        elif c == _OPEN:
            found = _class(p, i)
            if found is None:
                return None
            atom, i = found
        else:
            atom, i = literal(p[i:i + 1]), i + 1
        runs[-1].append(atom)
    out = _run(runs[0])
    if crossings and out:
        out = f"(?>{out})"  # it ends at the `/` before the first `**`: nothing to revisit
    for k, kind in enumerate(crossings):
        last = k == len(crossings) - 1
        if kind == "dirs":
            skip = f"(?:{_ANY}*/)?" if last else f"(?:{_ANY}*?/)??"
        else:
            skip = f"{_ANY}*" if last else f"{_ANY}*?"
        out += skip + _run(runs[k + 1]) if last else f"(?>{skip}{_run(runs[k + 1])})"
    return out


def _run(atoms: list[str]) -> str:
    """A run without `**`: every `*` but the last commits to its first fit (module doc)."""
    pieces: list[list[str]] = [[]]
    for atom in atoms:
        if atom is _STAR_ATOM:
            pieces.append([])
        else:
            pieces[-1].append(atom)
    out = "".join(pieces[0])
    for k, piece in enumerate(pieces[1:], 1):
        body = "".join(piece)
        out += f"(?>{NOT_SLASH}*?{body})" if k < len(pieces) - 1 else f"{NOT_SLASH}*{body}"
    return out


def _class(p: bytes, i: int) -> tuple[str, int] | None:
    """The class opened by p[i] (`[`) as wildmatch reads it: (regex, index after its `]`),
    or None when it is malformed. `!` or `^` negates; the first member may be `]`; `\\`
    escapes; `a-z` is a range only after a plain member; `[:alpha:]` and friends."""
    n = len(p)
    i += 1
    negated = i < n and p[i] in b"!^"
    i += negated
    members: set[int] = set()
    previous, first = 0, True  # C's prev_ch: 0 where no range may start
    while True:
        if i >= n:
            return None
        c = p[i]
        if c == _CLOSE and not first:
            break
        first = False
        if c == _BACKSLASH:
            i += 1
            if i >= n:
                return None
            members.add(p[i])
            previous = p[i]
        elif c == _DASH and previous and i + 1 < n and p[i + 1] != _CLOSE:
            i += 1
            if p[i] == _BACKSLASH:
                i += 1
                if i >= n:
                    return None
            members.update(range(previous, p[i] + 1))
            previous = 0
        elif c == _OPEN and p[i + 1:i + 2] == b":" and (end := p.find(b"]", i + 2)) > i + 2 and p[end - 1] == _COLON:
            named = _POSIX.get(p[i + 2:end - 1])
            if named is None:
                return None  # wildmatch: a malformed [:class:] aborts
            members |= named
            previous, i = 0, end
        elif c == _OPEN and p[i + 1:i + 2] == b":" and p.find(b"]", i + 2) < 0:
            return None
        else:
            members.add(c)
            previous = c
        i += 1
    chosen = (set(range(256)) - members if negated else members) - {_SLASH, 0}
    return _byte_set(chosen), i + 1


def _byte_set(chosen: set[int]) -> str:
    if not chosen:
        return "(?!)"
    ranges: list[str] = []
    for value in sorted(chosen):
        if ranges and ranges[-1][1] == value - 1:
            ranges[-1] = (ranges[-1][0], value)  # type: ignore[call-overload]
        else:
            ranges.append((value, value))  # type: ignore[arg-type]
    return "[" + "".join(f"\\x{a:02x}" if a == b else f"\\x{a:02x}-\\x{b:02x}" for a, b in ranges) + "]"


def literal(data: bytes) -> str:
    return "".join(chr(c) if chr(c).isalnum() and c < 128 else f"\\x{c:02x}" for c in data)
