"""The ``windsurf`` importer: Windsurf (Devin Desktop) rules, read in place
(docs/importers.md (the windsurf importer)).

Project files (trusted projects only): ``<cwd>/.windsurf/rules/*.md``, then
``<cwd>/.devin/rules/*.md`` (the folder current builds prefer), then the legacy
``<cwd>/.windsurfrules``. User level: ``~/.codeium/windsurf/memories/global_rules.md`` as a
global always-apply rule. Windsurf's ``trigger`` decides: ``always_on`` → always, ``glob``
→ touched globs, ``model_decision`` and ``manual`` → on-demand, never dropped.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, enabled_globally, finish, glob_list, imported_rule, invalid, kind_of, list_flat,
    plain_rule, single_file, extension, unknown_choice,
)
from ._recovery import flag, read_document

NAME = "windsurf"
RULES_DIRS = (os.path.join(".windsurf", "rules"), os.path.join(".devin", "rules"))
LEGACY = ".windsurfrules"
GLOBAL_FILE = os.path.join(".codeium", "windsurf", "memories", "global_rules.md")
# Windsurf's four activation modes, and how each loads here. `agent` is listed among the
# trigger values by Devin's docs without a definition; it is read as model_decision
# (the agent decides), the gentlest reading: an index line, never a pinned body.
TRIGGERS = {"always_on": "always", "glob": "glob", "model_decision": "on-demand", "manual": "on-demand"}
_ALIASES = {"agent": "model_decision"}


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary=(
        "Windsurf rules: .windsurf/rules/*.md, .devin/rules/*.md, .windsurfrules, "
        "~/.codeium/windsurf/memories/global_rules.md (global)"
    ), cwd_only=(*RULES_DIRS, LEGACY))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        for offset, directory in enumerate(RULES_DIRS):
            root = os.path.join(context.cwd, directory)
            # Windsurf reads its rules folders flat; a subfolder (an archive, drafts) is
            # not rules, so neither its files nor its faults are reported.
            found += list_flat(context, NAME, root, accept=_is_markdown, base=context.cwd, rank_offset=offset)
        legacy = os.path.join(context.cwd, LEGACY)
        found += single_file(context, NAME, legacy, id_stem="windsurfrules", rank_offset=len(RULES_DIRS))
    if enabled_globally(context, NAME):
        global_file = os.path.join(context.home or "", GLOBAL_FILE)
        found += single_file(context, NAME, global_file, id_stem="global_rules", source="global")
    return found


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    # Both single files are plain text Windsurf injects whole, every time.
    if rule_file.relative_path == LEGACY or rule_file.source == "global":
        return plain_rule(rule_file, text)
    doc = read_document(rule_file, text, dialect="cursor")  # as Cursor's files are read
    if isinstance(doc, RuleError):
        return ParseResult(None, (doc,))
    problems: list[str] = []
    mode, globs = _activation(doc.data, problems)
    description = describe(rule_file, doc.data, problems, body=doc.body, closing=True, show="scalar")
    extended = extension(doc.data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    rule = imported_rule(
        rule_file, description=description, body=doc.body, always_apply=mode == "always",
        globs=globs if mode == "glob" else (),
        load="on-demand" if mode == "on-demand" else "pinned",
        **extended,
    )
    return finish(rule)


def _activation(data: Mapping[str, Any], problems: list[str]) -> tuple[str, tuple[str, ...]]:
    """("always" | "glob" | "on-demand", globs) from ``trigger``; without one, the
    Cursor-style keys the peers read (``alwaysApply``, ``globs``), else on-demand."""
    trigger = data.get("trigger")
    if trigger is None:
        if flag(data, "alwaysApply", problems):
            return "always", ()
        globs = glob_list(data, "globs", problems)
        return ("glob", globs) if globs else ("on-demand", ())
    allowed = ", ".join(TRIGGERS)
    if not isinstance(trigger, str):
        problems.append(f"trigger must be one of {allowed}, got {kind_of(trigger, 'scalar')}; write trigger: always_on")
        return "on-demand", ()
    name = trigger.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in TRIGGERS:
        # Echo what the author wrote; suggest the mode it is closest to (`always` → always_on).
        problems.append(unknown_choice("trigger", trigger, TRIGGERS))
        return "on-demand", ()
    if name != "glob":
        return TRIGGERS[name], ()
    globs = glob_list(data, "globs", problems)
    if not globs and not problems:
        problems.append(
            'trigger: glob needs globs naming the files it applies to; add globs: "src/**/*.ts" '
            "(or a list), or choose another trigger"
        )
    return "glob", globs


def _is_markdown(name: str) -> bool:
    return name.endswith(".md")
