"""Glob matching (rules_core.globs.matching, ._guard, ._budget) pinned where mutation
testing found it unpinned (issue 32, docs/mutation.md "Glob matching").

Every matching answer below was asked of picomatch 4.0.4 itself (`picomatch(p, {dot:
true})(s)` for paths, `picomatch(p)(s)` for flat tokens), the library whose answers
tests/data/picomatch-*.jsonl record; none is invented here.
"""

from __future__ import annotations

import string

import bracex
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rules_core.globs._guard as _glob_guard
import rules_core.globs.matching as globs
from rules_core.globs._budget import MAX_BRACE_GROUPS, BoundedCache
from rules_core.globs.matching import MAX_SEGMENT, MAX_SUBJECT, GlobError, compile_flat, compile_glob
from rules_core.rule_tests.pytest_plugin import rule_text

# (pattern, path, picomatch's answer with {dot: true})
PICOMATCH = [
    # `!(x)` followed by more pattern only tests that the text does not START with x ...
    ("!(a)X", "abX", False), ("!(a)X", "bX", True),
    ("!(a) ", "ab ", False), ("!(a) ", "b ", True),
    ("!(a).ts", "ab.ts", False), ("!(a).ts", "b.ts", True),
    # ... unless only `)` follow (the end of an enclosing group): then it is "not exactly x"
    ("@(!(a))", "ab", True), ("@(!(a))", "a", False), ("@(!(a))", "b", True),
    # ... or a star inside is followed by one plain extension: "not exactly x" before it
    ("!(*.test).ts", "a.test.ts", False), ("!(*.test).ts", "a.ts", True),
    ("!(*.test).ts", "a.testx.ts", True), ("!(*.test).ts", "a.tests.ts", True),
    ("!(*.test).ts", "a.test.x.ts", True),
    # ... or what is inside holds a `/` (then the glob is also accepted as fast enough)
    ("!(a/*)*", "b", True), ("!(a/*)*", "ab", True), ("!(a/*)*", "a/b", False),
    ("a!(/*)*", "a", True), ("a!(/*)*", "ab", True), ("a!(/*)*", "a/b", False),
    # `{x..y}` is the class [x-y] with sorted ends; JS refuses an out-of-order class, and
    # then the text itself is meant
    ("{01..03}.txt", "01..03.txt", True), ("{01..03}.txt", "02.txt", False),
    ("x{01..03}", "x01..03", True),
    ("{abc..d}", "c", True), ("{abc..d}", "d", True), ("{abc..d}", "-", False),
    ("{a..c..e}", "-", True), ("{a..c..e}", "e", True), ("{a..c..e}", "d", False),
    ("{a..c..e}", "X", False),
    # `+`/`?` after `]` or `)` is the regex quantifier, unless it opens an extglob `+(`
    ("[ab]+(c)", "ac", True), ("[ab]+(c)", "acc", True), ("[ab]+(c)", "abc", False),
    ("(a)+(c)", "ac", True), ("(a)+(c)", "acc", True), ("(a)+(c)", "aac", False),
    ("[ab]+x(c)", "abxc", True), ("[ab]+x(c)", "axc", True), ("[ab]+x(c)", "ax(c)", False),
    # `[!a]` is the set {!, a}; a comma in a class is a member
    ("[!a]", "!", True), ("[!a]", "X", False), ("[a,b]", ",", True), ("[a,b]", "X", False),
    # stars in one name commit to the next literal piece: several are fast enough
    ("*a*b*c*", "xaybzc", True), ("*a*b*c*", "xaybz", False),
    ("*-*-*.md", "a-b-c.md", True), ("*-*-*.md", "a-b.md", False),
    ("***", "xb", True), ("***", "a/b", False), ("**!(a)", "ab", True), ("**!(a)", "a", True),
    # a trailing `/**` matches the folder itself, except after a star
    ("a*/**", "ab", False), ("a*/**", "ab/c", True), ("/**", "/a", True), ("x/**/**", "x", True),
    ("a/**", "a", True), ("*a/**", "xa", True), ("aX/**", "aX", True),
    ("{a", "None", False), ("{a", "{a", True),  # a `{` never closed: only the text itself
    # a top-level `|` splits whole alternatives, and the ending of one is not required
    ("**/*.ts|*.md", "x/a.ts", True), ("**/*.ts|*.md", "b.md", True),
    # any number of `**` segments with plain ones between them is accepted
    ("**/a/**/b/**/c/**/*.ts", "x/a/b/y/c/z.ts", True), ("**/a/**/b/**/c/**/*.ts", "x/a/b/y/c/z.js", False),
    # `]` first in a class is a member
    ("*[]a]", "x]", True), ("*[]a]", "xa", True), ("*[]a]", "xb", False),
    ("x[^]a]", "xb", True), ("x[^]a]", "x]", False),
    ("^[a]", "^a", True), ("^*[a]", "^xa", True),  # a `^` before the class is text
    ("a]]]x[^b]", "a]]]xc", True), ("a]]]x[^b]", "a]]]xb", False),  # `]` before a class is text
    ("a(b*", "a(bx", True), ("a(b*", "aXX(XXbx", False),  # a `(` never closed is text
    # a `-` first in a class is a member, so the two alternatives never overlap
    ("+([-a]|b)", "-ab", True), ("+([-a]|b)", "-ac", False),
    # a range holds exactly its ends and what lies between (up to 256 code points apart)
    ("+([a-c]|d)", "abd", True), ("+([a-c]|d)", "abe", False),
    ("+([b-c]|a)", "acab", True), ("+([b-c]|a)", "ad", False),
    ("+([\u0100-\u0200]|a)", "a\u0150\u0200", True), ("+([\u0100-\u0200]|a)", "a\u0201", False),
    ("a//*", "a/XX/XXb", False),  # `//` in a pattern: no normalised path has it
    # a trailing backslash is a literal backslash; so is one before a letter here
    # (picomatch's `\\d` is the regex digit: `*\\d` vs `a1`, docs/globs.md's deviations)
    ("*\\", "b\\", True), ("*\\", "bXX\\XX", False), ("*\\d", "aXX\\XXd", False),
    # loops in different segments never combine, so these are fast enough to be accepted
    ("*(a)/*(b)/*(c)", "aa/bb/c", True), ("*(a)/*(b)/*(c)", "aa/bc/c", False),
    ("**/+(a)/**", "x/aa/y", True), ("**/+(a)/**", "x/ab/y", False),
    # a repeated extglob whose words split any text in one way only (Sardinas–Patterson)
    ("+(a|ab|bb)", "abba", True), ("+(a|ab|bb)", "abb", True), ("+(a|ab|bb)", "ba", False),
    ("+(a|ab|bbb)", "abbba", True), ("+(a|ab|bbb)", "abba", False),
    # a `..` no `**` can absorb: the `**` chain may not commit to the first `.?` (`.h`)
    ("**/.?/**/b", ".h/../b", True), ("**/.?/**/b", "x/.h/../b", True),
]
# (pattern, token, picomatch's answer without options): flat tokens are not normalised
PICOMATCH_FLAT = [
    ("a//*", "a//b", True), ("a///*", "a///b", True), ("a///*", "a//b", False),
    # a hidden name no flat `**` can absorb: the chain may not commit to the first `a`
    ("**/@(.h|a)/**/b", "a/.h/b", True), ("**/@(.h|a)/**/b", "a/b", True),
    # a leading `./` is dropped from the pattern, but the token is taken as given
    ("./x", "./x", True), ("./x", "x", True), ("./*", "./a", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), PICOMATCH)
