"""The ``cursor`` importer: Cursor's rules, read in place (docs/importers.md (the cursor importer)).

Project files (trusted projects only): ``<cwd>/.cursor/rules/**/*.{mdc,md}``, the legacy
``<cwd>/.cursorrules``, then every ``<cwd>/<dir>/.cursor/rules`` below cwd (at most
``MAX_DEPTH`` segments, shallow first, never through hidden or symlinked directories),
scoped to ``<dir>``. User level: ``~/.cursor/rules``
as global rules. ``alwaysApply`` → always; ``globs`` → touched globs; anything else →
on-demand (Cursor's "agent requested" and "manual"), never dropped. Frontmatter YAML
that strict parsing refuses is read in the ``"cursor"`` dialect (``_recovery``).
"""

from __future__ import annotations

import os
import stat
from typing import Mapping

from rules_core import hookimpl
from rules_core.fs import NEVER_SCANNED
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, enabled_globally, finish, glob_list, imported_rule, invalid, list_import_root,
    plain_rule, single_file, stream_extra,
)
from ._recovery import flag, read_document

NAME = "cursor"
RULES_DIR = os.path.join(".cursor", "rules")
LEGACY = ".cursorrules"
MAX_DEPTH = 6


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
        for depth, folder in _nested_folders(context):
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


@hookimpl
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
        extra=stream_extra(doc.data),
    )
    return finish(rule)


def _is_cursor_rule(name: str) -> bool:
    return name.endswith((".mdc", ".md"))


# -- nested .cursor/rules ---------------------------------------------------------------


def _nested_folders(context: DiscoveryContext) -> list[tuple[int, str]]:
    """Walking six levels of a monorepo is the expensive part of discovery: the folders
    found are kept until the engine says the tree changed; their rules are re-listed."""
    cache = context.tree_cache
    key = (NAME, "nested-folders", context.cwd)
    if cache is not None and key in cache:
        return cache[key]
    folders = _find_nested_folders(context.cwd)
    if cache is not None:
        cache[key] = folders
    return folders


def _find_nested_folders(cwd: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative folder) of every folder below cwd owning a real
    ``.cursor/rules``, shallow first then lexicographic; each directory is listed once."""
    folders: list[tuple[int, str]] = []
    level, _ = _subdirectories(cwd)
    for depth in range(1, MAX_DEPTH + 1):
        next_level: list[str] = []
        for relative in level:
            names, owns_rules = _subdirectories(os.path.join(cwd, relative))
            if owns_rules:
                folders.append((depth, relative))
            if depth < MAX_DEPTH:
                next_level.extend(f"{relative}/{name}" for name in names)
        level = next_level
    return sorted(folders)


def _subdirectories(directory: str) -> tuple[list[str], bool]:
    """Real, visible subdirectories worth descending (never through a symlink, so never
    out of cwd), and whether ``directory`` owns a real ``.cursor/rules``."""
    names: list[str] = []
    owns_rules = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if entry.name == ".cursor":
                    owns_rules = _real_directory(os.path.join(entry.path, "rules"))
                elif not entry.name.startswith(".") and entry.name not in NEVER_SCANNED:
                    # Hidden directories (.git, .venv, other tools' config) hold no
                    # packages and can be huge; nested .pi/rules skips them too.
                    names.append(entry.name)
    except OSError:
        pass  # unlistable below cwd: nothing nested can be found there
    return sorted(names), owns_rules


def _real_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False
