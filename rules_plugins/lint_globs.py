"""The ``lint-globs`` plugin: ``dead-glob`` warnings (docs/lint.md).

A glob that matches no file in the repository is almost always a typo or a folder that
moved, and the rule then never activates — silently. The check asks the exists scanner
(``LintContext.scan``: the engine's own ``pi_rules_scan``, so git's ignore rules apply
and nothing outside the git root is read) one query per glob, one walk per rule base.

Only project rules are checked (a global rule's globs mean something else in every
project), and only positive globs that the scan can answer: negations subtract, and
absolute or ``..``-escaping globs are evaluated as written, outside the rule's base
(RULE-SPEC §1). A glob that cannot compile is already an ``invalid-value`` error. When
the scan cannot answer (it failed or ran out of time) nothing is reported.
"""

from __future__ import annotations

import os
from typing import Sequence

from rules_core import hookimpl
from rules_core.globs.matching import GlobError, compile_glob
from rules_core.lint_context import LintContext, locate
from rules_core.model import Discovery, Rule, RuleWarning
from rules_core.paths import is_as_written

CODE = "dead-glob"
_MAGIC = frozenset("*?[]{}()!@+|\\")  # over-counting only skips a hint


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    by_base: dict[str, list[tuple[Rule, str]]] = {}
    for rule in discovery.rules:
        if rule.source != "project" or rule.inactive_reason is not None:
            continue
        for glob in rule.positive_globs:
            if _scannable(glob):
                by_base.setdefault(rule.file.base, []).append((rule, glob))
    found: list[RuleWarning] = []
    for base, pairs in by_base.items():
        globs = list(dict.fromkeys(glob for _, glob in pairs))
        # A literal glob naming a folder (`docs`) matches no file; asking for its files too
        # lets the warning say what to write instead.
        folders = [g for g in globs if not _MAGIC.intersection(g)]
        answers = context.scan(base, [(g,) for g in globs] + [(f"{g}/**",) for g in folders])
        if answers is None:
            continue  # unknown is not "no file"
        for rule, glob in pairs:
            if answers.get((glob,)) is None:
                holds_files = (f"{glob}/**",) in answers and answers[(f"{glob}/**",)] is not None
                text = context.read_text(rule)
                line, column = locate(text, glob) if text is not None else (None, None)
                found.append(RuleWarning(CODE, rule.file.path, _message(rule, glob, base, context.cwd, holds_files),
                                         "lint-globs", line, column))
    return found


def _scannable(glob: str) -> bool:
    if is_as_written(glob):
        return False
    try:
        compile_glob(glob)
    except GlobError:
        return False
    return True


def _message(rule: Rule, glob: str, base: str, cwd: str, folder: bool) -> str:
    where = "the working directory" if base == cwd else _shown(base, cwd)
    head = f"glob {glob!r} of rule {rule.id} matches no file in {where} (files git ignores are not counted)"
    if folder:
        return f"{head}: it names a folder, and globs match files — write '{glob}/**' for every file in it"
    return (f"{head}, so the rule activates only if such a file is created and touched — a typo, or a folder "
            "that moved? Fix the glob, or silence dead-glob if the files are yet to come")


def _shown(path: str, cwd: str) -> str:
    prefix = cwd.rstrip(os.sep) + os.sep
    return path[len(prefix):].replace(os.sep, "/") if path.startswith(prefix) else path
