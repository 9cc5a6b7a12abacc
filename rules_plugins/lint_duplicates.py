"""The ``lint-duplicates`` plugin: ``duplicate-body`` warnings (docs/lint.md).

Teams that use several agents keep one rule set per tool — the same text in
``.cursor/rules`` and ``.windsurf/rules`` — and pi-rules imports them all. Byte-identical
pinned bodies are deduplicated by the selection (RULE-SPEC §6: higher ``priority`` wins,
then the later discovery index), so only one copy is sent; which one follows from
priorities and file order, and muting it silently brings the other back. Bodies that
differ only in blank edges or trailing spaces are not deduplicated: the model reads the
text twice. Both cases are worth one line in ``check``. On-demand rules count too: an
on-demand copy of a pinned text loses its index line while the text is sent (selection),
and two on-demand copies put the same text in the index twice. A file with two names (a
symbolic link, ``rules_core.discovery.aliases``) is one rule, never a copy of itself.
"""

from __future__ import annotations

from typing import Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext
from rules_core.model import Discovery, Rule, RuleWarning
from rules_core.select import dedupe

CODE = "duplicate-body"
KEEP_BOTH = "if each tool needs its own, block one importer for pi-rules (-p no:NAME) or silence duplicate-body"


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    candidates = [r for r in discovery.rules if _counted(r)]
    found: list[RuleWarning] = []
    by_body: dict[str, list[Rule]] = {}
    for rule in candidates:
        by_body.setdefault(rule.body, []).append(rule)
    for copies in by_body.values():
        if len(copies) > 1:
            found.extend(_identical(copies))
    by_text: dict[str, list[Rule]] = {}
    for body, copies in by_body.items():
        by_text.setdefault(_text(body), []).append(copies[0])
    for variants in by_text.values():
        if len(variants) > 1:
            found.extend(_near(variants))
    return found


def _identical(copies: list[Rule]) -> list[RuleWarning]:
    """The selection keeps one pinned copy: name it on every other copy. An on-demand copy
    of a pinned text loses its index line while that text is sent; on-demand copies of
    each other are all offered (named on every copy after the first)."""
    pinned = [r for r in copies if r.load == "pinned"]
    winner = dedupe(pinned)[0][0] if pinned else min(copies, key=lambda r: r.index)
    found = []
    for rule in copies:
        if rule is winner:
            continue
        if rule.load == "pinned":
            message = (f"rule {rule.id} has the same text as {winner.id} ({_where(winner)}): when both are active only "
                       f"{winner.id} is sent ({_why(rule, winner)}), and muting {winner.id} sends this copy instead")
        elif winner.load == "pinned":
            message = (f"on-demand rule {rule.id} has the same text as the pinned rule {winner.id} ({_where(winner)}): "
                       f"while {winner.id} is sent, this rule's index line is left out (the text is in the section "
                       "already); when it is not, the model is offered a text it may have had")
        else:
            message = (f"on-demand rule {rule.id} has the same text as on-demand rule {winner.id} ({_where(winner)}): "
                       "the index offers the model the same text twice")
        found.append(RuleWarning(CODE, rule.file.path, f"{message} — keep one copy; {KEEP_BOTH}", "lint-duplicates"))
    return found


def _counted(rule: Rule) -> bool:
    """Bodies the model may get: pinned (the section) and on-demand (fetched from the index)."""
    return rule.inactive_reason is None and bool(rule.body.strip())


def _why(rule: Rule, winner: Rule) -> str:
    return "its priority is higher" if winner.priority != rule.priority else "it comes later in discovery order"


def _near(variants: list[Rule]) -> list[RuleWarning]:
    """Equal but for blank edges or trailing spaces: never deduplicated, so sent twice.
    Named on every copy after the first in discovery order."""
    first, *later = sorted(variants, key=lambda r: r.index)
    return [
        RuleWarning(CODE, rule.file.path, (
            f"rule {rule.id} has the text of {first.id} ({_where(first)}) but for blank lines or trailing "
            f"spaces: only byte-identical bodies are deduplicated, so when both are active the model reads it "
            f"twice — keep one copy, or make them identical; {KEEP_BOTH}"
        ), "lint-duplicates")
        for rule in later
    ]


def duplicate_groups(rules: Sequence[Rule]) -> list[tuple[Rule, ...]]:
    """The rules this linter calls copies of each other (identical, or equal but for blank
    edges and trailing spaces), each group in discovery order; ``pi-rules map`` lists them."""
    groups: dict[str, list[Rule]] = {}
    for rule in rules:
        if _counted(rule):
            groups.setdefault(_text(rule.body), []).append(rule)
    return [tuple(sorted(g, key=lambda r: r.index)) for g in groups.values() if len(g) > 1]


def _text(body: str) -> str:
    return "\n".join(line.rstrip() for line in body.strip().splitlines())


def _where(rule: Rule) -> str:
    return f"{rule.file.plugin}: {rule.relative_path}"
