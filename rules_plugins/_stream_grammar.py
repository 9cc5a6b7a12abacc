"""The stream-rule keys (seed 003 §6.5), validated strictly: every bad value says why.

Each ``parse_*`` takes an untrusted frontmatter value and returns its canonical form
(what lands in ``Rule.extra``) or raises ``ValueError`` whose message names the fix.
Parsing a canonical form again gives the same form, so imported rules and native rules
share one code path.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from rules_core.globs.matching import GlobError, compile_glob

SCOPE_WORDS = ("text", "thinking", "tool", "toolcall")
INTERRUPT_MODES = ("never", "prose-only", "tool-only", "always")
# The tools a condition's file-glob shorthand watches (as oh-my-pi does).
SHORTHAND_TOOLS = ("edit", "write")
# What the shorthand fires on: any character written to a matching file. (oh-my-pi uses
# ``.*``, which also matches nothing at all; ``(?s).`` needs one character.)
SHORTHAND_CONDITION = "(?s)."

_LEADING_FLAGS = re.compile(r"\(\?([a-zA-Z]+)\)")
_TOOL_TOKEN = re.compile(r"tool:([A-Za-z0-9_.-]+)(?:\((.*)\))?", re.DOTALL)
_JS_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")
_JS_BACKREF = re.compile(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>")
_REPEAT = re.compile(r"after-gap\s+(\d+)")
# The most items a pattern may unroll to when compiled (issue 26). The ``regex`` module
# writes a counted repetition out ``min`` times, and nested counts multiply: 251 bytes of
# ``(?:(?:a{100}){100}){100}`` asked for ~150 MB, one more ``{100}`` for tens of GB. An
# item costs ~260 bytes compiled, so the cap holds one pattern near 2.6 MB.
MAX_EXPANSION = 10_000


def strings(value: Any, key: str, example: str) -> tuple[str, ...]:
    """A string or a list of strings, blank items dropped; at least one item."""
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise ValueError(f"must be a string or a list of strings, e.g. {key}: {example}")
    kept = tuple(dict.fromkeys(item.strip() for item in items if item.strip()))
    if not kept:
        raise ValueError(f"is empty; write e.g. {key}: {example} or remove the key")
    return kept


# -- condition -----------------------------------------------------------------------------


def parse_condition(value: Any) -> tuple[str, ...]:
    """Regular expressions (a leading ``(?i)``, ``(?m)``, ``(?s)`` group is honoured), or
    file-glob shorthands such as ``*.ts`` (see ``split_condition``)."""
    tokens = strings(value, "condition", '"console\\.log\\("')
    for token in tokens:
        if is_likely_file_glob(token):
            try:
                compile_glob(token)
            except GlobError as exc:
                raise ValueError(f"file glob {token!r} cannot be used: {exc}") from None
            continue
        compiled = compile_condition(token)
        if compiled.search("") is not None:
            raise ValueError(
                f"pattern {token!r} matches empty text, so it would fire on every output; "
                "make it require at least one character (e.g. use + instead of *)"
            )
    return tokens


def split_condition(tokens: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(regular expressions, scope entries inferred from file-glob shorthands)."""
    patterns = [t for t in tokens if not is_likely_file_glob(t)]
    inferred = [f"tool:{tool}({t})" for t in tokens if is_likely_file_glob(t) for tool in SHORTHAND_TOOLS]
    if inferred and not patterns:
        patterns.append(SHORTHAND_CONDITION)
    return tuple(patterns), tuple(inferred)


def is_likely_file_glob(token: str) -> bool:
    """oh-my-pi's heuristic: glob characters, no regex-only ones, and a ``/`` or ``*.ext``."""
    text = token.strip()
    if not text or re.search(r"[\\^$+|()]", text) or not re.search(r"[?*\[\]{}]", text):
        return False
    return "/" in text or re.fullmatch(r"\*\.[^\s/]+", text) is not None


def to_python(pattern: str) -> str:
    """The peers write JavaScript regular expressions; the few spellings Python reads
    differently are translated (named groups and their back-references)."""
    pattern = _JS_NAMED_GROUP.sub("(?P<", pattern)
    return _JS_BACKREF.sub(r"(?P=\1)", pattern)


