"""Issue 14, attacks 1, 2 and 15: every pattern a repository supplies is linear or
bounded. A glob's brace expansion is budgeted before anything is built, a `.gitignore`
line is matched the way git's wildmatch does (no catastrophic backtracking), and lenient
YAML recovery is linear in the items of a list.

No wall-clock thresholds: the glob bomb is measured by the characters brace expansion
builds, the compile cache by the regex text it keeps, recovery by the ratio of two input
sizes; the ReDoS test runs in a subprocess whose timeout only detects a hang (the old
code took hours, the new one milliseconds).
"""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Callable

import bracex
import pytest

import rules_core.globs.matching as globs
from rules_core.globs.matching import GlobError, compile_flat, compile_glob
from rules_core.discovery.ignore import IgnoreStack
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_importers._recovery import recover

REPO = Path(__file__).resolve().parents[2]
BUDGET = 65_536  # characters brace expansion may build for one glob (docs/globs.md)
# Attack 1 as reported: 512 variants of 12 KB, ~6 MB of regex, ~10 s and ~0.6 GB.
BOMB = "{a,b}" * 9 + "x" * 12_000


@pytest.fixture
def expansion_meter(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the characters brace expansion builds (wcmatch expands through
    ``bracex.iexpand``), failing at four times the budget: code that expands first and
    checks afterwards fails here after a few variants instead of building them all."""
    built = [0]
    real = bracex.iexpand

    def metered(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for variant in real(*args, **kwargs):  # type: ignore[arg-type]
            built[0] += len(variant)
            if built[0] > 4 * BUDGET:  # pytest.fail: wcmatch swallows an Exception here
                pytest.fail(f"brace expansion built {built[0]:,} characters")
            yield variant

    monkeypatch.setattr(bracex, "iexpand", metered)
    return built


# -- attack 1: glob compile bomb ------------------------------------------------------


@pytest.mark.parametrize("compile_", [compile_glob, compile_flat])
def test_glob_compile_bomb_is_refused_before_anything_is_expanded(compile_, expansion_meter):
    # the report's bomb, inside a path, four-way braces, a signed range (bracex counts it)
    bombs = [BOMB, "src/" + BOMB + "/**", "{a,b,c,d}" * 4 + "y" * 300, "{-9..9}" + "z" * 4000]
    for pattern in bombs:
        with pytest.raises(GlobError) as info:
            compile_(pattern)
        message = str(info.value)
        assert "65,536" in message and "brace" in message, message
    # Refused on the counts: at most the first variant of each was built (by the count
    # that picks the message), never the expansion (~6 MB for the first bomb).
    assert expansion_meter[0] <= sum(map(len, bombs)) * 2


def test_glob_within_the_budget_still_compiles(expansion_meter):
    glob = compile_glob("{a,b}" * 9 + "x" * 50)  # 512 variants x 95 characters
    assert glob.match("ab" * 4 + "a" + "x" * 50) and not glob.match("c" + "x" * 50)
    assert 0 < expansion_meter[0] <= BUDGET + 95  # counting built the first variant once


def test_glob_bomb_in_every_rule_field_and_importer_is_an_invalid_value(rule_project, expansion_meter):
    rule_project.write({
        ".pi/rules/bomb.md": rule_text(globs=[BOMB, "src/**"], model=BOMB, branch=BOMB, match="touched"),
        ".github/instructions/bomb.instructions.md": f'---\napplyTo: "{BOMB}"\n---\nUse tabs.\n',
        ".cursor/rules/bomb.mdc": f"---\ndescription: d\nglobs: {BOMB}\n---\nUse tabs.\n",
    })
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert {r.id for r in discovery.rules} >= {"bomb"}  # the rules load ...
    errors = [e for e in discovery.errors if "65,536" in e.message]
    assert {e.kind for e in errors} == {"invalid-value"}  # ... and each bomb is reported
    assert len(errors) >= 4, [(e.path, e.message[:80]) for e in discovery.errors]
    assert expansion_meter[0] < BUDGET  # only the small globs were expanded


def test_compile_cache_keeps_bounded_regex_text(monkeypatch):
    """Eight globs of 2,000 characters (~4,000 characters of regex, ~40 KB each): with
    the cache capped at 8,000 characters of regex, at most two stay. A cap on entries
    alone kept them all (4,096 entries of up to ~3 MB each), and so did re's own cache
    (512 entries, whatever their size), which globs no longer go through."""
    monkeypatch.setattr(globs._compile, "budget", 8_000, raising=False)
    globs._compile.cache_clear()
    gc.collect()
    tracemalloc.start()
    try:
        for n in range(8):
            compile_glob(f"{n}/" + "x" * 2_000)
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        globs._compile.cache_clear()
    assert kept < 150_000, f"{kept:,} bytes kept after compiling eight globs (~310,000 unbounded)"


# -- attack 2: ReDoS in .gitignore ----------------------------------------------------

SCAN = textwrap.dedent("""
    import sys
    from rules_core import Engine, Facts
    from rules_core.rule_tests.pytest_plugin import fresh_manager
    cwd, home = sys.argv[1], sys.argv[2]
    engine = Engine(fresh_manager(), home=home, env={"HOME": home})
    evaluation = engine.evaluate(Facts(cwd=cwd))
    print(",".join(sorted(o.rule.id for o in evaluation.active)))
""")


from suite_helpers import git_init as _git_init  # noqa: E402 - the shared helper


def test_hostile_gitignore_line_cannot_stall_the_users_own_exists_rule(rule_project):
    """The user's global `exists` rule scans the project; its `.gitignore` holds a line
    that backtracks for hours against a directory named `a` x 200 in a stdlib regex.
    Git's answer (not ignored) arrives at once; so must ours."""
    names = "a" * 200
    rule_project.write({
        ".gitignore": "*a*a*a*a*a*a*b\n" + "".join(f"*{'a*' * k}b{k}\n" for k in range(8, 12)),
        f"{names}/{names}/found.zzz": "x\n",
    })
    _git_init(rule_project.cwd)
    rule_project.write_global({"zzz.md": rule_text(globs=["**/*.zzz"], match="exists")})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run([sys.executable, "-c", SCAN, str(rule_project.cwd), str(rule_project.home)],
                              capture_output=True, text=True, timeout=60, env=env, cwd=str(REPO))
    except subprocess.TimeoutExpired:
        pytest.fail("the exists scan hung on a hostile .gitignore line")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["zzz"]


def test_ignore_files_past_the_caps_are_skipped_and_recorded(tmp_path):
    """Over 256 KiB, or over 1,000 wildcard lines: the file is treated as absent (nothing
    in it applies, as git does past its own 100 MiB cap) and its path is recorded. Plain
    names are cheap, so 256 KiB of them still apply."""
    import rules_core.discovery.ignore as ignore

    _git_init(tmp_path)
    sub = {"big": b"# pad\n" * 44_000 + b"*.log\n", "wild": b"".join(b"a%d*b\n" % n for n in range(1_001)) + b"*.log\n",
           "plain": b"".join(b"name%d\n" % n for n in range(26_000)) + b"*.log\n"}
    for name, data in sub.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / ".gitignore").write_bytes(data)
    stack = IgnoreStack(str(tmp_path), str(tmp_path))
    verdicts = {}
    for name in sub:
        pushed = stack.push_dir(str(tmp_path / name), name)
        verdicts[name] = stack.excluded(f"{name}/x.log", False)
        if pushed:
            stack.pop()
    assert verdicts == {"big": False, "wild": False, "plain": True}
    assert stack.skipped == [str(tmp_path / "big" / ".gitignore"), str(tmp_path / "wild" / ".gitignore")]
    assert len(sub["big"]) > ignore.MAX_IGNORE_BYTES >= len(sub["plain"])


