"""Tests for rules_core.globs.matching: picomatch truth tables, helpers, error cases, properties."""
from __future__ import annotations

import contextlib
import copy
import json
import pickle
from pathlib import Path
from typing import Iterator
from unittest import mock

import bracex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rules_core.globs.matching as globs
from rules_core.globs.matching import (
    EXPANSION_BUDGET,
    Glob,
    GlobError,
    compile_flat,
    compile_glob,
    last_segment,
    literal_prefix,
    normalize_path,
)

DATA = Path(__file__).parent.parent / "data"

# Rows of the picomatch truth tables that we knowingly answer differently,
# as (file, pattern, input). Must be exactly the failing rows and must match
# the deviations table in docs/globs.md.
DEVIATIONS: frozenset[tuple[str, str, str]] = frozenset()


def _rows(name: str, key: str) -> list[tuple[str, str, str, bool]]:
    with (DATA / name).open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [(name, r["pattern"], r[key], r["match"]) for r in rows]


DOT_ROWS = _rows("picomatch-dot.jsonl", "path")
FLAT_ROWS = _rows("picomatch-flat.jsonl", "token")


def _answer(name: str, pattern: str, subject: str) -> bool:
    if name == "picomatch-flat.jsonl":
        return compile_flat(pattern).match(subject)
    glob = compile_glob(pattern)
    answer = glob.match(subject)
    assert glob.match_normalized(normalize_path(subject)) is answer
    return answer


@pytest.mark.parametrize(
    ("name", "pattern", "subject", "expected"),
    DOT_ROWS + FLAT_ROWS,
    ids=[f"{n.split('-')[1].split('.')[0]}{i}" for i, (n, *_) in enumerate(DOT_ROWS + FLAT_ROWS)],
)
def test_truth_table(name: str, pattern: str, subject: str, expected: bool) -> None:
    agrees = _answer(name, pattern, subject) is expected
    documented = (name, pattern, subject) in DEVIATIONS
    assert agrees is not documented, (
        "fixed deviation: remove it from DEVIATIONS and docs/globs.md" if documented
        else f"picomatch says {expected} for {pattern!r} vs {subject!r}")


def test_deviations_refer_to_real_rows() -> None:
    keys = {(n, p, s) for n, p, s, _ in DOT_ROWS + FLAT_ROWS}
    assert DEVIATIONS <= keys
    assert len(DOT_ROWS) > 1000 and len(FLAT_ROWS) > 100


# Extra answers checked against picomatch 4.0.4 (`{dot: true}` unless flat).
PICOMATCH_EXTRA = [
    ("app/**/[id]/*.tsx", "app/blog/[id]/page.tsx", True),  # a class also matches its own text
    ("app/**/[id]/*.tsx", "app/blog/i/page.tsx", True),
    ("app/**/[id]/*.tsx", "app/blog/x/page.tsx", False),
    ("v[0-9]+.md", "v123.md", True),  # `+` after a class repeats it
    ("v[0-9]+.md", "v1+.md", False),
    ("*.ts|*.tsx", "a.tsx", True),  # top-level `|` separates alternatives...
    ("*.ts|*.tsx", "a.js", False),
    ("a|b", "a", False),  # ...except in a pattern with no other syntax
    ("a|b", "a|b", True),
    ('"*.md"', "*.md", True),  # double quotes make text literal
    ('"*.md"', "a.md", False),
    ("{a,b/*.md", "{a,b/x.md", False),  # unclosed brace: only the literal text matches
    ("src/{a,b", "src/{a,b", True),
    ("!{a,b", "x", False),
    ("file{1..10}.txt", "file0.txt", True),  # ranges are character classes: [1-10]
    ("file{1..10}.txt", "file10.txt", False),
    ("{3..1}", "2", True),
    ("{1..100000}{1..100000}", "11", True),
    ("{1..100000}{1..100000}", "50", False),
    ("src/**/**", "src", True),
    ("*.*", "a.", False),
    ("*.*", "a.b", True),
    ("**/*.*", "x/a.", False),
    ("(a|b)+.md", "abba.md", True),
    ("(a|b)?.md", ".md", True),
    ("{[a,b],c}", ",", True),  # a comma inside a class or group never splits a brace
    ("{(a,b),c}", "a,b", True),
    ("{(a,b),c}", "a", False),
    ("!!!a", "a", False),
    ("!./a", "b", True),
    ("?(a|b)c", "c", True),
]
PICOMATCH_EXTRA_FLAT = [
    ("claude-[0-9]+-*", "claude-35-sonnet", True),
    ("{main,release/*}", "release/1.2", True),
    (".*", ".", False),
    ("*", ".hidden", False),
    ("!(main)", "dev", True),
    ("!(main)", "main", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), PICOMATCH_EXTRA)
