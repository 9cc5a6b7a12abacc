"""The ``report`` renderer: the text a person reads (``/rules``, explain, show, check, list).

Every kind takes a dict with ``cwd`` plus ``evaluation`` (report), ``explanation``
(explain), ``rule`` (show) or ``discovery`` (check, list). Ids, paths and messages are
escaped so a hostile file name cannot drive the terminal.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

from rules_core import hookimpl
from rules_core.discovery.aliases import alias_note
from rules_core.delivery import ON_DEMAND_NOTE
from rules_core.model import Discovery, Evaluation, Explanation, Outcome, Rule, RuleError, RuleWarning
from rules_core.safe import safe_block, safe_line

from ._report_budget import Budget, budget_summary, description_line, outcome_details

STATUS_ORDER = ("active", "on-demand", "dropped", "inactive", "muted")
PINNED_NOTE = "pinned: its body goes into the section while the budget has room"


@hookimpl(trylast=True)
def pi_rules_render(kind: str, data: Any) -> str | None:
    renderer: Callable[[Any, str], str] | None = {
        "report": lambda d, cwd: render_report(d["evaluation"], cwd, d.get("catalogue")),
        "explain": lambda d, cwd: render_explain(d["explanation"], cwd),
        "show": lambda d, cwd: render_show(d["rule"], cwd),
        "check": lambda d, cwd: render_check(d["discovery"], cwd),
        "list": lambda d, cwd: render_list(d["discovery"], cwd),
    }.get(kind)
    if renderer is None:
        return None
    return renderer(data, data["cwd"])


def render_report(evaluation: Evaluation, cwd: str, catalogue: Mapping[str, Any] | None = None) -> str:
    outcomes = {status: [o for o in evaluation.outcomes if o.status == status] for status in STATUS_ORDER}
    outcomes["active"] = list(evaluation.active)
    outcomes["on-demand"] = list(evaluation.on_demand)
    counts = ", ".join(f"{len(outcomes[s])} {s}" for s in STATUS_ORDER)
    errors = len(evaluation.errors)
    lines = [f"rules: {counts}, {errors} error{'s' if errors != 1 else ''}"]
    budget = Budget.of(evaluation)
    for status in STATUS_ORDER:
        for outcome in outcomes[status]:
            lines.extend(_report_lines(outcome, cwd, budget))
    lines.extend(_error_line(e, cwd) for e in evaluation.errors)
    lines.extend(_warning_line(w, cwd) for w in evaluation.warnings)
    if evaluation.facts.shell_touched:
        lines.append(f"shell-touched: {safe_line(', '.join(evaluation.facts.shell_touched))}")
    lines.extend(catalogue_lines(catalogue))
    # The budget:/section: lines stay last and exactly as RULE-SPEC §6 words them.
    lines.extend(budget_summary(evaluation))
    lines.append(f"budget: {evaluation.budget_used}/{evaluation.facts.max_tokens} estimated tokens")
    if evaluation.section:
        lines.append(f"section: ~{evaluation.section_tokens} tokens")
    return "\n".join(lines) + "\n"


def _report_lines(outcome: Outcome, cwd: str, budget: Budget) -> list[str]:
    rule = outcome.rule
    if outcome.status == "muted":
        return [f"inactive: {safe_line(rule.id)} (muted for this session)"]
    head = f"{outcome.status}: {safe_line(rule.id)} — {_where(rule, cwd)}"
    details = outcome_details(outcome, budget)
    if outcome.status == "dropped":
        return [f"{head} — {outcome.cause}", *details]
    if outcome.status == "inactive":
        lines = [head, *details, f"  configured: {describe_conditions(rule)}"]
        lines.extend(f"  reason: {safe_line(r)}" for r in outcome.reasons)
        return lines
    # A rule without reasons matched unconditionally: pinned, it is always in the section;
    # on demand, it is always in the index, which is not "applies".
    fallback = "always applies" if outcome.status == "active" else ON_DEMAND_NOTE
    reasons = "; ".join(outcome.reasons) if outcome.reasons else fallback
    return [f"{head} — {safe_line(reasons)}", *details]


def render_explain(explanation: Explanation, cwd: str) -> str:
    lines = [f"why {safe_line(explanation.path)}"]
    labels = {"matches": "matches", "no-match": "no match", "path-independent": "path-independent", "muted": "muted"}
    order = ("matches", "path-independent", "no-match", "muted")
    for verdict in order:
        for entry in (e for e in explanation.entries if e.verdict == verdict):
            reasons = "; ".join(entry.reasons)
            tail = f" — {safe_line(reasons)}" if reasons else ""
            lines.append(f"{labels[verdict]}: {safe_line(entry.rule.id)}{tail}")
            if verdict != "muted":  # a mute is a session action: one bare line, as in the report
                lines.append(f"  {_explain_detail(entry.rule, verdict)}")
            lines.extend(f"  caveat: {safe_line(c)}" for c in entry.caveats)
    if not explanation.entries:
        lines.append("no rules discovered")
    lines.extend(_error_line(e, cwd) for e in explanation.errors)
    return "\n".join(lines) + "\n"


def _explain_detail(rule: Rule, verdict: str) -> str:
    """The description, and for a rule the path would bring in, what the model gets."""
    if verdict == "no-match":
        return description_line(rule)
    return f"{description_line(rule)} · {ON_DEMAND_NOTE if rule.load == 'on-demand' else PINNED_NOTE}"


def render_show(rule: Rule, cwd: str) -> str:
    lines = [
        f"id: {safe_line(rule.id)}",
        f"path: {safe_line(rule.file.path + alias_note(rule, lambda p: _display_path(p, cwd)))}",
        f"relative path: {safe_line(rule.relative_path)}",
        f"source: {rule.source} ({safe_line(rule.file.plugin)})",
        f"description: {safe_line(rule.description)}",
        f"conditions: {describe_conditions(rule)}",
        *_folder_line(rule, cwd),
        f"load: {rule.load}",
        f"enforcement: {rule.enforcement}",
        f"priority: {rule.priority}",
    ]
    if rule.keywords:
        lines.append(f"keywords: {safe_line(', '.join(rule.keywords))}")
    for key in sorted(k for k in rule.extra if k not in rule.extra_conditions):
        # Keys kept for other features (e.g. imported stream-rule keys), shown as read.
        lines.append(f"{safe_line(str(key))}: {safe_line(_shown(rule.extra[key]))}")
    return "\n".join(lines) + "\n\n" + safe_block(rule.body) + "\n"


def rule_folder(rule: Rule, cwd: str) -> str | None:
    """The folder below ``cwd`` a project rule belongs to (``packages/api``, ``/``-separated,
    relative to ``cwd``), None for the rules of cwd itself, its ancestors and global ones:
    its globs are relative to that folder, and an on-demand rule is offered only while the
    agent works there (the ``folder-scope`` matcher). ``show --json``'s ``folder``."""
    base, root = rule.file.base.rstrip("/"), cwd.rstrip("/")
    if rule.source != "project" or not base.startswith(root + "/"):
        return None
    return base[len(root) + 1:]


