"""The ``roo`` importer: Roo Code's rules, read in place (docs/importers.md, "The roo
importer").

Project (trusted projects only): every file below ``<cwd>/.roo/rules`` — or, when that
folder has none, the single file ``<cwd>/.roorules``; and for each mode, every file below
``<cwd>/.roo/rules-<mode>`` — or, when that has none, ``<cwd>/.roorules-<mode>``. User
level: ``~/.roo/rules`` and ``~/.roo/rules-<mode>`` as global rules. Every rule is always
applied, its whole text the body (Roo parses no frontmatter). A mode's rules are scoped
to the agent named like the mode (``agents: [<mode>]``), so ``--agent code`` gets
``rules-code``. Files are ordered by name, case-insensitively, as Roo appends them.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping

from rules_core import hookimpl
from rules_core.discovery.containment import Unresolved
from rules_core.model import DiscoveryContext, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import enabled, enabled_globally
from ._memory import folder_label
from .simple import SimpleFormat

NAME = "roo"
RULES = "rules"
MODE_PREFIX = "rules-"
LEGACY = ".roorules"
# Roo reads every file of its rules folders except these caches and system files
# (custom-instructions.ts, shouldIncludeRuleFile), so `.txt` rules count too.
_SKIPPED_SUFFIXES = (
    ".DS_Store", ".bak", ".cache", ".crdownload", ".db", ".dmp", ".dump", ".eslintcache", ".lock", ".log",
    ".old", ".part", ".partial", ".pyc", ".pyo", ".stackdump", ".swo", ".swp", ".temp", ".tmp",
)


def is_rule_file(name: str) -> bool:
    return name != "Thumbs.db" and not name.endswith(_SKIPPED_SUFFIXES)


FORMAT = SimpleFormat(
    name=NAME,
    summary="Roo Code: .roo/rules*, .roorules*, ~/.roo/rules* (global); rules-<mode> for --agent <mode>",
    accept=is_rule_file,
    frontmatter=False,
    cwd_only=(".roo", ".roorules"),
    lossy_utf8=True,  # a VS Code extension: Node decodes damaged bytes as U+FFFD
)

pi_rules_importers = FORMAT.pi_rules_importers


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        roo = os.path.join(context.cwd, ".roo")
        label = folder_label(context, context.cwd)
        found += _folder_or_file(context, roo, RULES, LEGACY, f"{label}/roorules", scope="0")
        for mode in _modes(context, roo):
            legacy = f"{LEGACY}-{mode}"
            found += _folder_or_file(context, roo, MODE_PREFIX + mode, legacy, f"{label}/{legacy[1:]}",
                                     scope=f"1{mode}")
    if enabled_globally(context, NAME):
        roo = os.path.join(context.home or "", ".roo")
        found += _by_name(FORMAT.folder(context, os.path.join(roo, RULES), source="global"), "0")
        for mode in _modes(context, roo, source="global"):
            found += _by_name(FORMAT.folder(context, os.path.join(roo, MODE_PREFIX + mode), source="global"),
                              f"1{mode}")
    return found


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    mode = mode_of(rule_file)
    # Roo adds a mode's rules only while that mode is active; pi-rules' agents scope is the
    # same thing for a session whose agent is named like the mode.
    return FORMAT.parse(rule_file, text, extra_keys, extra={"agents": (mode,)} if mode else None)


def mode_of(rule_file: RuleFile) -> str:
    """The mode a file belongs to (``code`` for ``.roo/rules-code/**`` and
    ``.roorules-code``), or ``""`` for a rule of every mode."""
    parent, folder = os.path.split(rule_file.rules_root)
    if os.path.basename(parent) == ".roo":  # a rules folder, the project's or ~/.roo's
        return folder[len(MODE_PREFIX):].lower() if folder.startswith(MODE_PREFIX) else ""
    name = rule_file.relative_path  # a legacy single file in cwd
    return name[len(LEGACY) + 1:].lower() if name.startswith(f"{LEGACY}-") else ""


def _folder_or_file(
    context: DiscoveryContext, roo: str, folder: str, legacy: str, stem: str, *, scope: str,
) -> list[RuleFile | RuleError]:
    """A rules folder's files, or — when it has none — the legacy single file, as Roo
    falls back (docs: "If .roo/rules/ doesn't exist or is empty")."""
    found = FORMAT.folder(context, os.path.join(roo, folder))
    if any(isinstance(item, RuleFile) for item in found):
        return _by_name(found, scope)
    return found + FORMAT.file(context, os.path.join(context.cwd, legacy), id_stem=stem, scope=f"{scope}~")


def _by_name(found: list[RuleFile | RuleError], scope: str) -> list[RuleFile | RuleError]:
    """Roo appends a folder's files sorted by file name, case-insensitively, wherever
    they are below it; the order key's scope carries that name (after a space, which sorts
    before every character of a mode's name)."""
    return [
        item if isinstance(item, RuleError) else dataclasses.replace(
            item, order=(*item.order[:2], f"{scope} {os.path.basename(item.relative_path).lower()}", item.order[3]))
        for item in found
    ]


def _modes(context: DiscoveryContext, roo: str, *, source: str = "project") -> list[str]:
    """Every mode with a ``rules-<mode>`` folder in ``roo`` or (project) a
    ``.roorules-<mode>`` file in cwd, sorted."""
    modes = {name[len(MODE_PREFIX):] for name in _names(context, roo, source) if name.startswith(MODE_PREFIX)}
    if source == "project":
        prefix = f"{LEGACY}-"
        modes |= {name[len(prefix):] for name in _names(context, context.cwd, source) if name.startswith(prefix)}
    return sorted(mode for mode in modes if mode)


def _names(context: DiscoveryContext, folder: str, source: str) -> list[str]:
    """The entry names of ``folder``; none when it is absent, unlistable (the rules
    folders' own listing reports that) or, for a project, leads outside it."""
    if source == "project" and context.containment is not None:
        real = context.containment.directory(folder)
        if real is None or isinstance(real, Unresolved):
            return []
    try:
        with os.scandir(folder) as entries:
            return [entry.name for entry in entries]
    except OSError:
        return []