# -- attack 15: quadratic recovery ----------------------------------------------------


def _best_time(work: Callable[[], object], repeat: int = 3) -> float:
    """The least CPU time of ``repeat`` runs, garbage collector off (as timeit): other
    processes on a loaded machine and collections are not the code's cost."""
    best = float("inf")
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
    finally:
        if collecting:
            gc.enable()
    return best


def _unquoted_list(items: int) -> str:
    # `- *.<n>` is a YAML alias, so strict parsing fails and recovery reads every line.
    return "description: d\nglobs:\n" + "".join(f"- *.{n}\n" for n in range(items))


def test_lenient_recovery_is_linear_in_list_items():
    """16,000 vs 64,000 items: linear code takes ~4x as long, the old list rebuild ~15x
    (0.47 s vs 7.2 s; 262,000 items took 23 s). Asserted: under 8x."""
    small, large = _unquoted_list(16_000), _unquoted_list(64_000)
    recovered = recover(large, "cursor")
    assert recovered is not None and len(recovered["globs"]) == 64_000 and recovered["globs"][-1] == "*.63999"
    ratio = _best_time(lambda: recover(large, "cursor")) / _best_time(lambda: recover(small, "cursor"))
    assert ratio < 8, f"recovery time grew {ratio:.1f}x for 4x the items"


