"""The ``claude-md`` importer (being written: issue 13)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, RuleError, RuleFile

NAME = "claude-md"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary="Claude Code memory: CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, ~/.claude/CLAUDE.md")]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    return []
