"""One file, two names; one text a host already has (docs/format.md, "One file, two names").

A repository often gives one rule file a second name with a symbolic link
(``CLAUDE.md -> AGENTS.md``, ``.claude/rules -> ../.cursor/rules``), and each name is found
by the source that owns it. Both are the same bytes, so discovery keeps one rule: the
one at the link's target, carrying the other names in ``Rule.aliases``. Nothing here
knows a format: two listed files are one file when ``Containment`` resolves them to the
same physical path inside the project (a link leading out is refused before this).

A host that reads a file itself under any of its names reads the rule (``Hooks.host_reads``
tries every name), and a rule whose text is byte-identical to one the host reads is a
copy the host already has: ``native_copies`` leaves it out too, naming the native file.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Mapping, Sequence

from rules_core.model import Rule

COPY_OF_NATIVE = "the same text as {native}, which {host} reads itself; pi-rules leaves this copy out so it is not sent twice"


def merge_aliases(rules: Sequence[Rule], physical: Mapping[str, str]) -> list[Rule]:
    """One rule per physical file, in discovery order. ``physical`` maps a listed path to
    the file it resolves to inside the project (project files only). The rule kept is the
    one listed at the physical path itself (the link's target); when every name is a link
    (both point at a third file), the first in discovery order. The others become its
    ``aliases``, in discovery order."""
    groups: dict[str, list[Rule]] = {}
    for rule in rules:
        real = physical.get(rule.file.path)
        if real is not None:
            groups.setdefault(real, []).append(rule)
    kept: dict[int, Rule] = {}
    merged: set[int] = set()
    for real, names in groups.items():
        if len(names) < 2:
            continue
        target = next((r for r in names if r.file.path == real), names[0])
        others = tuple(r.file for r in names if r is not target)
        kept[id(target)] = dataclasses.replace(target, aliases=target.aliases + others)
        merged.update(id(r) for r in names if r is not target)
    if not merged:
        return list(rules)
    return [kept.get(id(r), r) for r in rules if id(r) not in merged]


def every_name(rule: Rule) -> list[Rule]:
    """The rule as each of its names: itself, then one copy per alias file (what a host's
    ``reads`` check is asked about)."""
    return [rule, *(dataclasses.replace(rule, file=alias, aliases=()) for alias in rule.aliases)]


def native_copies(rules: Sequence[Rule], read: Mapping[str, str], host: str, cwd: str) -> dict[str, str]:
    """Rules whose body is byte-identical to the body of a rule the host reads itself
    (``read``: id → reason), with the reason naming that native file (cwd-relative).
    Empty bodies are never copies: an empty file says nothing twice. An on-demand rule
    reaches the model as its description first, so two of them are copies only when that
    matches too (two skills whose bodies are both "Body." are two skills)."""
    native: dict[tuple[str, str | None], Rule] = {}
    for rule in rules:
        if rule.id in read and rule.body.strip():
            native.setdefault(_sent_as(rule), rule)
    found: dict[str, str] = {}
    for rule in rules:
        source = native.get(_sent_as(rule))
        if source is not None and rule.id not in read:
            found[rule.id] = COPY_OF_NATIVE.format(native=_shown(source.file.path, cwd), host=host)
    return found


def _sent_as(rule: Rule) -> tuple[str, str | None]:
    return rule.body, rule.description if rule.load == "on-demand" else None


def alias_note(rule: Rule, shown: Callable[[str], str]) -> str:
    """`` (also CLAUDE.md, packages/x/CLAUDE.md)`` for a rule with other names, else ``""``;
    ``shown`` turns an absolute path into what the output prints."""
    if not rule.aliases:
        return ""
    return " (also " + ", ".join(shown(a.path) for a in rule.aliases) + ")"


def _shown(path: str, cwd: str) -> str:
    root = os.path.abspath(cwd).rstrip(os.sep) + os.sep
    return path[len(root):].replace(os.sep, "/") if path.startswith(root) else path
