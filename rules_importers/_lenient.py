"""Shared helpers for importers: lenient frontmatter, glob lists, and the imported rule.

Imports do not use the strict native schema (RULE-SPEC §1 "Lenient parsing"): unknown
keys are ignored and the body is kept verbatim; only real document damage is an error.
Every importer builds its rules with ``imported_rule`` so they are ordinary rules:
``match: touched``, ``load: pinned``, ``enforcement: inform``, ``priority: 0``. Project
files list in group ``ORDER_IMPORTS`` (after nested ``.pi/rules``, before global rules);
user-level files (``$HOME``) are global rules in group ``ORDER_GLOBAL``, after the native
global directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from rules_core.fs import list_rule_files
from rules_core.model import ORDER_IMPORTS, DiscoveryContext, ParseResult, Rule, RuleError, RuleFile
from rules_plugins._frontmatter import FrontmatterError, load_yaml, split_frontmatter

# Discovery order among importers (RULE-SPEC §1: Copilot before Claude; the peers after).
IMPORTER_RANKS = {"copilot": 10, "claude": 20, "cursor": 30, "windsurf": 40, "cline": 50, "agents": 60}


@dataclass(frozen=True)
class Document:
    """A leniently read file: its frontmatter mapping (empty when absent) and raw body."""

    data: Mapping[str, Any]
    body: str
    has_frontmatter: bool


def read_document(rule_file: RuleFile, text: str) -> Document | RuleError:
    """Split and load frontmatter; broken YAML, a non-mapping root or an unterminated
    block is a ``yaml-syntax`` error naming the file. No frontmatter is fine."""
    try:
        split = split_frontmatter(text)
    except FrontmatterError as exc:
        return RuleError("yaml-syntax", rule_file.path, str(exc), rule_file.plugin)
    if split.yaml_text is None:
        return Document(MappingProxyType({}), text, False)
    try:
        data = load_yaml(split.yaml_text)
    except FrontmatterError as exc:
        return RuleError("yaml-syntax", rule_file.path, str(exc), rule_file.plugin)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return RuleError(
            "yaml-syntax", rule_file.path,
            "frontmatter must be a mapping of 'key: value' lines, not a list or scalar",
            rule_file.plugin,
        )
    return Document(MappingProxyType(data), split.body, True)


def split_globs(text: str) -> tuple[str, ...]:
    """Comma-separated globs, split only outside ``{…}``; trimmed, empties dropped,
    duplicates collapsed first-seen: ``src/**/*.{ts,tsx}, docs/**`` is two globs."""
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return dedupe(p.strip() for p in parts)


def dedupe(values: Any) -> tuple[str, ...]:
    """Trimmed, non-empty, first-seen order."""
    seen: dict[str, None] = {}
    for value in values:
        value = value.strip()
        if value:
            seen.setdefault(value, None)
    return tuple(seen)


def imported_rule(
    rule_file: RuleFile,
    *,
    description: str,
    body: str,
    globs: tuple[str, ...] = (),
    always_apply: bool = False,
    load: str = "pinned",
    extra: Mapping[str, Any] | None = None,
) -> Rule:
    """An ordinary project rule from an imported file (RULE-SPEC §1)."""
    return Rule(
        file=rule_file,
        description=description,
        body=body,
        globs=globs,
        match="touched",
        load=load,  # type: ignore[arg-type]
        always_apply=always_apply,
        extra=MappingProxyType(dict(extra or {})),
    )


def invalid(rule_file: RuleFile, message: str) -> ParseResult:
    return ParseResult(None, (RuleError("invalid-value", rule_file.path, message, rule_file.plugin),))


def list_import_root(
    context: DiscoveryContext,
    name: str,
    root: str,
    *,
    accept: Callable[[str], bool],
    base: str | None = None,
    source: str = "project",
    scope: str = "",
    rank_offset: int = 0,
    group: int = ORDER_IMPORTS,
) -> list[RuleFile | RuleError]:
    """List an importer root with the importer's schema, order rank and the listing cache.

    Callers must already have checked ``name in context.importers`` (and trust, for
    project roots) — this function lists.
    """
    return list_rule_files(
        root,
        accept=accept,
        plugin=name,
        schema=name,
        source=source,  # type: ignore[arg-type]
        base=base if base is not None else context.cwd,
        cache=context.listing_cache,
        group=group,
        rank=IMPORTER_RANKS.get(name, 90) + rank_offset,
        scope=scope,
    )


def enabled(context: DiscoveryContext, name: str) -> bool:
    """An importer's PROJECT files are read only for a trusted project that selected it."""
    return context.trusted and name in context.importers


def enabled_globally(context: DiscoveryContext, name: str) -> bool:
    """An importer's USER-level files (in $HOME) load whatever the trust, like global
    rules — but only when ``PI_RULES_IMPORT`` selects the importer."""
    return context.home is not None and name in context.importers


def join(*parts: str) -> str:
    return os.path.join(*parts)