def test_megabyte_cursor_rule_of_distinct_globs_is_bounded(rule_project):
    """After recovery, the globs themselves: 110,000 distinct ones (under the 1 MiB file
    limit) took ~30 s to compile. A rule keeps at most 1,000 globs; the rest is one error
    naming the cap."""
    items = "".join(f"- *{n:x}\n" for n in range(110_000))
    rule_project.write({".cursor/rules/big.mdc": "---\ndescription: d\nglobs:\n" + items + "---\nUse tabs.\n"})
    compiled: list[str] = []
    real = globs._compile.__wrapped__

    def counting(pattern: str, flat: bool) -> globs.Glob:
        compiled.append(pattern)
        return real(pattern, flat)

    globs._compile.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(globs._compile, "__wrapped__", counting)
            discovery = rule_project.engine().discover(str(rule_project.cwd))
    finally:
        globs._compile.cache_clear()
    assert [r.id for r in discovery.rules] == ["big"]
    assert len(compiled) <= 2 * 1_000 + 10, f"{len(compiled):,} globs compiled for one rule"
    assert any("1,000" in e.message and e.kind == "invalid-value" for e in discovery.errors)


# -- git's own algorithm as the oracle ------------------------------------------------
# wildmatch.c's dowild and dir.c's match_basename/match_pathname, ported line for line
# (exponential on hostile input, so only fed small random lines and paths).

NOMATCH, MATCH, ABORT_ALL, ABORT_TO_STARSTAR = 1, 0, -1, -2
_CLASSES = {b"alnum": bytes.isalnum, b"alpha": bytes.isalpha, b"blank": lambda c: c in b" \t",
            b"cntrl": lambda c: c[0] < 32 or c[0] == 127, b"digit": bytes.isdigit,
            b"graph": lambda c: 33 <= c[0] <= 126, b"lower": bytes.islower, b"print": lambda c: 32 <= c[0] <= 126,
            b"punct": lambda c: 33 <= c[0] <= 126 and not c.isalnum(), b"space": lambda c: c in b"\t\n\r ",
            b"upper": bytes.isupper, b"xdigit": lambda c: c in b"0123456789abcdefABCDEF"}


