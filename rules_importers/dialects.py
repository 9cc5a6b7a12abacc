"""Glob dialects: each importer reads its globs as its own tool's matcher does.

The engine matches globs as picomatch does (docs/globs.md). An importer whose tool uses
another matcher declares that dialect and translates each glob into the engine's syntax
before it is compiled, so a rule applies here to the files it applies to there
(docs/importers.md, "Glob dialects"). Which tool uses which matcher:

- ``picomatch`` (nothing to translate): the spec's own sources, Claude Code's
  ``.claude/rules``, Copilot's importer (RULE-SPEC), Cline (``picomatch(p, {dot: true})``
  in its rule conditionals), and the closed-source tools whose matcher is unknown (Cursor, Windsurf,
  Kiro): their docs show only patterns both dialects read the same way.
- ``minimatch``: Continue (``core/llm/rules/getSystemMessageWithRules.ts`` calls
  ``minimatch(path, glob)``).

A translated glob is kept on the rule (``Rule.extra["glob-dialect"]``, shown by ``show``),
and this plugin's ``check`` warning ``glob-dialect`` says where the two dialects differ, so
an author can write the glob every tool reads alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext, locate
from rules_core.model import Discovery, RuleWarning

PICOMATCH = "picomatch"
MINIMATCH = "minimatch"
EXTRA_KEY = "glob-dialect"
CODE = "glob-dialect"
_EXTGLOB = frozenset("@!?*+")


@dataclass(frozen=True)
class Translated:
    """One glob as authored for its tool and as the engine compiles it; ``why`` names
    each construct the dialects read differently."""

    authored: str
    glob: str
    dialect: str
    why: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.authored} → {self.glob} ({self.dialect})"


def translate(dialect: str, glob: str) -> Translated:
    """``glob`` as the engine must spell it to match what ``dialect`` matches."""
    if dialect == MINIMATCH:
        return _from_minimatch(glob)
    return Translated(glob, glob, dialect)


def translate_all(dialect: str, globs: Sequence[str]) -> tuple[tuple[str, ...], tuple[Translated, ...]]:
    """The engine's globs, in order, and the ones the dialects read differently."""
    done = [translate(dialect, glob) for glob in globs]
    return tuple(t.glob for t in done), tuple(t for t in done if t.why)


def _from_minimatch(glob: str) -> Translated:
    """minimatch → picomatch: ``[!x]`` negates a class in minimatch (picomatch: the set
    {!, x}); outside an extglob, ``(``, ``)``, ``|`` and ``+`` are plain characters in
    minimatch (picomatch: a regex group, alternation, "one or more")."""
    out: list[str] = []
    why: list[str] = []
    depth = 0  # open extglob groups: inside one, `(`, `|`, `)` are syntax in both
    negations: list[bool] = []  # per open group: is it `!(`
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "\\" and i + 1 < n:
            out.append(glob[i:i + 2])
            i += 2
            continue
        if c == "[":
            end = _class_end(glob, i)
            if end is not None:
                body = glob[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                    _note(why, "[!…] is a negated class in minimatch, the set {!, …} in picomatch")
                out.append("[" + body + "]")
                i = end + 1
                continue
        if c == "(" and i > 0 and glob[i - 1] in _EXTGLOB and not _escaped(glob, i - 1):
            depth += 1
            negations.append(glob[i - 1] == "!")
            out.append(c)
        elif c == ")" and depth:
            depth -= 1
            if negations.pop() and i + 1 < n and glob[i + 1] != "/":
                _note(why, "!(…) followed by more of the segment excludes only the whole segment in minimatch; "
                           "picomatch reads it differently and pi-rules cannot translate it")
            out.append(c)
        elif c == "|" and depth:
            out.append(c)
        elif c in "()|" or (c == "+" and not (i + 1 < n and glob[i + 1] == "(")):
            out.append("\\" + c)
            _note(why, f"'{c}' is a plain character in minimatch outside an extglob, syntax in picomatch")
        else:
            out.append(c)
        i += 1
    return Translated(glob, "".join(out), MINIMATCH, tuple(why))


def _class_end(glob: str, start: int) -> int | None:
    """Index of the ``]`` closing the class opened at ``start`` (a ``]`` right after
    ``[``, ``[!`` or ``[^`` is a member), or None when it never closes (a literal ``[``)."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    while i < len(glob):
        if glob[i] == "\\":
            i += 2
            continue
        if glob[i] == "]":
            return i
        i += 1
    return None


def _escaped(glob: str, at: int) -> bool:
    slashes = 0
    while at - 1 - slashes >= 0 and glob[at - 1 - slashes] == "\\":
        slashes += 1
    return slashes % 2 == 1


def _note(why: list[str], text: str) -> None:
    if text not in why:
        why.append(text)


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    found = []
    for rule in discovery.rules:
        for done in rule.extra.get(EXTRA_KEY, ()):
            if not isinstance(done, Translated):
                continue
            head = (f"glob '{done.authored}' of rule {rule.id} means something else in {done.dialect}, the matcher "
                    f"{rule.file.plugin} uses, than in pi-rules' picomatch ({'; '.join(done.why)})")
            if done.glob == done.authored:
                tail = "; pi-rules reads it as picomatch does — rewrite it without that construct"
            else:
                tail = (f"; pi-rules reads it as {rule.file.plugin} does, as '{done.glob}' — write '{done.glob}' "
                        "so every tool reads it alike")
            text = context.read_text(rule)  # the glob's entry in its frontmatter, as dead-glob places it
            line, column = locate(text, done.authored) if text is not None else (None, None)
            found.append(RuleWarning(CODE, rule.file.path, head + tail, "glob-dialects", line, column))
    return found
