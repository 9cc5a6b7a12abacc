"""A rule's globs, compiled once when the rule is loaded.

Matchers and the explain report use these; nothing compiles a pattern per evaluation.
A pattern that cannot compile is kept out (it never matches) and reported. What one
rule's globs may cost together is capped too (issue 14): each glob is bounded on its own
(rules_core.globs._budget), but a 1 MiB rule file of 110,000 distinct globs took 30 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from rules_core.globs.matching import (
    Glob,
    GlobError,
    compile_flat,
    compile_glob,
    last_segment,
    normalize_path,
)
from rules_core.paths import is_as_written, rebase

MAX_GLOBS = 1000  # per rule; real rules have a few dozen
# Regex text one rule's globs may compile to, together (~1 s of compiling; a typical
# glob is 100-700 characters of regex, the longest allowed one 262,144).
RULE_REGEX_BUDGET = 512 * 1024


@dataclass(frozen=True)
class GlobSet:
    """A rule's positive and negated path globs (OR of positives, minus any negation).

    Each glob is flagged "as written" when it is absolute or ``..``-escaping: those are
    matched against the session's own path, every other glob against the path rebased
    onto the rule's base (RULE-SPEC §1).
    """

    positives: tuple[Glob, ...]
    negatives: tuple[Glob, ...]
    # Each positive glob's last segment, compiled, for language intent probes.
    last_segments: tuple[Glob, ...]
    # Normalised positive pattern strings, for keyword-donated intent globs.
    positive_texts: frozenset[str]
    positive_as_written: tuple[bool, ...] = ()
    negative_as_written: tuple[bool, ...] = ()

    def matches(self, session_path: str, rebased: str | None) -> bool:
        """Both forms must already be normalised; ``rebased`` is None outside the base."""
        return _any(self.positives, self.positive_as_written, session_path, rebased) and not _any(
            self.negatives, self.negative_as_written, session_path, rebased
        )

    def first_session_match(self, paths: Iterable[str], cwd: str, base: str) -> str | None:
        """The first session path (cwd-relative or absolute) this rule's globs claim."""
        for path in paths:
            if self.matches(path, rebase(path, cwd, base)):
                return path
        return None


def _any(globs: tuple[Glob, ...], as_written: tuple[bool, ...], session: str, rebased: str | None) -> bool:
    for glob, written in zip(globs, as_written):
        target = session if written else rebased
        if target is not None and glob.match_normalized(target):
            return True
    return False


@dataclass(frozen=True)
class CompiledRule:
    globs: GlobSet
    model: Glob | None
    branch: Glob | None


EMPTY_GLOBSET = GlobSet((), (), (), frozenset())


def compile_rule(
    globs: Iterable[str], model: str | None, branch: str | None
) -> tuple[CompiledRule, list[str]]:
    """Compile a rule's patterns; returns the result and one problem text per bad one."""
    problems: list[str] = []
    positives: list[Glob] = []
    negatives: list[Glob] = []
    last_segments: list[Glob] = []
    texts: set[str] = set()
    globs = tuple(globs)
    if len(globs) > MAX_GLOBS:
        problems.append(f"the rule has {len(globs):,} globs, over the limit of {MAX_GLOBS:,}; only the "
                        f"first {MAX_GLOBS:,} are used — split it into several rules")
    spent = 0  # checked before each compile, so the overshoot is one glob's worth
    for index, raw in enumerate(globs[:MAX_GLOBS]):
        if spent > RULE_REGEX_BUDGET:
            problems.append(f"glob {raw!r} and the {min(len(globs), MAX_GLOBS) - index - 1:,} after it cannot "
                            f"be used: the rule's globs together are too large (over {RULE_REGEX_BUDGET:,} "
                            "characters compiled); split it into several rules")
            break
        negated = raw.startswith("!")
        pattern = raw[1:] if negated else raw
        try:
            glob = compile_glob(pattern)
        except GlobError as exc:
            problems.append(f"glob {raw!r} cannot be used: {exc}")
            continue
        spent += len(glob.regex.pattern)
        if negated:
            negatives.append(glob)
            continue
        positives.append(glob)
        texts.add(normalize_path(pattern))
        try:
            last_segments.append(compile_glob(last_segment(pattern)))
            spent += len(last_segments[-1].regex.pattern)
        except GlobError:
            pass  # the whole glob compiled, so only intent probing loses this one
    compiled_model = _flat(model, "model", problems)
    compiled_branch = _flat(branch, "branch", problems)
    globset = GlobSet(
        tuple(positives),
        tuple(negatives),
        tuple(last_segments),
        frozenset(texts),
        tuple(is_as_written(g.pattern) for g in positives),
        tuple(is_as_written(g.pattern) for g in negatives),
    )
    return CompiledRule(globset, compiled_model, compiled_branch), problems


def _flat(pattern: str | None, key: str, problems: list[str]) -> Glob | None:
    if pattern is None:
        return None
    try:
        return compile_flat(pattern)
    except GlobError as exc:
        problems.append(f"{key} pattern {pattern!r} cannot be used (it matches nothing): {exc}")
        return None


class LazyCompiledRule:
    """A rule's matchers compiled on first use, each part alone: a parse read back from the
    persistent cache (rules_core.discovery.kept_parses) compiles only the globs, model or
    branch pattern an evaluation asks for. Compiling goes through ``compile_rule``, so a
    pattern read back meets every bound one read from a rule file does."""

    __slots__ = ("_globs", "_model", "_branch", "_parts")

    def __init__(self, globs: tuple[str, ...], model: str | None, branch: str | None) -> None:
        self._globs, self._model, self._branch = globs, model, branch
        self._parts: dict[str, object] = {}

    @property
    def compiled_parts(self) -> frozenset[str]:
        """Which of ``globs``, ``model`` and ``branch`` have been compiled so far."""
        return frozenset(self._parts)

    @property
    def globs(self) -> GlobSet:
        if "globs" not in self._parts:
            self._parts["globs"] = compile_rule(self._globs, None, None)[0].globs if self._globs else EMPTY_GLOBSET
        return self._parts["globs"]  # type: ignore[return-value]

    @property
    def model(self) -> Glob | None:
        if "model" not in self._parts:
            self._parts["model"] = compile_rule((), self._model, None)[0].model
        return self._parts["model"]  # type: ignore[return-value]

    @property
    def branch(self) -> Glob | None:
        if "branch" not in self._parts:
            self._parts["branch"] = compile_rule((), None, self._branch)[0].branch
        return self._parts["branch"]  # type: ignore[return-value]
