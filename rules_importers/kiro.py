"""The ``kiro`` importer (being written: issue 13)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, RuleError, RuleFile

NAME = "kiro"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary="Kiro steering: .kiro/steering/**/*.md, ~/.kiro/steering (global)")]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    return []
