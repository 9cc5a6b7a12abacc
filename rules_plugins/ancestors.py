"""The ``ancestors`` source: ``.pi/rules`` of every directory between cwd's parent and the
git root (inclusive), nearest first (RULE-SPEC §1).

Each rule's glob base is the directory owning its ``.pi/``. Outside a repository there
is no bound to walk to, so nothing is read; an untrusted project reads nothing.
"""

from __future__ import annotations

import os

from rules_core import hookimpl
from rules_core.discovery.listing import list_rule_files
from rules_core.model import ORDER_ANCESTORS, DiscoveryContext, RuleError, RuleFile
from rules_core.paths import ancestors_between

from .native import RULES_DIR, is_markdown


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not context.trusted or context.git_root is None:
        return []
    found: list[RuleFile | RuleError] = []
    for distance, directory in enumerate(ancestors_between(context.cwd, context.git_root), start=1):
        found.extend(
            list_rule_files(
                os.path.join(directory, RULES_DIR),
                accept=is_markdown,
                plugin="ancestors",
                schema="v1",
                source="project",
                base=directory,
                context=context,
                group=ORDER_ANCESTORS,
                rank=distance,
            )
        )
    return found
