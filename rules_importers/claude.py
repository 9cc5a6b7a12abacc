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
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, finish, glob_values, imported_rule, invalid, kind_of,
    list_import_root, extension,
)
from ._recovery import read_markdown

NAME = "claude"
ROOT = os.path.join(".claude", "rules")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary="Claude Code: .claude/rules/**/*.md (paths)", cwd_only=(ROOT,))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not enabled(context, NAME):
        return []
    listed = list_import_root(context, NAME, os.path.join(context.cwd, ROOT), accept=is_markdown)
    return [_with_stem(item) if isinstance(item, RuleFile) else item for item in listed]


@hookimpl(trylast=True)
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    return _parse(rule_file, text, extra_keys)


def is_markdown(name: str) -> bool:
    return name.endswith(".md")


def _with_stem(rule_file: RuleFile) -> RuleFile:
    # A file named just ``.md`` has an empty stem; it still needs an id.
    return rule_file if rule_file.stem else dataclasses.replace(rule_file, id_stem="md")


def _parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult:
    document = read_markdown(rule_file, text)
    if isinstance(document, ParseResult):
        return document
    data = document.data
    problems: list[str] = []
    description = describe(rule_file, data, problems, body=document.body)
    globs = _paths(data, problems)
    extended = extension(data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    # Only the absence of ``paths`` means always; ``**`` stays an ordinary glob.
    kept = {"description": description, "body": document.body, **extended}
    return finish(imported_rule(rule_file, globs=globs, always_apply=not globs, spec_budget=True, **kept))


def _paths(data: Mapping[str, Any], problems: list[str]) -> tuple[str, ...]:
    """The normalised globs; empty when the rule applies always (no ``paths``)."""
    if "paths" not in data:
        return ()
    value = data["paths"]
    fix = "remove the key to apply the rule always, or list globs such as 'src/**/*.ts'"
    if isinstance(value, list):
        bad = next((i for i, v in enumerate(value, 1) if not isinstance(v, str)), None)
        if bad is not None:
            entry = value[bad - 1]
            problems.append(
                f"paths entry {bad} is empty; delete the bare '-' line" if entry is None
                else f"paths entry {bad} must be a glob string, got {kind_of(entry)}; quote it"
            )
            return ()
    globs = glob_values(value)
    if globs is None:
        shown = "empty" if value is None else f"{kind_of(value)}, not a glob string or a list of glob strings"
        problems.append(f"paths is {shown}; {fix}")
        return ()
    if not globs:
        # An empty ``paths`` is a slip, not a request for always-apply (RULE-SPEC §1).
        problems.append(f"paths {value!r} names no glob; {fix}")
    return globs
