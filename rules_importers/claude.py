"""The ``claude`` importer: Claude Code's modular rules (RULE-SPEC §1).

Reads ``<cwd>/.claude/rules/**/*.md`` in place. ``paths`` is optional: one glob string, a
comma-separated string (split only outside ``{…}``) or a YAML list of glob strings; no
``paths`` — or no frontmatter — means always-apply, and ``**`` is an ordinary glob.
Brace sets and ``!`` negations reach the matcher verbatim. The description is an
explicit non-blank ``description``, else the first line that looks like an ATX heading
(code fences are not special), else the file stem. Every other key is ignored, except
the peers' stream-rule keys, which are kept.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import dedupe, enabled, imported_rule, list_import_root, read_document, split_globs
from .copilot import (
    binary_text,
    compiled,
    explicit_description,
    guarded,
    kind_of,
    stream_extra,
    with_quote_hint,
)

NAME = "claude"
ROOT = os.path.join(".claude", "rules")
# CommonMark allows up to three spaces before an ATX heading's '#' run.
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<text>.*)$")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary="Claude Code: .claude/rules/**/*.md (paths)")]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not enabled(context, NAME):
        return []
    listed = list_import_root(context, NAME, os.path.join(context.cwd, ROOT), accept=is_markdown)
    return [_with_stem(item) if isinstance(item, RuleFile) else item for item in listed]


@hookimpl
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    return guarded(rule_file, lambda: _parse(rule_file, text))


def is_markdown(name: str) -> bool:
    return name.endswith(".md")


def _with_stem(rule_file: RuleFile) -> RuleFile:
    # A file named just ``.md`` has an empty stem; it still needs an id.
    return rule_file if rule_file.stem else dataclasses.replace(rule_file, id_stem="md")


def _parse(rule_file: RuleFile, text: str) -> ParseResult:
    damaged = binary_text(rule_file, text)
    if damaged is not None:
        return damaged
    document = read_document(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (with_quote_hint(document, text),))
    data = document.data
    errors: list[RuleError] = []
    description = explicit_description(rule_file, data, errors)
    globs = _paths(rule_file, data, errors)
    if errors:
        return ParseResult(None, tuple(errors))
    rule = imported_rule(
        rule_file,
        description=description or first_heading(document.body) or rule_file.stem,
        body=document.body,
        globs=globs,
        # Only the absence of ``paths`` means always; ``**`` stays an ordinary glob.
        always_apply=not globs,
        extra=stream_extra(data),
    )
    return compiled(rule)


def _paths(rule_file: RuleFile, data: Mapping[str, Any], errors: list[RuleError]) -> tuple[str, ...]:
    """The normalised globs; empty when the rule applies always (no ``paths``)."""
    if "paths" not in data:
        return ()
    value = data["paths"]
    fix = "remove the key to apply the rule always, or list globs such as 'src/**/*.ts'"
    if isinstance(value, str):
        globs = split_globs(value)
    elif isinstance(value, list):
        bad = next((i for i, v in enumerate(value, 1) if not isinstance(v, str)), None)
        if bad is not None:
            entry = value[bad - 1]
            problem = (
                f"paths entry {bad} is empty; delete the bare '-' line" if entry is None
                else f"paths entry {bad} must be a glob string, got {kind_of(entry)}; quote it"
            )
            errors.append(RuleError("invalid-value", rule_file.path, problem, rule_file.plugin))
            return ()
        globs = dedupe(value)
    else:
        shown = "empty" if value is None else f"{kind_of(value)}, not a glob string or a list of glob strings"
        problem = f"paths is {shown}; {fix}"
        errors.append(RuleError("invalid-value", rule_file.path, problem, rule_file.plugin))
        return ()
    if not globs:
        # An empty ``paths`` is a slip, not a request for always-apply (RULE-SPEC §1).
        problem = f"paths {value!r} names no glob; {fix}"
        errors.append(RuleError("invalid-value", rule_file.path, problem, rule_file.plugin))
    return globs


def first_heading(body: str) -> str:
    """The text of the first line that looks like an ATX heading (RULE-SPEC §1: fenced
    code is not skipped); headings with no text are passed over."""
    for line in body.split("\n"):
        match = _HEADING.match(line)
        if match:
            text = match.group("text").strip()
            if text:
                return text
    return ""
