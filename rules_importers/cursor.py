"""The ``cursor`` importer: Cursor's rules, read in place (docs/importers.md (the cursor importer)).

Project files (trusted projects only): ``<cwd>/.cursor/rules/**/*.{mdc,md}``, the legacy
``<cwd>/.cursorrules``, then every ``<cwd>/<dir>/.cursor/rules`` below cwd (at most six
segments, shallow first, never through hidden or symlinked directories), scoped to
``<dir>``. User level: ``~/.cursor/rules`` as global rules. ``alwaysApply`` → always;
``globs`` → touched globs; anything else → on-demand (Cursor's "agent requested" and
"manual"), never dropped. Frontmatter YAML that strict parsing refuses is read in the
``"cursor"`` dialect (``_recovery``).

A rule folder (Cursor's ``<name>/RULE.md`` layout) is one rule named ``<name>``; the other
files in it are the rule's material, not rules.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Iterable, Mapping

from rules_core import hookimpl
from rules_core.discovery.tree import folders_owning
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, enabled_globally, finish, glob_list, imported_rule, invalid, list_import_root,
    plain_rule, single_file, extension,
)
from ._recovery import flag, read_document

NAME = "cursor"
RULES_DIR = os.path.join(".cursor", "rules")
LEGACY = ".cursorrules"
RULE_FILE = "RULE.md"  # the rule of a rule folder, .cursor/rules/<name>/RULE.md


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary=(
        "Cursor rules: .cursor/rules/**/*.{mdc,md} at cwd and in folders below it, "
        ".cursorrules, ~/.cursor/rules (global)"
    ), cwd_only=(RULES_DIR, LEGACY))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        cwd = context.cwd
        found += _rules_dir(context, os.path.join(cwd, RULES_DIR))
        found += single_file(context, NAME, os.path.join(cwd, LEGACY), id_stem="cursorrules", rank_offset=1)
        for depth, folder in folders_owning(context, ".cursor"):
            base = os.path.join(cwd, folder)
            found += _rules_dir(
                context, os.path.join(base, RULES_DIR), base=base, scope=folder, rank_offset=1 + depth,
            )
    if enabled_globally(context, NAME):
        found += _rules_dir(context, os.path.join(context.home or "", RULES_DIR), source="global")
    return found


def _rules_dir(context: DiscoveryContext, root: str, **where: Any) -> list[RuleFile | RuleError]:
    """Every rule file below ``root``, with rule folders (``<name>/RULE.md``) read as one
    rule each: its id is the folder's name, and nothing else inside the folder is a rule."""
    listed = list_import_root(context, NAME, root, accept=_is_cursor_rule, **where)
    relatives = [item.relative_path if isinstance(item, RuleFile) else _relative_to(item.path, root) for item in listed]
    folders = _rule_folders(relatives)
    kept: list[RuleFile | RuleError] = []
    for item, relative in zip(listed, relatives):
        owner = _owning_folder(relative, folders)
        if owner is None:
            kept.append(item)
        elif relative == f"{owner}/{RULE_FILE}":
            # Not RULE, RULE-2, …: the folder names the rule, as in Cursor. (A RULE.md that
            # cannot be read is still reported, under its real path.)
            named = owner.rsplit("/", 1)[-1]
            kept.append(dataclasses.replace(item, id_stem=named) if isinstance(item, RuleFile) else item)
        # Anything else in a rule folder (examples, assets, a draft, their faults) is the
        # rule's material, not a rule of its own.
    return kept


def _rule_folders(relative_paths: Iterable[str]) -> frozenset[str]:
    """The root-relative folders holding a ``RULE.md``: ``testing/RULE.md`` → ``testing``.
    A ``RULE.md`` directly in the rules folder is an ordinary rule file, not a rule folder."""
    return frozenset(path[: -len(RULE_FILE) - 1] for path in relative_paths if path.endswith("/" + RULE_FILE))


def _owning_folder(relative: str, folders: frozenset[str]) -> str | None:
    """The outermost rule folder ``relative`` lies in; a RULE.md below another rule
    folder belongs to that outer folder (the whole folder is one rule's material)."""
    parts = relative.split("/")
    for end in range(1, len(parts)):
        folder = "/".join(parts[:end])
        if folder in folders:
            return folder
    return None


def _relative_to(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


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