def test_paths_are_answered_as_picomatch_answers_them(pattern: str, path: str, expected: bool) -> None:
    globs._compile.cache_clear()
    assert compile_glob(pattern).match(path) is expected


@pytest.mark.parametrize(("pattern", "token", "expected"), PICOMATCH_FLAT)
def test_flat_tokens_are_answered_as_picomatch_answers_them(pattern: str, token: str, expected: bool) -> None:
    globs._compile.cache_clear()
    assert compile_flat(pattern).match(token) is expected


def test_a_long_path_of_short_names_still_matches_up_to_the_longest_a_file_can_have() -> None:
    name = "a" * MAX_SEGMENT  # the longest name a file can have (NAME_MAX)
    assert compile_glob("**").match(name) and compile_flat("*").match(name)
    assert compile_glob("*/b").match(name + "/b") and compile_flat("*/b").match(name + "/b")
    assert not compile_glob("**").match(name + "a") and not compile_flat("*").match(name + "a")
    # names of 200 are fine even when two of them, with the `/`, make more than 255
    assert compile_glob("*/*").match("a" * 200 + "/" + "b" * 200)
    assert compile_flat("*/*").match("a" * 200 + "/" + "b" * 200)
    longest = "/".join(["a" * 240] * 17)  # PATH_MAX characters exactly
    assert len(longest) == MAX_SUBJECT and compile_glob("**").match(longest)
    assert not compile_glob("**").match(longest + "b")
    assert not compile_glob("!x").match(longest + "b")  # not even a negation matches it
    for glob in (compile_glob("**"), compile_glob("*/*")):  # the same bounds for the caller's normal form
        assert glob.match_normalized("a" * 200 + "/" + "b" * 200)
        assert not glob.match_normalized("a" * 256) and not glob.match_normalized(longest + "b")


