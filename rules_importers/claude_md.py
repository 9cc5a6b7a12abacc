"""The ``claude-md`` importer: Claude Code's memory files, read in place (docs/importers.md,
"The claude-md importer").

Project files (trusted projects only), in each folder from the git root down to cwd and
in the folders below cwd: ``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md``
(placement, ids and the rule itself: ``_memory``). User level: ``~/.claude/CLAUDE.md``
as a global always-apply rule. The body is the file with its line-leading HTML comments
dropped (Claude Code hides them) and its ``@path`` imports expanded (``_includes``);
an import that cannot be read is a soft ``invalid-value`` error, and the rule still loads.
"""

from __future__ import annotations

import os
from typing import Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._regions import strip_html_comments
from ._lenient import enabled, enabled_globally
from ._memory import CLAUDE_GROUPS, global_memory, expanded_memory_rule, memory_sources

NAME = "claude-md"
# Each folder's files, read in this order; a folder may hold all three.
GROUPS = CLAUDE_GROUPS
GLOBAL_FILE = os.path.join(".claude", "CLAUDE.md")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary=(
        "Claude Code memory: CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, ~/.claude/CLAUDE.md"
    ), markers=tuple(name for group in GROUPS for name in group))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        found += memory_sources(context, NAME, GROUPS)
    if enabled_globally(context, NAME):
        user_file = global_memory(context, NAME, GLOBAL_FILE)
        # Working in $HOME, its .claude/CLAUDE.md is also "cwd's": it is one file, read once.
        taken = {item.path for item in user_file}
        found = [item for item in found if item.path not in taken] + user_file
    return found


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    # ``@~/`` names the home folder; a project file's imports never leave its bound, so
    # the user's real home only ever serves the message that says so. HTML comments are
    # dropped first, as Claude Code hides them.
    home = rule_file.bound if rule_file.source == "global" else os.path.expanduser("~")
    body = text if "\x00" in text else strip_html_comments(text)
    return expanded_memory_rule(rule_file, body, syntax="claude", home=home)
