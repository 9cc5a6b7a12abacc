"""The cross-agent linter behind ``pi-rules check`` (CONTRACT §6, "check warnings").

``lint`` asks every ``pi_rules_lint`` plugin about one discovery and returns the
warnings ``check`` prints after its errors: discovery's own (``cwd-only``,
``invisible-characters``) first, then the plugins', sorted, without the codes the caller
ignores (``[lint] ignore``). A warning loads nothing and breaks nothing; only
``check --strict`` turns warnings into exit 1.

Plugins get a ``LintContext``: what the engine knows that a check needs (the budget, the
always-on rules, the token estimate) and two read-only accessors bound to the project —
``scan`` (the exists scanner, gitignore-aware, inside the git root) and ``read_text`` (a
rule file's text, read inside the project's containment like discovery reads it).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from rules_core.discovery.containment import Containment, Unresolved
from rules_core.deadline import DEADLINE_ENV, DeadlineExceeded, deadline
from rules_core.lint_context import LintContext, Scan
from rules_core.model import Discovery, Evaluation, Facts, Rule, RuleWarning
from rules_core.discovery.reading import read_rule_text
from rules_core.settings.load import filter_warnings
from rules_core.settings.resolved import Resolved

if TYPE_CHECKING:  # the engine imports nothing from here; keep it that way
    from rules_core.engine.core import Engine

__all__ = ["LintContext", "lint", "lint_context", "with_warnings"]


def lint(
    engine: Engine,
    discovery: Discovery,
    *,
    cwd: str,
    trusted: bool = True,
    max_tokens: int = 2000,
    ignore: Iterable[str] = (),
    resolved: Resolved | None = None,
) -> tuple[RuleWarning, ...]:
    """Every warning ``check`` shows for ``discovery``: its own, then the lint plugins'
    (sorted by path, code and message, so plugin order never shows), minus the ``ignore``d
    codes. Runs within the engine's deadline; never raises."""
    ignored = frozenset(ignore)
    try:
        with deadline(engine.deadline_ms):
            context = lint_context(engine, discovery, cwd=cwd, trusted=trusted, max_tokens=max_tokens,
                                   resolved=resolved)
            found = engine.hooks.lint(discovery, context)
    except DeadlineExceeded:
        found = [RuleWarning("lint-failed", cwd, f"the lint checks ran out of time ({DEADLINE_ENV}); "
                             "some warnings may be missing — raise it to lint this repository fully", "engine")]
    except Exception as exc:  # noqa: BLE001 - check must still print its errors
        found = [RuleWarning("lint-failed", cwd, f"the lint checks stopped ({type(exc).__name__}: {exc}); "
                             "some warnings may be missing — please report this", "engine")]
    unique = sorted(set(found), key=lambda w: (w.path, w.code, w.message, w.plugin))
    return filter_warnings((*discovery.warnings, *unique), ignored, cwd)


def lint_context(engine: Engine, discovery: Discovery, *, cwd: str, trusted: bool, max_tokens: int,
                 resolved: Resolved | None = None) -> LintContext:
    """What lint plugins may know; ``resolved``: the call's settings (else read once here)."""
    cwd = os.path.abspath(cwd)
    git_root = engine.discovery.git_root(cwd) if trusted else None
    # The session's first turn: nothing touched, no model, no branch, the main agent. What
    # is active then without any condition is active in every session.
    facts = Facts(cwd=cwd, trusted=trusted, max_tokens=max_tokens, branch=None)
    hooks = engine.hooks
    always_on = tuple(
        rule for rule in engine.reachable(discovery.rules, facts, resolved)
        if rule.load == "pinned" and rule.unconditional and rule.inactive_reason is None
        and hooks.stream_spec(rule) is None
    )
    bound = Containment(git_root or cwd, "the git root" if git_root else "the project directory")
    return LintContext(
        cwd=cwd,
        trusted=trusted,
        env=engine.env,
        max_tokens=max_tokens,
        git_root=git_root,
        home=engine.home,
        always_on=always_on,
        tokens=lambda rule: hooks.estimate_tokens(rule.body),
        scan=_scanner(hooks.scan, git_root) if trusted else (lambda root, queries: None),
        read_text=lambda rule: _read(rule, bound if trusted else None),
    )


def _scanner(scan: Callable[..., Mapping[tuple[str, ...], str | None]], git_root: str | None) -> Scan:
    def answer(root: str, queries: Sequence[tuple[str, ...]]) -> Mapping[tuple[str, ...], str | None] | None:
        try:
            return scan(root, tuple(dict.fromkeys(queries)), git_root)
        except Exception:  # DeadlineExceeded included: unknown is not "no file", report nothing
            return None

    return answer


def _read(rule: Rule, bound: Containment | None) -> str | None:
    """The rule file's text; a project file only through the containment discovery used
    (a link swapped in since that leads out is never followed)."""
    path = rule.file.path
    if rule.source == "project":
        if bound is None:
            return None
        found = bound.resolve(path)
        if found is None or isinstance(found, Unresolved):
            return None
        text = read_rule_text(found[0], follow=False)
    else:
        text = read_rule_text(path)
    return text if isinstance(text, str) else None


def with_warnings(discovery: Discovery, warnings: Sequence[RuleWarning]) -> Discovery:
    """``discovery`` carrying ``warnings`` instead of its own (what ``check`` renders)."""
    return dataclasses.replace(discovery, warnings=tuple(warnings))


def evaluate_with_setup_warnings(engine: Engine, facts: Facts, resolved: Resolved | None = None) -> Evaluation:
    """``engine.evaluate(facts)`` plus the warnings of ``check`` about how the run is set up
    rather than about a rule file (``env-value`` for ``PI_RULES_MAX_TOKENS=20k``, a lint
    check that failed): what ``report`` prints, so a budget it shows is never silently
    misread (issue 34). ``resolved``: the call's settings (else read once here)."""
    resolved = resolved if resolved is not None else engine.resolve(facts.cwd, facts.trusted, facts.host)
    discovery = engine.discover(facts.cwd, facts.trusted, facts.host, resolved)
    evaluation = engine.evaluate(facts, discovery, resolved=resolved)
    rule_files = {r.file.path for r in discovery.rules} | {e.path for e in discovery.errors}
    top = resolved.for_host(None)  # [lint] ignore of the top level, as check reads it
    found = lint(engine, discovery, cwd=facts.cwd, trusted=facts.trusted, max_tokens=facts.max_tokens,
                 ignore=top.lint_ignore, resolved=top)
    own = set(evaluation.warnings)
    more = tuple(w for w in found if w not in own and w.path not in rule_files)
    return dataclasses.replace(evaluation, warnings=(*evaluation.warnings, *more)) if more else evaluation
