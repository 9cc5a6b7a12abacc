"""The ``cursor`` importer: Cursor's rules, read in place (docs/importers.md (the cursor importer)).

Project files (trusted projects only): ``<cwd>/.cursor/rules/**/*.{mdc,md}``, the legacy
``<cwd>/.cursorrules``, then every ``<cwd>/<dir>/.cursor/rules`` below cwd (at most
six segments, shallow first, never through hidden or symlinked directories),
scoped to ``<dir>``. User level: ``~/.cursor/rules``
as global rules. ``alwaysApply`` → always; ``globs`` → touched globs; anything else →
on-demand (Cursor's "agent requested" and "manual"), never dropped. Frontmatter YAML
that strict parsing refuses is read in the ``"cursor"`` dialect (``_recovery``).
"""

from __future__ import annotations

import os
from typing import Mapping

from rules_core import hookimpl
from rules_core.tree import folders_owning
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, enabled_globally, finish, glob_list, imported_rule, invalid, list_import_root,
    plain_rule, single_file, extension,
)
from ._recovery import flag, read_document

NAME = "cursor"
RULES_DIR = os.path.join(".cursor", "rules")
LEGACY = ".cursorrules"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary=(
        "Cursor rules: .cursor/rules/**/*.{mdc,md} at cwd and in folders below it, "
        ".cursorrules, ~/.cursor/rules (global)"
    ))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        cwd = context.cwd
        found += list_import_root(context, NAME, os.path.join(cwd, RULES_DIR), accept=_is_cursor_rule)
        found += single_file(context, NAME, os.path.join(cwd, LEGACY), id_stem="cursorrules", rank_offset=1)
        for depth, folder in folders_owning(context, ".cursor"):
            base = os.path.join(cwd, folder)
            found += list_import_root(
                context, NAME, os.path.join(base, RULES_DIR), accept=_is_cursor_rule,
                base=base, scope=folder, rank_offset=1 + depth,
            )
    if enabled_globally(context, NAME):
        found += list_import_root(
            context, NAME, os.path.join(context.home or "", RULES_DIR), accept=_is_cursor_rule, source="global",
        )
    return found


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    if rule_file.relative_path == LEGACY:
        return plain_rule(rule_file, text)
    doc = read_document(rule_file, text, dialect="cursor")
    if isinstance(doc, RuleError):
        return ParseResult(None, (doc,))
    problems: list[str] = []
    always = flag(doc.data, "alwaysApply", problems)
    globs = glob_list(doc.data, "globs", problems)
    description = describe(rule_file, doc.data, problems, body=doc.body, closing=True, show="scalar")
    extended = extension(doc.data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    # Cursor attaches a nested folder's rules only to files in that folder: an "always"
    # rule there means "any touched file below the folder", which `**` from its base says.
    nested = rule_file.source == "project" and rule_file.order[2] != ""
    if always and nested:
        always, globs = False, ("**",)
    rule = imported_rule(
        rule_file, description=description, body=doc.body, always_apply=always,
        globs=() if always else globs,
        load="pinned" if always or globs else "on-demand",
        **extended,
    )
    return finish(rule)


def _is_cursor_rule(name: str) -> bool:
    return name.endswith((".mdc", ".md"))


# -- nested .cursor/rules ---------------------------------------------------------------