def compile_condition(pattern: str) -> Any:
    """A ``regex`` pattern: unlike ``re`` it can give up after a time limit, so a rule in
    an unvetted repository cannot hang its host with catastrophic backtracking. Its
    expanded size is bounded before it is compiled, and the module's pattern cache never
    keeps it (the engine decides what stays)."""
    import regex  # here: slow to import, and only stream rules need it

    try:
        size = expanded_size(pattern)
        if size > MAX_EXPANSION:
            raise ValueError(
                f"pattern {pattern!r} would unroll to more than {MAX_EXPANSION:,} items when compiled (the "
                "limit; nested counts multiply: (?:a{100}){100} is 10,000); lower the counts or use + and * "
                "instead of large {n} repetitions"
            )
        return regex.compile(to_python(pattern), cache_pattern=False)
    except regex.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise ValueError(
            f"pattern {pattern!r} is not a valid regular expression ({exc.msg}{where}); "
            "escape special characters such as ( [ . * + ? with a backslash"
        ) from None
    except (RecursionError, OverflowError, MemoryError):
        raise ValueError(f"pattern {pattern!r} is too large or too deeply nested to compile") from None


def expanded_size(pattern: str) -> int:
    """How many items ``regex`` writes out for ``pattern``: its parse tree walked with each
    counted repetition multiplying its body by its minimum count (what the module unrolls;
    the optional rest is one loop). Counting stops early once over the cap. Raises
    ``regex.error`` for a pattern the module cannot parse."""
    import regex

    try:
        parsed = _parse_tree(to_python(pattern))
    except regex.error:
        raise
    except Exception:  # a private module: if it changes, compile as before rather than fail
        return 0
    return _size(parsed, 0)


def _parse_tree(text: str) -> Any:
    """The ``regex`` module's own parse of ``text`` (its private parser)."""
    import regex
    from regex import _regex_core as core

    flags = 0  # compile_condition passes none: the pattern's own flags are in its text
    while True:  # as regex.compile does: a global flag set mid-pattern restarts the parse
        source = core.Source(text)
        info = core.Info(flags, source.char_type, {})
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            return core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            flags = info.global_flags


def _size(node: Any, depth: int) -> int:
    if depth > 200:  # the parser itself refuses far less nesting; stay safe if it changes
        return MAX_EXPANSION + 1
    if hasattr(node, "min_count"):  # greedy, lazy and possessive repetitions
        body = _size(node.subpattern, depth + 1)
        return min(body * max(1, int(node.min_count)), MAX_EXPANSION + 1)
    children: list[Any] = []
    for name in ("items", "branches"):
        value = getattr(node, name, None)
        if isinstance(value, (list, tuple)) and not isinstance(node, _set_types()):
            children.extend(value)
    for name in ("subpattern", "yes_item", "no_item"):
        value = getattr(node, name, None)
        if value is not None:
            children.append(value)
    if not children:
        return len(getattr(node, "characters", ())) or 1
    total = 0
    for child in children:
        total += _size(child, depth + 1)
        if total > MAX_EXPANSION:
            return MAX_EXPANSION + 1
    return total


def _set_types() -> tuple[type, ...]:
    from regex import _regex_core as core

    return (core.SetBase,)


def scoped_form(pattern: str) -> str:
    """The pattern with a leading global flag group turned into a scoped one, so it can
    join other patterns in one alternation: ``(?i)foo`` → ``(?i:foo)``."""
    python = to_python(pattern)
    match = _LEADING_FLAGS.match(python)
    if match:
        return f"(?{match.group(1)}:{python[match.end():]})"
    return f"(?:{python})"


def max_width(compiled: Any) -> int | None:
    """The longest match the pattern can make, or ``None`` when unbounded (or unknown).

    Read by the parser of the engine that runs the pattern: the stdlib's parser reads
    ``regex`` syntax it does not know as literal text — a fuzzy count ``{i<=30}`` became
    seven characters, so a fuzzy match split across two deltas never fired (issue 14).
    The ``regex`` parser calls fuzzy matching, back-references and graphemes unbounded."""
    try:
        from regex import _regex_core as core

        parsed = _parse_tree(compiled.pattern)
        parsed.fix_groups(compiled.pattern, False, False)
        high = parsed.max_width()
    except Exception:  # a private module: if it changes, treat every pattern as unbounded
        return None
    return int(high) if high < core.UNLIMITED else None