@pytest.mark.parametrize(("raw", "normal"), [("a/.", "a"), ("a/b/.", "a/b"), ("/.", "/")])
def test_a_trailing_dot_segment_is_dropped(raw: str, normal: str) -> None:
    assert globs.normalize_path(raw) == normal
    assert compile_glob(normal).match(raw) and compile_glob("*").match("a/.")


@pytest.mark.parametrize(("pattern", "segment"), [
    ("{a/b,c}", "{a/b,c}"), ("(x/y|z)", "(x/y|z)"), ("\\/a", "\\/a"), ("[/]a", "[/]a"), ("/a", "a"),
    ("\\a/b", "b"), ("a\\b/c", "c"),  # an escape hides one character, no more
    ("[a]/b", "b"), ("[a]x/b", "b"),  # a class ends at its `]`
    ("X/b", "b"), ("{X/a,b}", "{X/a,b}"),  # only `{`, `(` open and `}`, `)` close a group
    ("{{a,b}/c,d}", "{{a,b}/c,d}"), ("(a)/b", "b"), ("{a}/b", "b"),  # groups nest and close
])
def test_the_last_segment_is_the_text_after_the_last_slash_outside_groups(pattern: str, segment: str) -> None:
    assert globs.last_segment(pattern) == segment


def test_globs_compiled_apart_are_equal_by_pattern_and_mode_and_spread_over_hashes() -> None:
    build = globs._compile.__wrapped__  # past the cache: two distinct objects
    a, b = build("src/*.ts", False), build("src/*.ts", False)
    assert a is not b and a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != build("src/*.ts", True) and a != "src/*.ts"
    assert compile_glob("src/*.ts").flat is False and compile_glob("src/*.ts") == a  # path mode is not flat
    assert repr(a) == "compile_glob('src/*.ts')" and repr(compile_flat("v*")) == "compile_flat('v*')"
    # a set or dict of many globs stays a hash table, not one bucket
    assert len({hash(build(f"dir{i}/**", False)) for i in range(50)}) == 50


def test_the_compile_cache_keeps_the_most_recent_values_within_its_entries_and_weight() -> None:
    built: list[str] = []

    def build(key: str) -> str:
        built.append(key)
        return key * 2

    cache: BoundedCache[str, str] = BoundedCache(build, len, 2, 10)  # two entries, ten characters
    assert cache.__wrapped__ is build
    assert cache("ab") == cache("ab") == "abab" and built == ["ab"]
    assert (len(cache), cache.held) == (1, 4)
    cache("cd"), cache("ab"), cache("ef")  # `ab` used again: `cd` is the least recent, and goes
    assert (len(cache), cache.held) == (2, 8)
    cache("ab"), cache("ef")
    assert built == ["ab", "cd", "ef"]
    cache("cd")
    assert built == ["ab", "cd", "ef", "cd"]
    cache("wxyz")  # 8 characters more than the 10 allowed: the older ones make room
    assert (len(cache), cache.held) == (1, 8) and cache("wxyz") == "wxyzwxyz" and built[-1] == "wxyz"
    cache.cache_clear()
    assert (len(cache), cache.held) == (0, 0)
    assert cache("abcdef") == "abcdefabcdef" and (len(cache), cache.held) == (0, 0)  # heavier than all: not kept


