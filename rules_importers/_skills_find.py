"""Where skills are: ``<root>/<folder>/SKILL.md`` for every skills root the ``skills``
importer reads (docs/importers.md, "The skills importer").

A skills root holds one folder per skill; only its direct subfolders are skills (as in the
Agent Skills specification and Claude Code), hidden ones (``.system``) included only when
they hold a ``SKILL.md`` themselves. Each skill is one ``RuleFile``: its reference
(``relative_path``) is the folder's name, which the specification makes the skill's
``name``; ids are that name, and when two skills share it, every later one is named by its
folder's path as memory files are (``acme/.claude/skills/pdf``, ``~/.agents/skills/pdf``). A skill whose
name an earlier one already took (a project skill over a user skill, cwd's over an
ancestor's, ``.agents`` over ``.claude``) carries the winner in ``RuleFile.elsewhere``: it
is listed, inactive, with a warning.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Iterable

from rules_core.discovery.containment import Unresolved
from rules_core.model import DiscoveryContext, RuleError, RuleFile
from rules_core.discovery.tree import folders_with_hidden

from ._lenient import IMPORTER_RANKS, _group, path_kind, plain_file, walk_up
from ._memory import folder_label

NAME = "skills"
SKILL_FILE = "SKILL.md"
# Project skills roots, per folder, in the order a name is claimed (the shared folder first).
PROJECT_ROOTS = (".agents", ".claude", ".cursor", ".gemini", ".kiro")
GLOBAL_ROOTS = (".agents", ".claude")
MAX_SKILLS_PER_ROOT = 500
WALKED, NESTED = "0", "1"  # order-key scope prefixes: cwd and ancestors, folders below cwd


def skill_files(context: DiscoveryContext, *, project: bool, user: bool) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if project:
        for index, folder in enumerate(walk_up(context)):  # cwd first: the nearest claims a name
            if folder == context.home and folder != context.cwd:
                continue  # $HOME's skills folders are the user's, read below as global
            for rank, marker in enumerate(PROJECT_ROOTS):
                found += _root(context, os.path.join(folder, marker, "skills"), base=folder, source="project",
                               scope=f"{WALKED}{index:04d}", rank=rank)
        for depth, relative in _nested(context):
            folder = os.path.join(context.cwd, relative)
            for rank, marker in enumerate(PROJECT_ROOTS):
                found += _root(context, os.path.join(folder, marker, "skills"), base=folder, source="project",
                               scope=f"{NESTED}{depth:02d}{relative}", rank=rank)
    if user and context.home:
        # Working in $HOME, its skills were just listed as cwd's: the same file again as a
        # user skill would be "shadowed" by itself, and discovery keeps only one listing.
        listed = {f.path for f in found if isinstance(f, RuleFile)}
        for rank, marker in enumerate(GLOBAL_ROOTS):
            found += [f for f in _root(context, os.path.join(context.home, marker, "skills"), base=context.cwd,
                                       source="global", scope=WALKED, rank=rank)
                      if not isinstance(f, RuleFile) or f.path not in listed]
    return _named(context, found)


def is_nested(rule_file: RuleFile) -> bool:
    """A project skill from a folder below cwd: listed only while the agent works there."""
    return rule_file.source == "project" and rule_file.order[2].startswith(NESTED)


def is_walked(rule_file: RuleFile) -> bool:
    """A project skill of cwd or an ancestor up to the git root."""
    return rule_file.source == "project" and rule_file.order[2].startswith(WALKED)


def _nested(context: DiscoveryContext) -> list[tuple[int, str]]:
    found: set[tuple[int, str]] = set()
    for marker in PROJECT_ROOTS:
        for depth, relative in folders_with_hidden(context, marker):
            if os.path.isdir(os.path.join(context.cwd, relative, marker, "skills")):
                found.add((depth, relative))
    return sorted(found)


def _root(
    context: DiscoveryContext, root: str, *, base: str, source: str, scope: str, rank: int,
) -> list[RuleFile | RuleError]:
    """The skills directly inside ``root``: nothing when it is absent, an error when it
    cannot be listed or (for a project) leads outside the project."""
    if path_kind(root, NAME) != "dir":
        kind = path_kind(root, NAME)
        return [kind] if isinstance(kind, RuleError) else []
    contain = context.containment if source == "project" else None
    real = contain.directory(root) if contain is not None else root
    if real is None:
        return []
    if isinstance(real, Unresolved):
        return [RuleError("source-unreadable", root, f"{real.message}; skills are read only inside the project", NAME)]
    try:
        with os.scandir(root) as entries:
            names = sorted(e.name for e in entries if e.is_dir(follow_symlinks=True))
    except OSError as exc:
        return [RuleError("source-unreadable", root, f"cannot list this skills folder "
                          f"({exc.strerror or type(exc).__name__}); fix its permissions or remove it", NAME)]
    found: list[RuleFile | RuleError] = []
    for name in names[:MAX_SKILLS_PER_ROOT]:
        path = os.path.join(root, name, SKILL_FILE)
        plain = plain_file(path, NAME, SKILL_FILE)
        if plain is not True:  # False: a folder without SKILL.md is no skill (scripts, shared assets)
            found += [plain] if isinstance(plain, RuleError) else []
            continue
        order = (_group(source), IMPORTER_RANKS.get(NAME, 90), f"{scope}/{rank}", name)
        bound = (context.home or "") if source == "global" else (contain.bound if contain is not None else "")
        found.append(RuleFile(path, root, name, base, NAME, NAME, source, order, id_stem=name,  # type: ignore[arg-type]
                              bound=bound))
    if len(names) > MAX_SKILLS_PER_ROOT:
        found.append(RuleError("source-unreadable", root, f"holds {len(names)} folders; only the first "
                               f"{MAX_SKILLS_PER_ROOT} (by name) are read as skills", NAME))
    return found


def _named(context: DiscoveryContext, found: Iterable[RuleFile | RuleError]) -> list[RuleFile | RuleError]:
    """Ids for shared names (the folder's path), and the shadowed skills marked."""
    items = list(found)
    files = sorted((f for f in items if isinstance(f, RuleFile)), key=lambda f: f.order)
    by_name: dict[str, list[RuleFile]] = {}
    for rule_file in files:
        by_name.setdefault(rule_file.id_stem, []).append(rule_file)
    replaced: dict[str, RuleFile] = {}
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        # Folder-scoped skills belong to their folder: they shadow nothing and nothing shadows them.
        claimants = [f for f in group if not is_nested(f)]
        # The first keeps the bare name (as ids keep the stem before ``-2``); the rest are named by folder.
        for rule_file in group[1:]:
            changed = dataclasses.replace(rule_file, id_stem=_label(context, rule_file))
            if rule_file in claimants[1:]:
                changed = dataclasses.replace(changed, elsewhere=(claimants[0].path,))
            replaced[rule_file.path] = changed
    return [replaced.get(item.path, item) if isinstance(item, RuleFile) else item for item in items]


def _label(context: DiscoveryContext, rule_file: RuleFile) -> str:
    folder = os.path.dirname(rule_file.path)
    if rule_file.source == "global":
        return "~/" + os.path.relpath(folder, context.home or "/").replace(os.sep, "/")
    return folder_label(context, folder)