def dowild(p: bytes, t: bytes, pathname: bool, pi: int = 0, ti: int = 0) -> int:
    start = pi
    at = lambda s, i: s[i] if i < len(s) else 0  # noqa: E731 - C's NUL terminator
    while pi < len(p):
        p_ch, t_ch = p[pi], at(t, ti)
        if t_ch == 0 and p_ch != ord("*"):
            return ABORT_ALL
        if p_ch == ord("\\"):
            pi += 1
            if t_ch != at(p, pi):
                return NOMATCH
        elif p_ch == ord("?"):
            if pathname and t_ch == ord("/"):
                return NOMATCH
        elif p_ch == ord("*"):
            pi += 1
            match_slash = not pathname
            if at(p, pi) == ord("*"):
                prev = pi - 2
                while at(p, pi) == ord("*"):
                    pi += 1
                if not pathname:
                    match_slash = True
                elif (prev < start or p[prev] == ord("/")) and (
                        at(p, pi) in (0, ord("/")) or (at(p, pi) == ord("\\") and at(p, pi + 1) == ord("/"))):
                    if at(p, pi) == ord("/") and dowild(p, t, pathname, pi + 1, ti) == MATCH:
                        return MATCH
                    match_slash = True
            if pi >= len(p):
                return NOMATCH if not match_slash and b"/" in t[ti:] else MATCH
            if not match_slash and p[pi] == ord("/"):
                slash = t.find(b"/", ti)
                if slash < 0:
                    return NOMATCH
                ti = slash + 1
                pi += 1
                continue
            while True:
                if t_ch == 0:
                    break
                if p[pi] not in b"*?[\\":
                    while (t_ch := at(t, ti)) != 0 and (match_slash or t_ch != ord("/")):
                        if t_ch == p[pi]:
                            break
                        ti += 1
                    if t_ch != p[pi]:
                        return NOMATCH
                matched = dowild(p, t, pathname, pi, ti)
                if matched != NOMATCH:
                    if not match_slash or matched != ABORT_TO_STARSTAR:
                        return matched
                elif not match_slash and t_ch == ord("/"):
                    return ABORT_TO_STARSTAR
                ti += 1
                t_ch = at(t, ti)
            return ABORT_ALL
        elif p_ch == ord("["):
            pi += 1
            negated = at(p, pi) in b"!^"
            pi += negated
            prev_ch, matched, p_ch = 0, False, at(p, pi)
            while True:
                if not p_ch:
                    return ABORT_ALL
                if p_ch == ord("\\"):
                    pi += 1
                    p_ch = at(p, pi)
                    if not p_ch:
                        return ABORT_ALL
                    matched |= t_ch == p_ch
                elif p_ch == ord("-") and prev_ch and at(p, pi + 1) and at(p, pi + 1) != ord("]"):
                    pi += 1
                    p_ch = at(p, pi)
                    if p_ch == ord("\\"):
                        pi += 1
                        p_ch = at(p, pi)
                        if not p_ch:
                            return ABORT_ALL
                    matched |= prev_ch <= t_ch <= p_ch
                    p_ch = 0
                elif p_ch == ord("[") and at(p, pi + 1) == ord(":"):
                    s = pi + 2
                    end = p.find(b"]", s)
                    if end < 0:
                        return ABORT_ALL
                    if end - s - 1 < 0 or p[end - 1] != ord(":"):
                        matched |= t_ch == ord("[")
                        prev_ch, pi = ord("["), pi + 1  # the `continue` re-reads from `:`
                        p_ch = at(p, pi)
                        if p_ch == ord("]"):
                            break
                        continue
                    test = _CLASSES.get(p[s:end - 1])
                    if test is None:
                        return ABORT_ALL
                    matched |= bool(test(bytes([t_ch])))
                    pi, p_ch = end, 0
                else:
                    matched |= t_ch == p_ch
                prev_ch = p_ch
                pi += 1
                p_ch = at(p, pi)
                if p_ch == ord("]"):
                    break
            if matched == negated or (pathname and t_ch == ord("/")):
                return NOMATCH
        elif t_ch != p_ch:
            return NOMATCH
        pi += 1
        ti += 1
    return NOMATCH if ti < len(t) else MATCH


def git_line_matches(line: bytes, local: bytes, is_dir: bool) -> bool | None:
    """dir.c for one already-trimmed line: None when it does not match ``local``, else
    whether it ignores."""
    ignores = not line.startswith(b"!")
    pattern = line if ignores else line[1:]
    dir_only = pattern.endswith(b"/")
    pattern = pattern[:-1] if dir_only else pattern
    if not pattern or (dir_only and not is_dir):
        return None
    if b"/" not in pattern:  # match_basename, flags 0
        hit = dowild(pattern, local.rpartition(b"/")[2], pathname=False) == MATCH
    else:
        pattern = pattern[1:] if pattern.startswith(b"/") else pattern
        prefix = next((i for i, c in enumerate(pattern) if c in b"*?[\\"), len(pattern))
        if local[:prefix] != pattern[:prefix]:
            return None
        hit = dowild(pattern[prefix:], local[prefix:], pathname=True) == MATCH
    return ignores if hit else None