def test_thirty_two_brace_groups_compile_and_the_thirty_third_is_reported(rule_project) -> None:
    most = "{a}" * MAX_BRACE_GROUPS  # picomatch: `{a}` is its own text, not `a`
    assert compile_glob(most).match(most) and not compile_glob(most).match("a" * MAX_BRACE_GROUPS)
    escaped = "\\{a}" * 40 + "{b,c}"  # an escaped `{` opens no group: one group here
    assert compile_glob(escaped).match("{a}" * 40 + "c") and not compile_glob(escaped).match("{a}" * 40 + "a")
    rule_project.write({".pi/rules/r.md": rule_text(globs=[most + "{a}", "src/**"], match="touched")})
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [(e.kind, e.message) for e in errors] == [("invalid-value", (
        f"glob {most + '{a}'!r} cannot be used: brace expansion of more than 32 groups {{...}} is refused; "
        "split the glob"))]


@pytest.mark.parametrize("flat", [False, True])
def test_a_chain_of_globstars_commits_each_but_the_last(flat: bool) -> None:
    """docs/globs.md: each `**` of a chain but the last takes the first place the piece
    after it matches (an atomic group), so matching is linear; a lone `**` and a chain
    with an extglob spanning `/` keep the plain regex. (The time this saves is measured
    in tests/suites/test_fuzz.py; here, that the regex has the commitment at all.)"""
    compile_ = compile_flat if flat else compile_glob
    chain = compile_("**/a/**/b")
    assert chain.regex.pattern.count("(?>") == 1
    assert chain.match("x/a/y/a/b") and chain.match("a/b") and not chain.match("a/x")
    assert compile_("**/a/**/b/**/c").regex.pattern.count("(?>") == 2
    for piece in ("[ab]", "@(a|b)", "[)]", "a.b"):  # groups, classes and escapes in the piece
        assert compile_(f"**/{piece}/**/b").regex.pattern.count("(?>") == 1
    assert "(?>" not in compile_("**/a/b").regex.pattern
    assert "(?>" not in compile_("**/@(a|b/c)/x").regex.pattern


@pytest.mark.parametrize("pattern", [
    "x+(a*", "*(a*",  # an extglob never closed is judged too: a star inside a repetition
    "+(a|aaa)", "+(aa|aaa)", "+(a|ab|bc|c)",
    # a class that overlaps another alternative: a range, a negated or POSIX class, an
    # escaped member, a member a `.` would not reach (a newline)
    "+([a-c]|b)", "+([a-c]|c)", "+([a-cx]|x)", "+([xy]|x)", "+([xy]|y)", "+([\u0100-\u0201]|a)", "+([^a]|b)", "+([[:alpha:]]|b)", "+([\\a]|a)", "+([-a]|a)", "+([a-b]|c|[.a])", "+([\n.]|\n)",
])
def test_repeated_words_that_split_a_text_in_two_ways_are_refused(pattern: str) -> None:
    # `aaa` is a.a.a or aaa; `aaaaaa` is aa.aa.aa or aaa.aaa; `abc` is a.bc or ab.c
    with pytest.raises(GlobError, match=r"several ways \(exponential time\)"):
        compile_glob(pattern)


def test_the_words_of_a_repeated_extglob_are_checked_up_to_64_words_and_1024_characters() -> None:
    """Words sharing a first letter are checked for ambiguity (quadratic in the words),
    so at most 64 of them, 1,024 characters in all; past that the glob is refused."""
    seconds = string.ascii_letters + string.digits + "_~="
    words = ["a" + c for c in seconds[:64]]
    assert compile_glob(f"+({'|'.join(words)})").match("a0aZa_")  # picomatch: true
    assert not compile_glob(f"+({'|'.join(words)})").match("a0b")  # picomatch: false
    with pytest.raises(GlobError, match=r"several ways"):
        compile_glob(f"+({'|'.join(words + ['a' + seconds[64]])})")
    long_words = ["a" + c + "b" * 14 for c in seconds[:64]]  # 64 x 16 = 1,024 characters
    assert compile_glob(f"+({'|'.join(long_words)})").match(long_words[3] + long_words[0])  # picomatch: true
    assert not compile_glob(f"+({'|'.join(long_words)})").match(long_words[3] + "a")  # picomatch: false
    with pytest.raises(GlobError, match=r"several ways"):
        compile_glob(f"+({'|'.join(long_words[:-1] + [long_words[-1] + 'b'])})")