def _folder_line(rule: Rule, cwd: str) -> list[str]:
    """The folder a rule of a nested folder belongs to (issue 34: ``show`` omitted it)."""
    folder = rule_folder(rule, cwd)
    if folder is None:
        return []
    if rule.load == "on-demand":
        return [f"folder: {safe_line(folder)}/ (offered only while a touched path lies under it)"]
    return [f"folder: {safe_line(folder)}/ (its globs are relative to it)"]


def _shown(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def render_check(discovery: Discovery, cwd: str) -> str:
    """One line per error (or the ``ok:`` line), then ``warning <code> <file>: <message>``
    lines (CONTRACT §6)."""
    if not discovery.errors:
        count = len(discovery.rules)
        lines = [f"ok: {count} rule{'s' if count != 1 else ''}, no errors"]
    else:
        lines = [f"{e.kind} {safe_line(_display_path(e.path, cwd))}: {safe_line(e.message)}" for e in discovery.errors]
    lines.extend(_warning_line(w, cwd) for w in discovery.warnings)
    return "\n".join(lines) + "\n"


def _warning_line(warning: RuleWarning, cwd: str) -> str:
    return f"warning {warning.code} {safe_line(_display_path(warning.path, cwd))}: {safe_line(warning.message)}"


LIST_HEADER = ("ID", "FILE", "SOURCE", "FORMAT", "PATH")


def render_list(discovery: Discovery, cwd: str) -> str:
    rows = [
        (r.id, r.relative_path, r.source, r.file.plugin, _path_with_aliases(r, cwd))
        for r in discovery.rules
    ]
    # A header row names the columns (issue 34); it is part of the widths like any row.
    table = [LIST_HEADER, *rows] if rows else []
    widths = [max((len(safe_line(row[i])) for row in table), default=0) for i in range(4)]
    lines = [
        "  ".join(safe_line(cell).ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + safe_line(row[4])
        for row in table
    ]
    if not rows:
        lines.append("no rules found")
    lines.extend(_error_line(e, cwd) for e in discovery.errors)
    return "\n".join(lines) + "\n"


def describe_conditions(rule: Rule) -> str:
    if rule.inactive_reason is not None:
        return safe_line(rule.inactive_reason)
    parts = []
    if rule.always_apply:
        parts.append("alwaysApply")
    if rule.globs:
        parts.append(f"globs {', '.join(rule.globs)}")
        parts.append(f"match {rule.match}")
    if rule.tools:
        parts.append(f"tools {', '.join(rule.tools)}")
    if rule.model is not None:
        parts.append(f"model {rule.model}")
    if rule.branch is not None:
        parts.append(f"branch {rule.branch}")
    if rule.keywords:
        parts.append(f"keywords {', '.join(rule.keywords)}")
    parts.extend(f"{name} {_shown(rule.extra[name])}" for name in rule.extra_conditions)
    return safe_line("; ".join(parts)) if parts else "none"


def _where(rule: Rule, cwd: str) -> str:
    return f"{_path_with_aliases(rule, cwd)} ({rule.source})"


def _path_with_aliases(rule: Rule, cwd: str) -> str:
    """The rule's path, then ``(also <link>)`` for each other name of its file (CONTRACT §7)."""
    return safe_line(_display_path(rule.file.path, cwd) + alias_note(rule, lambda p: _display_path(p, cwd)))


def _error_line(error: RuleError, cwd: str) -> str:
    return f"error: {error.kind} {safe_line(_display_path(error.path, cwd))}: {safe_line(error.message)}"


def _display_path(path: str, cwd: str) -> str:
    """cwd-relative when inside the working directory, absolute otherwise."""
    root = os.path.abspath(cwd)
    if path.startswith(root.rstrip(os.sep) + os.sep):
        return path[len(root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")
    return path


def catalogue_lines(catalogue: Mapping[str, Any] | None) -> list[str]:
    """``catalogue: 3 index lines, ~250 tokens`` and one line per importer (skills' catalogue
    among them), when the index lists anything; the CLI computes the numbers."""
    if not catalogue or not catalogue.get("lines"):
        return []
    lines = [f"catalogue: {catalogue['lines']} index line{'s' if catalogue['lines'] != 1 else ''}, "
             f"~{catalogue['tokens']} tokens in the section"]
    lines.extend(f"  {safe_line(str(row['plugin']))}: {row['lines']} line{'s' if row['lines'] != 1 else ''}, "
                 f"~{row['tokens']} tokens" for row in catalogue.get("plugins", ()))
    return lines