# Line atoms, each with a text it matches (so that about half the paths are near-hits).
LINE_ATOMS = {b"a": b"a", b"b": b"b", b"/": b"/", b"*": b"ab", b"**": b"a/b", b"?": b"-", b"[ab]": b"b",
              b"[!a]": b"b", b"[^/]": b"a", b"[a-c]": b"c", b"[[:alpha:]]": b"b", b"[]a]": b"]", b"[a-]": b"-",
              b"[[:x]": b"[", b"\\*": b"*", b"\\/": b"/", b"\\": b"\\", b"[": b"[", b".": b".",
              b"\xc3\xa9": b"\xc3\xa9", b"!": b"!", b"-": b"-", b"]": b"]"}
PATH_SEGMENTS = [b"a", b"b", b"ab", b"ba", b"aab", b".", b"-", b"\xc3\xa9", b"*", b"[", b"]", b"a]", b"x"]


def test_gitignore_lines_answer_like_gits_own_algorithm():
    """40,000 random lines (up to 7 atoms: stars, `**`, classes, escapes, UTF-8) against
    paths made from the line itself or at random, as files and directories: our regexes
    and git's recursive wildmatch give the same verdict on every one."""
    rng = random.Random(14)
    import rules_core.discovery.ignore as ignore

    disagreements, hits = [], 0
    for _ in range(40_000):
        atoms = [rng.choice(list(LINE_ATOMS)) for _ in range(rng.randint(1, 7))]
        line = b"".join(atoms)
        if rng.random() < 0.5:
            local = b"/".join(s for s in b"".join(LINE_ATOMS[a] for a in atoms).split(b"/") if s) or b"a"
        else:
            local = b"/".join(rng.choice(PATH_SEGMENTS) for _ in range(rng.randint(1, 5)))
        is_dir = rng.random() < 0.3
        spec = ignore.compile_spec(line)
        ours = spec.decide(local, is_dir) if spec is not None else None
        expected = git_line_matches(line, local, is_dir)
        hits += expected is not None
        if ours is not expected:
            disagreements.append((line, local, is_dir, ours))
    assert disagreements == [] and hits > 4_000


CHAIN_SEGMENTS = [b"**", b"a", b"b", b"*", b"a*", b"*b", b"?", b"[ab]", b"x"]


def test_gitignore_globstar_chains_answer_like_gits_own_algorithm():
    """Where every `**` but the last commits to its first fit: 20,000 lines of 2-6
    segments among `**`, `a`, `*`, `a*`, `?`... against paths of `a`, `b`, `x`."""
    rng = random.Random(7)
    import rules_core.discovery.ignore as ignore

    disagreements, hits = [], 0
    for _ in range(20_000):
        line = b"/".join(rng.choice(CHAIN_SEGMENTS) for _ in range(rng.randint(2, 6)))
        local = b"/".join(rng.choice([b"a", b"b", b"x", b"ab"]) for _ in range(rng.randint(1, 7)))
        spec = ignore.compile_spec(line)
        ours = spec.decide(local, False) if spec is not None else None
        expected = git_line_matches(line, local, False)
        hits += expected is not None
        if ours is not expected:
            disagreements.append((line, local, ours))
    assert disagreements == [] and hits > 1_000


def test_gitignore_matching_grows_linearly_with_the_name():
    """The attack's line against a name 4x longer costs under 8x as much (about 4x; the
    backtracking regex went from minutes to hours). Best of three, in-process."""
    import rules_core.discovery.ignore as ignore

    spec = ignore.compile_spec(b"*a*a*a*a*a*a*b\n**/*a*a*a*a*a*a*b/**/x*y*z\n")
    assert spec is not None
    short, long = b"a" * 60, b"a" * 240
    for subject in (short, long, long + b"b"):
        assert spec.decide(subject, True) is (True if subject.endswith(b"b") else None)

    def many(name: bytes) -> Callable[[], object]:
        return lambda: [spec.decide(name, True) for _ in range(200)]

    ratio = _best_time(many(long)) / _best_time(many(short))
    assert ratio < 8, f"matching grew {ratio:.1f}x for a 4x longer name"