@pytest.mark.parametrize("pattern", ["!", "./", "!./!", "././"])
def test_a_pattern_of_only_negations_and_dot_slashes_is_named_empty(pattern: str) -> None:
    with pytest.raises(GlobError) as info:
        compile_glob(pattern)
    assert str(info.value) == "empty pattern"


def test_a_pattern_that_is_not_text_is_named_by_its_type() -> None:
    with pytest.raises(GlobError) as info:
        compile_glob(5)  # type: ignore[arg-type]
    assert str(info.value) == "pattern must be a string, not int"


def test_more_than_a_thousand_top_level_alternatives_are_refused_by_count() -> None:
    assert compile_glob("*" + "|x" * 998).match("x")  # 999 alternatives
    with pytest.raises(GlobError) as info:
        compile_glob("*" + "|x" * 1000)
    assert str(info.value) == "brace expansion yields more than 1000 patterns"


@pytest.mark.parametrize("pattern", ["*(ab)*!(a)", "*(ab)*(ab)!(a)", "**/!(a)**/*"])
def test_a_negation_after_two_loops_is_refused_as_slow(pattern: str) -> None:
    for compile_ in (compile_glob, compile_flat):
        with pytest.raises(GlobError, match=r"too many wildcards, repetitions or alternatives \(slow to match\)"):
            compile_(pattern)


def test_a_leading_dot_slash_is_ignored_on_both_sides_even_for_the_exact_text() -> None:
    # docs/globs.md, deviations: `./x` is compared with `x` (picomatch compares the text)
    assert compile_glob("./{a").match("{a") and compile_glob("./{a").match("./{a")


def test_globstars_twice_with_an_extglob_spanning_a_slash_are_refused() -> None:
    with pytest.raises(GlobError) as info:
        compile_glob("**/@(a|b/c)/**/x/**/y")
    assert str(info.value) == "'**' more than once with an extglob containing '/' (slow to match); split the glob"
    assert compile_glob("**/@(a|b/c)/x").match("y/a/x")  # once is fine (picomatch: true)


def test_a_glob_whose_regex_would_pass_the_budget_is_refused_naming_it() -> None:
    with pytest.raises(GlobError) as info:
        compile_glob("**/a/" * 5000 + "x")  # 25,000 characters; ~45 characters of regex per `**`
    assert str(info.value) == ("the glob compiles to more than 262,144 characters of regex; "
                               "shorten it or split it into several globs")


def test_brace_alternatives_multiply_the_work_of_two_loops() -> None:
    """docs/globs.md ("Patterns refused as too slow"): wcmatch tries each brace expansion
    in turn, so 16 alternatives after two loops (16 x 64 ** 2 = 65,536) are accepted and
    the 17th is refused."""
    sixteen = "*(a)*(b){" + ",".join(string.ascii_lowercase[:16]) + "}"
    assert compile_glob(sixteen).match("aabbp")  # picomatch: true
    assert not compile_glob(sixteen).match("aabbq")  # picomatch: false
    with pytest.raises(GlobError) as info:
        compile_glob(sixteen[:-1] + ",q}")
    assert str(info.value) == "too many wildcards, repetitions or alternatives (slow to match); split the glob"


SLOW = "too many wildcards, repetitions or alternatives (slow to match); split the glob"


# Classes with POSIX members, a `]` first, an escaped `]`, a `:]` after the class: where a
# class ends decides everything after it. (pattern, the subjects of CLASS_SUBJECTS it
# matches), each answer from picomatch 4.0.4 with dot: true.
CLASS_SUBJECTS = ('a', '1', 'ax', '1x', ':', ']', ':[]-', '[aaa.', 'xay', 'x1y', 'Ab', 'aB', ']x', '\\x', 'a:]', '1:]', '-', 'x]', ']]', ' b', 'b')
CLASSES = [
    ('[^[:alpha:][:alpha:]]*', ('1', '1x', ':', ']', ':[]-', '[aaa.', ']x', '\\x', '1:]', '-', ']]', ' b')),
    ('[[:alpha:][:digit:]]', ('a', '1', 'b')),
    ('[[:digit:]a]x', ('ax', '1x')),
    ('[^[:digit:]]', ('a', ':', ']', '-', 'b')),
    ('[![:alpha:]]*', ('a', 'ax', 'xay', 'x1y', 'Ab', 'aB', 'a:]', 'x]', 'b')),
    ('x[[:alpha:]]y', ('xay',)),
    ('[[:upper:]][[:lower:]]', ('Ab',)),
    ('[]a]', ('a', ']')),
    ('[^]a]', ('1', ':', '-', 'b')),
    ('[\\]]x', (']x',)),
    ('[a-c[:digit:]]', ('a', '1', 'b')),
    ('[[:alpha:]]:]', ('a:]',)),
    ('[^[:alpha:]]:]', ('1:]',)),
    ('[[:space:][:alpha:]]b', ('Ab', ' b')),
    ('[:alpha:]x', ('ax',)),
    ('[[:alpha:]-]', ('a', '-', 'b')),
    ('[x[:alpha:]]]', ('x]',)),
]