def is_joinable(pattern: str, compiled: Any) -> bool:
    """Patterns that refer to their own groups cannot share one alternation."""
    return not compiled.groupindex and not re.search(r"\\[1-9]|\(\?P=|\(\?\(", to_python(pattern))


# -- scope ---------------------------------------------------------------------------------


def parse_scope(value: Any) -> tuple[str, ...]:
    """Canonical scope tokens: ``text``, ``thinking``, ``tool``, ``tool:<name>`` and
    ``tool:<name>(<glob>)`` (one token per glob)."""
    raw = strings(value, "scope", '"text, tool:edit(*.ts)"')
    tokens: dict[str, None] = {}
    for item in raw:
        for token in split_top_level(item):
            for canonical in _scope_token(token):
                tokens.setdefault(canonical, None)
    if not tokens:
        raise ValueError('names no surface; write e.g. scope: "text, tool:edit(*.ts)" or remove the key')
    return tuple(tokens)


def split_top_level(text: str) -> list[str]:
    """Split on commas outside ``()``, ``[]`` and ``{}``; strip quotes a YAML slip left
    (``scope: "text","thinking"``)."""
    tokens: list[str] = []
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    current: list[str] = []
    for char in text:
        if char in depth:
            depth[char] += 1
        elif char in closing:
            depth[closing[char]] = max(0, depth[closing[char]] - 1)
        elif char == "," and not any(depth.values()):
            tokens.append("".join(current))
            current = []
            continue
        current.append(char)
    tokens.append("".join(current))
    return [t for t in (_unquote(t.strip()) for t in tokens) if t]


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        return token[1:-1].strip()
    return token


def _scope_token(token: str) -> list[str]:
    lowered = token.lower()
    if lowered in ("text", "thinking"):
        return [lowered]
    if lowered in ("tool", "toolcall"):
        return ["tool"]
    match = _TOOL_TOKEN.fullmatch(token)
    if match is None:
        close = difflib.get_close_matches(lowered, [*SCOPE_WORDS, "tool:edit", "tool:write"], n=1, cutoff=0.6)
        hint = f" — did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"scope token {token!r} is not one of text, thinking, tool, tool:<name>, "
            f"tool:<name>(<glob>){hint}"
        )
    name, inside = match.group(1).lower(), match.group(2)
    if inside is None:
        return [f"tool:{name}"]
    # A comma between globs is a list, not part of one glob (oh-my-pi kept
    # ``tool:edit(a.ts, b.ts)`` as one glob that never matched anything).
    globs = [g for g in (_unquote(g.strip()) for g in _split_globs(inside)) if g]
    if not globs:
        raise ValueError(f"scope token {token!r} has empty parentheses; write tool:{name}(*.ts) or tool:{name}")
    for glob in globs:
        try:
            compile_glob(glob)
        except GlobError as exc:
            raise ValueError(f"scope token {token!r}: glob {glob!r} cannot be used: {exc}") from None
    return [f"tool:{name}({glob})" for glob in globs]


def _split_globs(text: str) -> list[str]:
    """Commas outside braces separate globs; ``{ts,tsx}`` stays one glob."""
    parts, depth, current = [], 0, []
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


# -- interruptMode, repeat -------------------------------------------------------------------


def parse_interrupt_mode(value: Any) -> str:
    if isinstance(value, str) and value.strip() in INTERRUPT_MODES:
        return value.strip()
    close = difflib.get_close_matches(str(value), INTERRUPT_MODES, n=1, cutoff=0.5)
    hint = f" — did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"is {value!r}; use one of {', '.join(INTERRUPT_MODES)}{hint}")


def parse_repeat(value: Any) -> str:
    """``once`` (the default) or ``after-gap N``: may fire again after N turns."""
    if isinstance(value, str):
        text = " ".join(value.split())
        if text == "once":
            return text
        match = _REPEAT.fullmatch(text)
        if match and int(match.group(1)) >= 1:
            return f"after-gap {int(match.group(1))}"
    raise ValueError(f"is {value!r}; write repeat: once, or repeat: after-gap 3 (may fire again 3 turns later)")


def repeat_gap(canonical: str) -> int | None:
    return None if canonical == "once" else int(canonical.split()[1])
