"""An example third-party pi-rules plugin: a new source format.

Project rules live in ``<cwd>/.rulebook/*.rule``. A file is a few ``key: value`` header
lines, a blank line, then the body::

    description: Keep handlers small
    applies-to: src/**/*.ts, !src/**/*.test.ts

    Handlers stay under 50 lines; extract helpers.

``applies-to`` lists touched-path globs (comma separated); without it the rule always
applies. The plugin contributes a source (``pi_rules_sources``) and a schema for its own
files (``pi_rules_parse``); everything else — ids, matching, selection, rendering — is
the engine's, so these rules behave like any other.
"""

from __future__ import annotations

import os
from typing import Mapping

from rules_core import DiscoveryContext, ParseResult, Rule, RuleError, RuleFile, SchemaKey, hookimpl
from rules_core.discovery.listing import list_rule_files
from rules_core.model import ORDER_IMPORTS

SCHEMA = "rulebook"


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not context.trusted:
        return []
    return list_rule_files(
        os.path.join(context.cwd, ".rulebook"),
        accept=lambda name: name.endswith(".rule"),
        plugin="rulebook",
        schema=SCHEMA,
        source="project",
        base=context.cwd,
        group=ORDER_IMPORTS,
        rank=50,
    )


@hookimpl
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != SCHEMA:
        return None
    header, _, body = text.partition("\n\n")
    fields: dict[str, str] = {}
    for number, line in enumerate(header.splitlines(), start=1):
        key, sep, value = line.partition(":")
        if not sep:
            message = f"line {number}: expected 'key: value' before the first blank line"
            return ParseResult(None, (RuleError("yaml-syntax", rule_file.path, message, "rulebook"),))
        fields[key.strip().lower()] = value.strip()
    globs = tuple(g.strip() for g in fields.get("applies-to", "").split(",") if g.strip())
    rule = Rule(
        file=rule_file,
        description=fields.get("description") or rule_file.stem,
        body=body.strip("\n"),
        globs=globs,
        match="touched",
        always_apply=not globs,
    )
    return ParseResult(rule)