@pytest.mark.parametrize(("pattern", "matched"), CLASSES)
def test_a_class_ends_where_picomatch_ends_it(pattern: str, matched: tuple[str, ...]) -> None:
    glob = compile_glob(pattern)
    assert tuple(s for s in CLASS_SUBJECTS if glob.match(s)) == matched


def test_loops_on_both_sides_of_a_globstar_add_up() -> None:
    """docs/globs.md ("Patterns refused as too slow"): the loops a segment leaves open
    before a `**` still count after it, so two repetitions on each side are refused while
    one after it is accepted; a `@(…)` holding a loop leaves it open for what follows."""
    assert _refusal("*(a)*(b)/**/*(c)*(d)") == SLOW
    one_after = compile_glob("*(a)*(b)/**/*(c)")
    assert [one_after.match(s) for s in ("ab/x/cc", "ab/c", "ab/x/d")] == [True, True, False]  # picomatch
    assert _refusal("*(a)@(b*)*(c)") == SLOW


def test_a_plain_segment_after_a_globstar_leaves_room_for_many_alternatives() -> None:
    """One loop (`**`) allows 1,024 alternatives: 26 after `**/` are accepted."""
    letters = compile_glob("**/{" + ",".join(string.ascii_lowercase) + "}x")
    assert [letters.match(s) for s in ("d/ex", "ex", "d/e", "d/1x")] == [True, True, False, False]  # picomatch


def test_a_pattern_of_exactly_65536_characters_compiles_and_one_more_is_refused() -> None:
    """picomatch 4.0.4 takes 65,536 characters and refuses 65,537 ("exceeds maximum
    allowed length")."""
    assert compile_glob("a" * 65536).pattern == "a" * 65536
    with pytest.raises(GlobError, match="^pattern is longer than 65536 characters$"):
        compile_glob("a" * 65537)


def test_a_globstar_glued_to_an_extension_is_any_file_with_that_extension() -> None:
    glob = compile_glob("**.ts")  # picomatch's fast path: `**/*.ts`
    assert [glob.match(s) for s in ("src/b.ts", "src/bts", "b.ts")] == [True, False, True]  # picomatch 4.0.4


# Rewritten picomatch syntax: an unclosed `[` with more pattern after it, a quantifier after
# `@(…)`, and negations followed by more pattern. (pattern, subjects, picomatch 4.0.4's
# answers with dot: true.)
REWRITTEN = [
    ('a[b*', ('a[bc', 'a[b', 'ab'), (True, True, False)),
    ('@(a)+', ('a', 'aa', 'b', ''), (True, True, False, False)),
    ('@(a|b)?', ('a', 'ab', ''), (True, False, False)),
    ('src/!(vendor)/**', ('src/vendorx/y', 'src/lib/y', 'src/vendor/y'), (False, True, False)),
    ('x!(ab)c', ('xabc', 'xac', 'xc', 'xabdc'), (False, True, True, False)),
    ('!(a)b', ('ab', 'bb', 'aab', 'b'), (False, True, False, True)),
    ('x/!(a|bc)y', ('x/ay', 'x/bcy', 'x/by', 'x/dy'), (False, False, True, True)),
    ('@(!(a))b', ('ab', 'bb'), (False, True)),
]


@pytest.mark.parametrize(("pattern", "subjects", "answers"), REWRITTEN)
def test_rewritten_syntax_answers_like_picomatch(pattern: str, subjects: tuple[str, ...],
                                                 answers: tuple[bool, ...]) -> None:
    glob = compile_glob(pattern)
    assert tuple(glob.match(s) for s in subjects) == answers


