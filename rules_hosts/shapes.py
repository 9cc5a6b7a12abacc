"""The JSON shapes of CONTRACT §3, in one place for the CLI, ``serve`` and MCP."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rules_core import delivery
from rules_core.model import Evaluation, Explanation, Outcome, Rule, RuleError, RuleWarning

# The read_rule tool's one parameter (RULE-SPEC §6), as Pi and MCP declare it.
READ_RULE_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The rule's rules-relative path, exactly as the index lists it."}
    },
    "required": ["path"],
    "additionalProperties": False,
}


def rule_json(rule: Rule) -> dict[str, Any]:
    """A rule's keys; ``aliases`` (the absolute paths of the in-project links that name the
    same file, CONTRACT §7) only for a rule that has them."""
    return {
        "id": rule.id,
        "relativePath": rule.relative_path,
        "path": rule.file.path,
        "source": rule.source,
        "plugin": rule.file.plugin,
        "description": rule.description,
        "load": rule.load,
        "priority": rule.priority,
        "enforcement": rule.enforcement,
    } | ({"aliases": [a.path for a in rule.aliases]} if rule.aliases else {})


def outcome_json(
    outcome: Outcome,
    overflow: str = "drop",
    rooms: Mapping[str, int] | None = None,
    kept: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A rule's outcome. Issue 15 added ``delivery`` (``section``, ``index`` or ``none``:
    what the model gets), ``room`` (budget drops: the tokens left when selection reached
    it) and ``duplicateOf`` (duplicate drops: the id of the copy kept); null otherwise."""
    return rule_json(outcome.rule) | {
        "status": outcome.status,
        "reasons": list(outcome.reasons),
        "cause": outcome.cause,
        "tokens": outcome.tokens,
        "delivery": delivery.delivery(outcome, overflow),
        "room": (rooms or {}).get(outcome.rule.id),
        "duplicateOf": (kept or {}).get(outcome.rule.id) or None,
    }


def errors_json(errors: Sequence[RuleError]) -> list[dict[str, Any]]:
    """CONTRACT §3: ``{"kind", "path", "message"}`` each, plus ``line`` (and ``column``) when
    the error has a place in its file (issue 34), as the warnings."""
    return [_with_place({"kind": e.kind, "path": e.path, "message": e.message}, e.line, e.column) for e in errors]


def warnings_json(warnings: Sequence[RuleWarning]) -> list[dict[str, Any]]:
    """CONTRACT §6: ``{"code", "path", "message"}`` each, plus ``line`` (and ``column``) when
    the warning has a place in its file (issue 34)."""
    return [_with_place({"code": w.code, "path": w.path, "message": w.message}, w.line, w.column) for w in warnings]


def _with_place(entry: dict[str, Any], line: int | None, column: int | None) -> dict[str, Any]:
    if line is not None:
        entry["line"] = line
        if column is not None:
            entry["column"] = column
    return entry


def evaluation_json(evaluation: Evaluation) -> dict[str, Any]:
    """CONTRACT §3; issue 15 added ``overflow`` and ``pinned`` (the report's summary)."""
    overflow = evaluation.facts.overflow
    rooms, kept = delivery.rooms(evaluation), delivery.kept_copies(evaluation)
    return {
        "rules": [outcome_json(o, overflow, rooms, kept) for o in evaluation.outcomes],
        "errors": errors_json(evaluation.errors),
        "warnings": warnings_json(evaluation.warnings),
        "budget": {"used": evaluation.budget_used, "limit": evaluation.facts.max_tokens},
        "section": evaluation.section,
        "sectionTokens": evaluation.section_tokens,
        "overflow": overflow,
        "pinned": pinned_json(evaluation),
    }


def pinned_json(evaluation: Evaluation) -> dict[str, Any]:
    """Pinned tokens that matched and that the section carries, in all and per source, and
    each budget pool with what it admitted (docs/format.md, "Budget pools")."""
    sources = delivery.pinned_by_source(evaluation)
    return {
        "matched": sum(s.matched for s in sources),
        "sent": delivery.pinned_sent(evaluation),
        "sources": [{"source": s.source, "plugin": s.plugin, "matched": s.matched, "sent": s.sent} for s in sources],
        "pools": [{"name": p.name, "used": used, "limit": p.max_tokens, "summary": p.summary}
                  for p, used in evaluation.pools],
    }


def explanation_json(explanation: Explanation) -> dict[str, Any]:
    return {
        "path": explanation.path,
        "rules": [
            {"id": e.rule.id, "verdict": e.verdict, "reasons": list(e.reasons), "caveats": list(e.caveats),
             "description": e.rule.description, "load": e.rule.load}
            | ({"path": e.rule.file.path, "aliases": [a.path for a in e.rule.aliases]} if e.rule.aliases else {})
            for e in explanation.entries
        ],
        "errors": errors_json(explanation.errors),
    }


def conditions_json(rule: Rule) -> dict[str, Any]:
    return {
        "globs": list(rule.globs),
        "match": rule.match,
        "tools": list(rule.tools),
        "model": rule.model,
        "branch": rule.branch,
        "keywords": list(rule.keywords),
        "alwaysApply": rule.always_apply,
    }


def catalogue_json(evaluation: Evaluation, hooks: Any) -> dict[str, Any]:
    """What the on-demand index costs: its lines (skills' ``name — description`` among
    them) rendered as the host would and estimated, in all and per importer. The shape
    of ``report --json``'s ``catalogue`` (docs/importers.md, "The skills importer")."""
    host = hooks.hosts().get(evaluation.facts.host) if evaluation.facts.host else None
    reference = host.reference if host is not None else ""
    rows: dict[str, list[int]] = {}
    for outcome in evaluation.on_demand:
        line = hooks.render("index-line", {"rule": outcome.rule, "reference": reference}) or ""
        row = rows.setdefault(outcome.rule.file.plugin or outcome.rule.source, [0, 0])
        row[0] += 1
        row[1] += hooks.estimate_tokens(line)
    return {
        "lines": sum(r[0] for r in rows.values()),
        "tokens": sum(r[1] for r in rows.values()),
        "plugins": [{"plugin": name, "lines": r[0], "tokens": r[1]} for name, r in rows.items()],
    }
