"""The ``agents-md`` importer: ``AGENTS.md`` files (the open format of agents.md, as
OpenAI Codex reads them), in place (docs/importers.md, "The agents-md importer").

Project files only (trusted projects): in the git root, each folder down to cwd, and the
folders below cwd, one file per folder — ``AGENTS.override.md`` (Codex's local override)
before ``AGENTS.md`` before the legacy ``AGENT.md``. Placement, order, ids and the rule
of a memory file are ``_memory``'s; this module only names the files and reads the text.

No user-level file: ``~/.codex/AGENTS.md`` is Codex's own configuration, not part of
the AGENTS.md format (see the doc).
"""

from __future__ import annotations

from typing import Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import enabled
from ._memory import AGENTS_GROUPS, memory_rule, memory_sources

NAME = "agents-md"
# One group: the first present name of a folder is its only file, as in Codex
# (codex-rs/core/src/agents_md.rs, candidate_filenames); AGENT.md is what agents.md's
# FAQ migrates from, still read where a folder has nothing newer.
(NAMES,) = AGENTS_GROUPS
EMPTY = "turned off: the file is empty, and Codex skips empty AGENTS.md files"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary="AGENTS.md (AGENTS.override.md, AGENT.md): cwd and ancestors, folders below cwd",
                          markers=NAMES)]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not enabled(context, NAME):
        return []
    return memory_sources(context, NAME, [NAMES])


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    # AGENTS.md has no frontmatter: the whole text is the body, verbatim — a leading
    # `---` block (a docs site's `layout:`/`title:`) is kept as Codex keeps it.
    return memory_rule(rule_file, text, empty=EMPTY)