def test_nested_brace_sets_count_as_many_alternatives_as_they_expand_to() -> None:
    """`{z,{a,…,o}}` expands to 16 patterns (bracex and picomatch alike), not 2 x 15: after
    two loops it is accepted and one more alternative is refused, as for a flat list. A
    real-looking glob of 13 extensions written with nested sets was refused as 24 before
    (docs/globs.md, "Patterns refused as too slow")."""
    letters = string.ascii_lowercase
    sixteen = compile_glob("*(a)*(b){z,{" + ",".join(letters[:15]) + "}}")
    assert [sixteen.match(s) for s in ("aabbo", "aabbz", "aabbp")] == [True, True, False]  # picomatch
    assert _refusal("*(a)*(b){z,{" + ",".join(letters[:16]) + "}}") == SLOW
    assert _refusal("*(a)*(b){y,z,{" + ",".join(letters[:15]) + "}}") == SLOW  # branches add up
    extensions = compile_glob("**/*/*.{json,{c,m,}{js,ts}{,x}}")
    answers = {"a/b/c.mtsx": True, "a/b/c.json": True, "a/b/c.jsx": True, "a/b/c.cjs": True,
               "b/c.tsx": True, "a/b/c.mtx": False, "a/b/c.jsonx": False}  # picomatch 4.0.4
    assert {path: extensions.match(path) for path in answers} == answers


# brace expressions of letters nested up to a few levels: `{a,b{c,d}}`, `x{a,b}{c,d}`
_BRACES = st.recursive(
    st.text(alphabet="abcxyz", min_size=1, max_size=2),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=4).map(lambda parts: "{" + ",".join(parts) + "}"),
        st.lists(inner, min_size=2, max_size=3).map("".join)),
    max_leaves=12)


@given(braces=_BRACES)
@settings(max_examples=300, deadline=None, derandomize=True)
def test_a_glob_with_nested_braces_is_judged_like_the_list_it_expands_to(braces: str) -> None:
    """Property: after two loops (where 16 alternatives are the most allowed), writing the
    alternatives nested or as one flat list gives the same verdict."""
    expansions = list(bracex.expand(braces))
    flat = "{" + ",".join(expansions) + "}" if len(expansions) > 1 else expansions[0]
    assert _glob_guard.check("*(a)*(b)" + braces) == _glob_guard.check("*(a)*(b)" + flat)


def test_an_unclosed_brace_counts_only_the_sets_closed_inside_it() -> None:
    """An unclosed `{` is text (bash, bracex), so `{z,{a,…,p}` is the 16 expansions of its
    inner set: accepted after two loops, and 17 refused."""
    letters = string.ascii_lowercase
    unclosed = compile_glob("*(a)*(b){z,{" + ",".join(letters[:16]) + "}")
    assert [unclosed.match(s) for s in ("aabbz", "aabb{z,p", "aabbp")] == [False, False, False]  # picomatch
    assert _refusal("*(a)*(b){z,{" + ",".join(letters[:17]) + "}") == SLOW


def test_the_guard_alone_refuses_more_expansions_than_its_work_budget() -> None:
    """Defence in depth (docs/mutation.md, "Glob matching"): `compile_glob` refuses more
    than 1,000 expansions first, but the guard must not wave through 2 ** 17 of them when
    asked alone; 2 ** 16 plain letters are exactly its budget."""
    assert _glob_guard.check("{a,b}" * 16) == (None, True)
    assert _glob_guard.check("{a,b}" * 17) == (SLOW, True)
    assert _glob_guard.check("{" + "{a,b}" * 16 + "}") == (None, True)  # one branch of 2 ** 16
    assert _glob_guard.check("{x," + "{a,b}" * 16 + "}") == (SLOW, True)  # 1 + 2 ** 16
    assert _glob_guard.check("{x," + "{a,b}" * 17 + "}") == (SLOW, True)
    assert _glob_guard.check("{x," + "{a,b}" * 16) == (None, True)  # unclosed: its inner sets only
    assert _glob_guard.check("{x," + "{a,b}" * 17) == (SLOW, True)