def test_more_picomatch_answers(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern).match(path) is expected


@pytest.mark.parametrize(("pattern", "token", "expected"), PICOMATCH_EXTRA_FLAT)
def test_more_picomatch_flat_answers(pattern: str, token: str, expected: bool) -> None:
    assert compile_flat(pattern).match(token) is expected


def test_backslash_before_letter_is_literal() -> None:
    # picomatch would hand `\d` to the JS regex engine; we keep the backslash.
    glob = compile_glob("src/a\\d")
    assert glob.match("src/a\\d") and not glob.match("src/a1") and not glob.match("src/ad")


def test_flat_mode_does_not_normalise_tokens() -> None:
    assert not compile_flat("release/*").match("./release/1")
    assert compile_glob("release/*").match("./release/1")


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("a/b", "a/b"), ("./a/b", "a/b"), ("././a", "a"), ("a//b///c", "a/b/c"), ("a/b/", "a/b"),
        ("a/./b/.", "a/b"), (".", ""), ("./", ""), ("", ""), ("/", "/"), ("//a//", "/a"),
        ("/./a", "/a"), ("../a/..", "../a/.."), ("a\\b/", "a\\b"), (".env", ".env"), ("..", ".."),
    ],
)
def test_normalize_path(raw: str, normal: str) -> None:
    assert normalize_path(raw) == normal
    assert normalize_path(normal) == normal


@pytest.mark.parametrize(
    ("pattern", "segment"),
    [
        ("**/*.{ts,py}", "*.{ts,py}"), ("src/**/*.py", "*.py"), ("Dockerfile", "Dockerfile"),
        ("a/{b/c,d}", "{b/c,d}"), ("a/@(x/y|z)", "@(x/y|z)"), ("a/[/]b", "[/]b"), ("src/", ""),
        ("a\\/b", "a\\/b"), ("x/a[b", "a[b"),
    ],
)
def test_last_segment(pattern: str, segment: str) -> None:
    assert last_segment(pattern) == segment


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        ("src/**/*.ts", "src"), ("packages/*/src/**", "packages"), ("**/*.ts", ""), ("README.md", ""),
        ("!x", ""), ("!src/a/*", ""), ("./src/a/*.ts", "src/a"), ("docs/api/x.md", "docs/api"),
        ("{src,lib}/*.js", ""), ("a/@(b)/c", "a"), ("a/b\\*/c", "a"), ("a/[bc]/d", "a"),
        ("/src/*", "/src"), ("src//x/*.md", "src/x"), ("src/a.ts|lib/*.ts", ""), ('"a"/b', ""),
    ],
)
def test_literal_prefix(pattern: str, prefix: str) -> None:
    assert literal_prefix(pattern) == prefix


def test_literal_prefix_is_safe_for_pruning() -> None:
    # every path a positive pattern matches lies in (or is) its literal prefix
    for _, pattern, path, expected in DOT_ROWS:
        prefix = literal_prefix(pattern)
        if expected and prefix:
            norm = normalize_path(path)
            assert norm == prefix or norm.startswith(prefix + "/"), (pattern, path)


@pytest.mark.parametrize("pattern", ["", "!", "!!", "./", "!./", "././"])
def test_empty_patterns_are_errors(pattern: str) -> None:
    with pytest.raises(GlobError, match="empty"):
        compile_glob(pattern)
    with pytest.raises(GlobError):
        compile_flat(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "{a,b,c,d,e,f,g,h,i,j}" * 4,
        "{a,b}" * 11,
        "src/{a,{b,{c,{d,e}}}}{1,2,3,4,5,6,7,8,9,0}{1,2,3,4,5,6,7,8,9,0}{x,y,z}",
        "{" * 200 + "a,b" + "}" * 200 + "{a,b}" * 20,
        "{-1..100000}",  # a range picomatch cannot read as a class is expanded by wcmatch
    ],
)
def test_huge_brace_expansion_is_an_error_before_expanding(pattern: str) -> None:
    with counting_expansion() as built, pytest.raises(GlobError, match="brace expansion") as info:
        compile_glob(pattern)
    assert built == [0]  # refused on bracex's count (or the group cap): nothing expanded
    assert isinstance(info.value, ValueError) and len(str(info.value)) < 80


