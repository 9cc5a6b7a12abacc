"""The ``gemini-md`` importer: Gemini CLI's context files, read in place (docs/importers.md,
"The gemini-md importer").

Project files (trusted projects only): ``GEMINI.md`` in each folder from the git root
down to cwd and in the folders below cwd (placement, ids and the rule: ``_memory``).
User level: ``~/.gemini/GEMINI.md`` as a global always-apply rule. The body is the file
with its memory imports (``@./x.md``, ``@../x.md``, ``@path/x.md``) expanded
(``_includes``); an import that cannot be read is a soft ``invalid-value`` error, and
the rule still loads.
"""

from __future__ import annotations

import os
from typing import Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import enabled, enabled_globally
from ._memory import GEMINI_GROUPS, global_memory, expanded_memory_rule, memory_sources

NAME = "gemini-md"
GROUPS = GEMINI_GROUPS
GLOBAL_FILE = os.path.join(".gemini", "GEMINI.md")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary="Gemini CLI: GEMINI.md, ~/.gemini/GEMINI.md",
                          markers=tuple(name for group in GROUPS for name in group))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        found += memory_sources(context, NAME, GROUPS)
    if enabled_globally(context, NAME):
        found += global_memory(context, NAME, GLOBAL_FILE)
    return found


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    # Gemini CLI has no ``@~/`` imports; the home folder only names the global file's bound.
    home = rule_file.bound if rule_file.source == "global" else None
    return expanded_memory_rule(rule_file, text, syntax="gemini", home=home)
