"""The ``global`` source: ``$HOME/.pi/agent/rules/**/*.md``, loaded whatever the trust.

Global rules' globs are relative to the working directory (CONTRACT §2).
"""

from __future__ import annotations

import os

from rules_core import hookimpl
from rules_core.discovery.listing import list_rule_files
from rules_core.model import ORDER_GLOBAL, DiscoveryContext, RuleError, RuleFile

from .native import is_markdown

GLOBAL_DIR = os.path.join(".pi", "agent", "rules")


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not context.home:
        return []
    return list_rule_files(
        os.path.join(context.home, GLOBAL_DIR),
        accept=is_markdown,
        plugin="global",
        schema="v1",
        source="global",
        base=context.cwd,
        context=context,
        group=ORDER_GLOBAL,
    )
