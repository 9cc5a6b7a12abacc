"""The ``junie`` importer (being written: issue 13)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, RuleError, RuleFile

NAME = "junie"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary="JetBrains Junie: .junie/guidelines.md")]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    return []