def test_an_escaped_character_in_a_repeated_extglob_is_that_character() -> None:
    """`\\.` and `.` are the same word, so `+(\\.|.)` splits `..` in two ways and is refused;
    `\\.` and `-` are distinct, and the glob answers like picomatch."""
    assert _refusal("+(\\.|.)") == ("'+(\\\\.|.)' can match a name in several ways (exponential time); "
                                    "use distinct alternatives or one class like +([a-z0-9])")
    distinct = compile_glob("+(\\.|-)")
    assert [distinct.match(s) for s in (".-.", "-", "a")] == [True, True, False]  # picomatch 4.0.4, dot: true


@given(pattern=st.text(alphabet=list("X()|\\[]{},@*?!+/a^:"), max_size=16))
@settings(max_examples=2000, deadline=None, derandomize=True)
def test_every_parenthesis_the_guard_reads_opens_an_extglob(pattern: str) -> None:
    """What the guard's parser relies on (docs/mutation.md, "Glob matching"): the rewrite
    turns a bare `(…)` into `@(…)` and escapes an unclosed `(`, so outside escapes and
    classes every `(` of the text the guard reads follows one of `@?*+!`."""
    text, _ = globs._rewrite(pattern)
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "[" and (end := _glob_guard.class_end(text, i)) > 0:
            i = end + 1
            continue
        assert text[i] != "(" or (i > 0 and text[i - 1] in "@?*+!"), (pattern, text)
        i += 1


def _refusal(pattern: str) -> str:
    with pytest.raises(GlobError) as info:
        compile_glob(pattern)
    return str(info.value)


# (pattern, path, picomatch's answer): accepted globs near the guard's limits
ACCEPTED = [
    ("*(a)*(b)?(c)?(d)?(e)?(f)", "aabcdef", True), ("*(a)*(b)?(c)?(d)?(e)?(f)", "aabg", False),
    ("?(a)" * 16, "a" * 16, True), ("?(a)" * 16, "a" * 17, False),
    ("@(" * 32 + "a" + ")" * 32, "a", True),
    ("x/**/@(f|g)!(c)*(ab|a)/y", "x/z/fdab/y", True), ("x/**/@(f|g)!(c)*(ab|a)/y", "x/z/h/y", False),
    ("+(b)@(d|de){x,y}**@(d|de)", "bbdexzd", True), ("+(b)@(d|de){x,y}**@(d|de)", "bdzd", False),
    ("**/*(a)/**/*(b)*", "x/aa/y/bbz", True), ("**/*(a)/**/*(b)*", "x/ab/y/b", False),
    ("*(a)*(b)\\*", "aab*", True), ("*(a)*(b)\\*", "aab", False),  # an escaped `*` is no loop
]


@pytest.mark.parametrize(("pattern", "path", "expected"), ACCEPTED)
def test_globs_near_the_guards_limits_are_accepted_and_answer_like_picomatch(
        pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern).match(path) is expected


def test_the_guards_limits_are_exact_and_named() -> None:
    """docs/globs.md ("Patterns refused as too slow"): each `?(…)` doubles the choices
    (17 of them pass 65,536 alone; 5 after two loops pass 16), extglobs nest 32 deep,
    one negation is allowed, and an ambiguous repetition is quoted by its first 40
    characters."""
    assert _refusal("*(a)*(b)?(c)?(d)?(e)?(f)?(g)") == SLOW
    assert _refusal("?(a)" * 17) == SLOW
    assert _refusal("**/*(a)!(c)*(a)") == SLOW
    assert _refusal("*(a)*(b)\\**") == SLOW  # the star after an escaped one is a loop
    assert _refusal("@(" * 33 + "a" + ")" * 33) == "extglobs nested more than 32 deep; simplify the glob"
    assert _refusal("!(a)x!(b)") == "more than one negated extglob !(…) (slow to match); split the glob"
    body = "+(a|aa" + "|c" * 30 + ")"
    assert _refusal(body) == (f"{body[:40]!r} can match a name in several ways (exponential time); "
                              "use distinct alternatives or one class like +([a-z0-9])")
    assert _refusal("+(a|aa)") == ("'+(a|aa)' can match a name in several ways (exponential time); "
                                   "use distinct alternatives or one class like +([a-z0-9])")
    # a `/` just before the group's `)` still makes it span segments
    assert _refusal("**/@(a|b/)/**/c") == ("'**' more than once with an extglob containing '/' "
                                          "(slow to match); split the glob")
