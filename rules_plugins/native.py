"""The ``native`` source: ``<cwd>/.pi/rules/**/*.md``, only for a trusted project."""

from __future__ import annotations

import os

from rules_core import hookimpl
from rules_core.discovery.listing import list_rule_files
from rules_core.model import ORDER_CWD, DiscoveryContext, RuleError, RuleFile

RULES_DIR = os.path.join(".pi", "rules")


def is_markdown(name: str) -> bool:
    return name.endswith(".md")


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not context.trusted:
        return []
    return list_rule_files(
        os.path.join(context.cwd, RULES_DIR),
        accept=is_markdown,
        plugin="native",
        schema="v1",
        source="project",
        base=context.cwd,
        context=context,
        group=ORDER_CWD,
    )
