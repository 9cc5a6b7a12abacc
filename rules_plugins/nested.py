"""The ``nested`` source: ``.pi/rules`` directories below cwd (RULE-SPEC §1).

Found by the one bounded walk of the tree shared with nested ``.cursor/rules``
(``rules_core.discovery.tree``, cached until ``Engine.invalidate_scans``): a rule base at most
``MAX_DEPTH`` directory segments below cwd (``packages/b`` is 2), never inside
``node_modules`` or any hidden directory, never through a symlinked directory — so
never outside cwd. Shallow bases come first, lexicographic within a depth.
"""

from __future__ import annotations

import os

from rules_core import hookimpl
from rules_core.discovery.listing import list_rule_files
from rules_core.model import ORDER_NESTED, DiscoveryContext, RuleError, RuleFile
from rules_core.discovery.tree import MAX_DEPTH, folders_owning

from .native import is_markdown

__all__ = ["MAX_DEPTH", "pi_rules_sources"]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not context.trusted:
        return []
    found: list[RuleFile | RuleError] = []
    for depth, relative_base in folders_owning(context, ".pi"):
        base = os.path.join(context.cwd, relative_base)
        found.extend(
            list_rule_files(
                os.path.join(base, ".pi", "rules"),
                accept=is_markdown,
                plugin="nested",
                schema="v1",
                source="project",
                base=base,
                context=context,
                group=ORDER_NESTED,
                rank=depth,
                scope=relative_base,
            )
        )
    return found
