"""From rules to the files one export run wants: pure, no filesystem."""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass, field
from typing import Callable, Iterable

from rules_core.model import Rule

from .activation import Activation, activation, widened
from .files import FILE_TARGETS, Exported, FileTarget
from .sections import SECTION_TARGETS, SectionTarget

TARGETS = (*FILE_TARGETS, *SECTION_TARGETS)


@dataclass(frozen=True)
class Skip:
    rule: str
    target: str
    reason: str


@dataclass
class Plan:
    """Whole files by project-relative path, sections by memory file, what was left out,
    and what changed meaning on the way (warnings)."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (target, text)
    sections: dict[str, tuple[str, str]] = field(default_factory=dict)  # file -> (target, section)
    skipped: list[Skip] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    folders: dict[str, str] = field(default_factory=dict)  # target -> the folder it owns
    owners: dict[str, str] = field(default_factory=dict)  # path -> the id of the rule it holds
    # Sources that failed to parse this run: their earlier files are kept, not removed as stale.
    broken: set[str] = field(default_factory=set)


def make_plan(rules: Iterable[Rule], targets: Iterable[str], root: str, lossy: bool,
              is_stream: Callable[[Rule], bool]) -> Plan:
    plan = Plan()
    rules = list(rules)
    for name in targets:
        if name in FILE_TARGETS:
            _plan_files(plan, FILE_TARGETS[name], rules, root, lossy, is_stream)
        else:
            _plan_section(plan, SECTION_TARGETS[name], rules, root, lossy, is_stream)
    return plan


def _exported(rule: Rule, target: str, on_demand: bool, globs: bool, root: str, lossy: bool,
              is_stream: Callable[[Rule], bool], plan: Plan) -> Exported | None:
    """The rule as ``target`` receives it, or None (recorded in ``plan.skipped``)."""
    if rule.inactive_reason:
        plan.skipped.append(Skip(rule.id, target, f"never active in its own tool: {rule.inactive_reason}"))
        return None
    prefix = _prefix(rule.file.base, root)
    if prefix is None:
        plan.skipped.append(Skip(rule.id, target, "its folder is outside the exported project; export from there"))
        return None
    found = activation(rule, prefix, is_stream(rule))
    missing = list(found.lost)
    if found.kind == "on-demand" and not on_demand and not found.globs:
        missing.append("load: on-demand")
    if found.kind == "touched" and not globs:
        missing.append(f"globs: {json.dumps(list(found.globs))}")
    if missing and not lossy:
        plan.skipped.append(Skip(rule.id, target, f"{target} cannot express {'; '.join(missing)}; "
                                                  "left out (--lossy keeps it, the condition as text)"))
        return None
    if missing:
        found = widened(Activation(found.kind, found.globs, (), found.notes), on_demand, globs)
    plan.warnings += [f"{rule.relative_path} → {target}: {note}" for note in found.notes]
    source = os.path.relpath(rule.file.path, root).replace(os.sep, "/")
    folder, base = posixpath.split(posixpath.splitext(rule.relative_path.replace(os.sep, "/"))[0])
    base = base.lstrip(".") or rule.id  # `.cursorrules` (with --from) is named `cursorrules`
    name = posixpath.join(*(part for part in (prefix, folder, base) if part))
    return Exported(source, name, rule.description, rule.body, found, tuple(missing))


def _plan_files(plan: Plan, target: FileTarget, rules: list[Rule], root: str, lossy: bool,
                is_stream: Callable[[Rule], bool]) -> None:
    plan.folders[target.name] = target.folder
    for rule in rules:
        exported = _exported(rule, target.name, target.on_demand, True, root, lossy, is_stream, plan)
        if exported is None:
            continue
        path = target.path(exported)
        if path in plan.files:
            plan.skipped.append(Skip(rule.id, target.name, f"{path} is already written for an earlier rule; "
                                                           "rename one of the two"))
            continue
        plan.files[path] = (target.name, target.render(exported))
        plan.owners[path] = rule.id


def _plan_section(plan: Plan, target: SectionTarget, rules: list[Rule], root: str, lossy: bool,
                  is_stream: Callable[[Rule], bool]) -> None:
    chosen = [e for rule in rules if (e := _exported(rule, target.name, False, False, root, lossy, is_stream, plan))]
    plan.sections[target.file] = (target.name, target.section(chosen))


def _prefix(base: str, root: str) -> str | None:
    """``base`` relative to ``root`` ('' for root itself), None when it is not inside."""
    base, root = os.path.abspath(base), os.path.abspath(root)
    if base == root:
        return ""
    if base.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(base, root).replace(os.sep, "/")
    return None
