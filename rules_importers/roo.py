"""The ``roo`` importer (being written: issue 13)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, RuleError, RuleFile

NAME = "roo"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary="Roo Code: .roo/rules*, .roorules*, ~/.roo/rules* (global)")]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    return []
