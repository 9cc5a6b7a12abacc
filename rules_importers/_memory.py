"""Where memory files are and what they are called: ``AGENTS.md``, ``CLAUDE.md``,
``GEMINI.md`` and their kin (docs/importers.md, "Memory files").

A memory file in the working directory or an ancestor up to the git root applies always;
one in a folder below the working directory applies to that folder (its rule matches
touched paths under it and nothing else). Files are listed general → specific: the git
root's first, cwd's last, then the nested ones shallow first, so the most specific text
comes last in the section. The nested search is the shared bounded tree walk
(``rules_core.discovery.tree``): gitignore-aware, never through symlinks or hidden folders.

Ids name the folder (``acme/AGENTS``, ``acme/packages/api/AGENTS``, ``~/.claude/CLAUDE``)
and the reference path is relative to the git root (``packages/api/AGENTS.md``), so
neither needs a ``-2`` suffix in an ordinary monorepo.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Sequence

from rules_core.model import DiscoveryContext, ParseResult, RuleError, RuleFile
from rules_core.paths import ancestors_between
from rules_core.discovery.tree import folders_holding, folders_with_hidden

from ._includes import Syntax, expand
from ._lenient import IMPORTER_RANKS, _group, finish, first_heading, imported_rule, path_kind, plain_file

# The order-key scope of a nested (folder-scoped) file starts with this; walked-up ones with "0".
_NESTED = "1"

# Each memory importer's files per folder: groups of names, the first present one read.
AGENTS_GROUPS = (("AGENTS.override.md", "AGENTS.md", "AGENT.md"),)
CLAUDE_GROUPS = (("CLAUDE.md",), (os.path.join(".claude", "CLAUDE.md"),), ("CLAUDE.local.md",))
GEMINI_GROUPS = (("GEMINI.md",),)
MEMORY_GROUPS = {"agents-md": AGENTS_GROUPS, "claude-md": CLAUDE_GROUPS, "gemini-md": GEMINI_GROUPS}


def memory_sources(
    context: DiscoveryContext, name: str, groups: Sequence[Sequence[str]], *, nested: bool = True,
) -> list[RuleFile | RuleError]:
    """The project memory files of importer ``name``. Each group lists folder-relative
    names of which the first present one is read (``AGENTS.override.md`` before
    ``AGENTS.md`` before ``AGENT.md``); every group of a folder is read, in order."""
    bound = context.containment.bound if context.containment is not None else context.cwd
    elsewhere = carried_elsewhere(context, name)
    found: list[RuleFile | RuleError] = []
    for index, folder in enumerate(_walked(context)):  # general → specific
        if folder == context.home and folder != context.cwd:
            continue  # $HOME's files are the user's, read (if at all) as global rules
        found += _folder_files(context, name, folder, groups, scope=f"0{index:04d}", bound=bound)
    if nested:
        for depth, relative in _nested_folders(context, groups):
            folder = os.path.join(context.cwd, relative)
            found += _folder_files(context, name, folder, groups, scope=f"{_NESTED}{depth:02d}{relative}", bound=bound)
    return [dataclasses.replace(f, elsewhere=elsewhere) if elsewhere and isinstance(f, RuleFile) else f
            for f in found]


def carried_elsewhere(context: DiscoveryContext, name: str) -> tuple[str, ...]:
    """The always-applying memory files the OTHER enabled memory importers load from cwd
    and its ancestors: ``CLAUDE.md`` holding ``@AGENTS.md`` (the most common memory file
    there is) then points to that rule instead of copying it (``RuleFile.elsewhere``)."""
    others = [groups for other, groups in MEMORY_GROUPS.items() if other != name and other in context.importers]
    if not others or not context.trusted:
        return ()
    found: list[str] = []
    for folder in _walked(context):
        for groups in others:
            for group in groups:
                found += next(([os.path.join(folder, f)] for f in group if path_kind(os.path.join(folder, f), name)
                               == "file"), [])
    return tuple(found)


def _walked(context: DiscoveryContext) -> list[str]:
    """The git root (or cwd) down to cwd: the folders whose memory files apply always."""
    ancestors = [] if context.git_root is None else ancestors_between(context.cwd, context.git_root)
    return [*reversed(ancestors), context.cwd]


def global_memory(context: DiscoveryContext, name: str, home_relative: str) -> list[RuleFile | RuleError]:
    """A user-level memory file (``~/.claude/CLAUDE.md``): a global always-apply rule."""
    home = context.home or ""
    path = os.path.join(home, home_relative)
    kind = path_kind(path, name)
    if kind is None or isinstance(kind, RuleError):
        return [] if kind is None else [kind]
    if kind != "file":
        return [RuleError("read-failure", path, f"is not a plain file; {name} reads {home_relative} as one rule", name)]
    stem = home_relative[: -len(".md")] if home_relative.endswith(".md") else home_relative
    folder = os.path.dirname(path)
    order = (_group("global"), IMPORTER_RANKS.get(name, 90), "0", os.path.basename(path))
    return [RuleFile(path, folder, os.path.basename(path), context.cwd, name, name, "global", order,
                     id_stem=f"~/{stem}", bound=home)]


def is_folder_scoped(rule_file: RuleFile) -> bool:
    """A project memory file below the working directory: it applies to its folder only."""
    return rule_file.source == "project" and rule_file.order[2].startswith(_NESTED)


EMPTY = "turned off: the file is empty, so there is nothing to send"
BINARY = "the file contains NUL bytes, so it is binary, not markdown; delete it or save it as text"


def memory_rule(rule_file: RuleFile, body: str, *, depends: tuple[str, ...] = (),
                errors: tuple[RuleError, ...] = (), empty: str = EMPTY) -> ParseResult:
    """The rule of a memory file: always, or every touched path under its folder when
    folder-scoped. Described by its first heading, else by where it is. A binary file is
    a read failure; an empty one is listed, never active (``empty`` says why): a rule
    with nothing to say would only cost a section heading."""
    if "\x00" in body:
        return ParseResult(None, (RuleError("read-failure", rule_file.path, BINARY, rule_file.plugin),))
    description = first_heading(body, closing=True) or f"{rule_file.relative_path} ({rule_file.plugin})"
    if not body.strip():
        rule = imported_rule(rule_file, description=description, body=body, inactive_reason=empty)
    elif is_folder_scoped(rule_file):
        rule = imported_rule(rule_file, description=description, body=body, globs=("**",))
    else:
        rule = imported_rule(rule_file, description=description, body=body, always_apply=True)
    result = finish(rule)
    return ParseResult(result.rule, errors + result.errors, depends)


def expanded_memory_rule(rule_file: RuleFile, text: str, *, syntax: Syntax, home: str | None) -> ParseResult:
    """A memory file whose imports (``@path``) are expanded first: each import not read is
    a soft ``invalid-value`` error and the rule still loads; a binary file is never
    expanded (``memory_rule`` reports it)."""
    if "\x00" in text:
        return memory_rule(rule_file, text)
    expanded = expand(text, path=rule_file.path, bound=rule_file.bound, home=home, syntax=syntax,
                      elsewhere=rule_file.elsewhere)
    errors = tuple(RuleError("invalid-value", rule_file.path, problem, rule_file.plugin) for problem in expanded.problems)
    return memory_rule(rule_file, expanded.text, depends=expanded.depends, errors=errors)


def folder_label(context: DiscoveryContext, folder: str) -> str:
    """How an id names a project folder: its path from the parent of the git root (or of
    cwd without one): ``acme``, ``acme/packages/api``."""
    top = context.git_root or context.cwd
    parent = os.path.dirname(top.rstrip("/")) or "/"
    label = os.path.relpath(folder, parent).replace(os.sep, "/")
    return label if label != "." else os.path.basename(top.rstrip("/")) or "root"


def _nested_folders(context: DiscoveryContext, groups: Sequence[Sequence[str]]) -> list[tuple[int, str]]:
    found: set[tuple[int, str]] = set()
    for group in groups:
        for filename in group:
            head, _, rest = filename.partition("/")
            if rest:  # ``.claude/CLAUDE.md``: folders with that hidden folder, checked later
                found.update(folders_with_hidden(context, head))
            else:
                found.update(folders_holding(context, filename))
    return sorted(found)


def _folder_files(
    context: DiscoveryContext, name: str, folder: str, groups: Sequence[Sequence[str]], *, scope: str, bound: str,
) -> list[RuleFile | RuleError]:
    top = context.git_root or context.cwd
    label = folder_label(context, folder)
    found: list[RuleFile | RuleError] = []
    for index, group in enumerate(groups):
        for filename in group:
            path = os.path.join(folder, filename)
            plain = plain_file(path, name, "memory files")
            if plain is False:
                continue
            if isinstance(plain, RuleError):
                found.append(plain)
                break
            relative = os.path.relpath(path, top).replace(os.sep, "/")
            stem = filename[: -len(".md")] if filename.endswith(".md") else filename
            order = (_group("project"), IMPORTER_RANKS.get(name, 90), f"{scope}/{index}", relative)
            found.append(RuleFile(path, top, relative, folder, name, name, "project", order,
                                  id_stem=f"{label}/{stem}", bound=bound))
            break
    return found