def test_picomatch_style_ranges_do_not_explode() -> None:
    globs._compile.cache_clear()  # compiled earlier by the table above: a cache hit builds nothing
    with counting_expansion() as built:
        glob = compile_glob("{1..100000}{1..100000}")  # picomatch: the class [1-100000] twice
    assert glob.match("10") and not glob.match("22")
    # one variant, no expansion: built once when counting, once when translating
    assert built[0] == 2 * len("[1-100000]" * 2) and len(glob.regex.pattern) < 300


@contextlib.contextmanager
def counting_expansion() -> Iterator[list[int]]:
    """Counts the characters bracex.iexpand builds (wcmatch expands braces through it)."""
    built = [0]
    real = bracex.iexpand

    def counted(*args: object, **kwargs: object) -> Iterator[str]:
        for variant in real(*args, **kwargs):  # type: ignore[arg-type]
            built[0] += len(variant)
            yield variant

    with mock.patch.object(bracex, "iexpand", counted):
        yield built


def test_overlong_pattern_is_an_error() -> None:
    with pytest.raises(GlobError, match="longer"):
        compile_glob("a" * 70000)


def test_glob_is_immutable_and_hashable() -> None:
    a, b, c = compile_glob("src/*.ts"), compile_glob("src/*.ts"), compile_flat("src/*.ts")
    assert a == b and hash(a) == hash(b) and a != c and len({a, b, c}) == 2
    assert a.pattern == "src/*.ts" and isinstance(a, Glob)
    with pytest.raises(AttributeError):
        a.pattern = "x"
    clone = pickle.loads(pickle.dumps(c))
    assert clone == c and clone.flat and clone.match("src/a.ts") and copy.deepcopy(a) == a


@pytest.mark.parametrize("subject", ["", "/", "\x00", "\n", "a\nb", "\ud800", "x" * 10000, "a/" * 500, "é/日本"])
def test_match_never_raises(subject: str) -> None:
    for pattern in ["**", "!**", "*.md", "src/**", "[", "{a,b", "!(a)", "a\\"]:
        for glob in (compile_glob(pattern), compile_flat(pattern)):
            assert glob.match(subject) in (True, False)
            assert glob.match_normalized(subject) in (True, False)
    assert not compile_glob("**").match("") and not compile_glob("!a").match("")


# --- properties -------------------------------------------------------------

GLOB_CHARS = st.sampled_from(list("ab./*?!@+[]{}(),|^-:\\\"~ ") + ["**", "[:alpha:]", "..", "x{1..3}"])
GLOBISH = st.lists(GLOB_CHARS, max_size=20).map("".join)
PATHS = st.lists(st.sampled_from(["a", "b", ".", "..", "/", "x.md", ".env", "!", "[", "{", "é"]),
                 max_size=12).map("".join)
PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _compile_or_error(pattern: str, flat: bool) -> Glob | None:
    try:
        return compile_flat(pattern) if flat else compile_glob(pattern)
    except GlobError as exc:
        assert str(exc)
        return None


@PROPS
@given(st.one_of(st.text(max_size=40), GLOBISH), st.booleans())
def test_compile_returns_glob_or_globerror(pattern: str, flat: bool) -> None:
    globs._compile.cache_clear()
    with counting_expansion() as built:
        glob = _compile_or_error(pattern, flat)
    assert glob is None or glob.pattern == pattern
    # What compiling may build is bounded: the budget, plus the first variant that
    # counting the expansions makes (rewriting can make a pattern a few times longer).
    assert built[0] <= EXPANSION_BUDGET + 64 * (len(pattern) + 1)


@PROPS
@given(GLOBISH, st.one_of(PATHS, st.text(max_size=30)))
def test_match_never_raises_property(pattern: str, path: str) -> None:
    for flat in (False, True):
        glob = _compile_or_error(pattern, flat)
        if glob is not None:
            assert glob.match(path) in (True, False)
            assert glob.match_normalized(path) in (True, False)


@PROPS
@given(st.one_of(st.text(max_size=40), GLOBISH))
def test_literal_prefix_is_segment_prefix(pattern: str) -> None:
    norm, prefix = normalize_path(pattern), literal_prefix(pattern)
    assert prefix == "" or norm == prefix or norm.startswith(prefix + "/")


@PROPS
@given(st.one_of(PATHS, st.text(max_size=30)))
def test_normalize_path_is_idempotent(path: str) -> None:
    norm = normalize_path(path)
    assert normalize_path(norm) == norm
    assert "//" not in norm and not norm.startswith("./") and (norm == "/" or not norm.endswith("/"))
