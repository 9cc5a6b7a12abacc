"""The ``copilot`` importer: GitHub Copilot's repository-wide and path-specific
instructions (RULE-SPEC §1).

Reads, in place and in this order, ``<cwd>/.github/copilot-instructions.md`` (the
repository-wide file: its whole text, always applied, read like a memory file) and
``<cwd>/.github/instructions/**/*.instructions.md``. ``applyTo`` is one string of
comma-separated globs (split only outside ``{…}``); the bare entry ``**`` — or no
``applyTo`` at all — means always-apply. ``description`` falls back to the file stem.
Every other key is ignored, except the peers' stream-rule keys, which are kept.

Beyond the spec, and like oh-my-pi, the directories named in
``COPILOT_CUSTOM_INSTRUCTIONS_DIRS`` (Copilot CLI's own variable) contribute their
``.github/instructions`` as global rules: the user named them, so trust does not gate
them, but ``PI_RULES_IMPORT`` does.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    IMPORTER_RANKS, NOT_REGULAR, _group, describe, enabled, finish, imported_rule, invalid, kind_of,
    list_import_root, path_kind, split_globs, extension,
)
from ._memory import folder_label, memory_rule
from ._recovery import read_markdown

NAME = "copilot"
ROOT = os.path.join(".github", "instructions")
SUFFIX = ".instructions.md"
# The repository-wide file: plain Markdown, no frontmatter, so it has its own schema name
# and is read whole, like a memory file (AGENTS.md).
REPO_WIDE = ".github/copilot-instructions.md"
REPO_WIDE_SCHEMA = "copilot-repository"
EMPTY = "turned off: the file is empty, so it has no instructions to send"
CUSTOM_DIRS_ENV = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"
ALL_FILES = "**"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    summary = "GitHub Copilot: .github/copilot-instructions.md, .github/instructions/**/*.instructions.md (applyTo)"
    return [ImporterInfo(NAME, default=True, summary=summary, cwd_only=(REPO_WIDE, ROOT))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        found += _repository_wide(context)
        # Rank offset 1: after the repository-wide file, which is the general text they refine.
        found += _listed(context, os.path.join(context.cwd, ROOT), rank_offset=1)
    # Not $HOME files, so not ``enabled_globally``: only the selection gates them.
    if NAME in context.importers:
        found += _custom_dirs(context)
    return found


@hookimpl(trylast=True)
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema == REPO_WIDE_SCHEMA:
        return _repository_wide_rule(rule_file, text)
    if rule_file.schema != NAME:
        return None
    return _parse(rule_file, text, extra_keys)


def is_instructions(name: str) -> bool:
    return name.endswith(SUFFIX)


def _listed(context: DiscoveryContext, root: str, **where: Any) -> list[RuleFile | RuleError]:
    listed = list_import_root(context, NAME, root, accept=is_instructions, **where)
    return [_with_stem(item) if isinstance(item, RuleFile) else item for item in listed]


def _with_stem(rule_file: RuleFile) -> RuleFile:
    """``typescript.instructions.md`` is rule ``typescript`` (RULE-SPEC §1)."""
    return dataclasses.replace(rule_file, id_stem=file_stem(rule_file))


def file_stem(rule_file: RuleFile) -> str:
    name = rule_file.relative_path.rsplit("/", 1)[-1]
    # A file named just ``.instructions.md`` still needs a usable id and description.
    return name[: -len(SUFFIX)] or "instructions"


def _repository_wide(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    """``<cwd>/.github/copilot-instructions.md``: nothing when absent, an error when it is
    there but is no plain file. The id names its folder (``acme/copilot-instructions``), as
    a memory file's does; the reference path is the one every Copilot document uses."""
    path = os.path.join(context.cwd, REPO_WIDE)
    kind = path_kind(path, NAME)
    if kind is None or isinstance(kind, RuleError):
        return [] if kind is None else [kind]
    if kind != "file":
        problem = NOT_REGULAR if kind == "other" else f"is a directory, but Copilot reads {REPO_WIDE} as one file"
        return [RuleError("read-failure", path, problem, NAME)]
    order = (_group("project"), IMPORTER_RANKS[NAME], "", REPO_WIDE)
    stem = f"{folder_label(context, context.cwd)}/copilot-instructions"
    return [RuleFile(path, context.cwd, REPO_WIDE, context.cwd, NAME, REPO_WIDE_SCHEMA, "project", order, stem)]


def _repository_wide_rule(rule_file: RuleFile, text: str) -> ParseResult:
    """The whole text, verbatim and always applied: GitHub documents the file as natural
    language in Markdown, with no frontmatter, so a leading ``---`` block is kept as text."""
    return memory_rule(rule_file, text, empty=EMPTY)


def _custom_dirs(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    raw = context.env.get(CUSTOM_DIRS_ENV, "")
    found: list[RuleFile | RuleError] = []
    seen: set[str] = set()
    for entry in (part.strip() for part in raw.split(",")):
        if not entry:
            continue
        directory = _expand_home(entry, context.home)
        if directory is None or not os.path.isabs(directory):
            found.append(RuleError(
                "invalid-value", CUSTOM_DIRS_ENV,
                f"{CUSTOM_DIRS_ENV} entry {entry!r} is not an absolute directory; write a full "
                "path such as /home/me/team-rules or ~/team-rules (it is skipped until then)",
                NAME,
            ))
            continue
        directory = os.path.normpath(directory)
        if directory in seen:
            continue
        seen.add(directory)
        found += _listed(
            context, os.path.join(directory, ROOT),
            source="global", base=context.cwd, scope=f"{len(seen):04d}",
        )
    return found


def _expand_home(entry: str, home: str | None) -> str | None:
    if entry == "~" or entry.startswith("~/"):
        return None if home is None else home + entry[1:]
    return entry


def _parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult:
    document = read_markdown(rule_file, text)
    if isinstance(document, ParseResult):
        return document
    data = document.data
    problems: list[str] = []
    # Copilot's fallback is the stem, never a heading (RULE-SPEC §1).
    description = describe(rule_file, data, problems, body=None)
    globs = _apply_to(data, problems)
    extended = extension(data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    kept = {"description": description, "body": document.body, **extended}
    return finish(imported_rule(rule_file, globs=globs, always_apply=not globs or ALL_FILES in globs, spec_budget=True,
                                 **kept))


def _apply_to(data: Mapping[str, Any], problems: list[str]) -> tuple[str, ...]:
    """The normalised globs; empty when the rule applies always (no ``applyTo``)."""
    if "applyTo" not in data:
        return ()
    value = data["applyTo"]
    fix = 'write applyTo: "**" for every file, globs such as "src/**/*.ts, docs/**", or remove the key'
    if isinstance(value, str):
        globs = split_globs(value)
        if globs:
            return globs
        problem = f"applyTo {value!r} names no glob; {fix}"
    elif isinstance(value, list):
        # Copilot reads one string; a YAML list is the usual slip, so show it joined.
        joined = ", ".join(v.strip() for v in value if isinstance(v, str) and v.strip())
        problem = (
            "applyTo must be one string of comma-separated globs, not a list; "
            f'write applyTo: "{joined or "src/**/*.ts, docs/**"}"'
        )
    elif value is None:
        problem = f"applyTo is empty; {fix}"
    else:
        problem = f"applyTo must be a string of comma-separated globs, got {kind_of(value)}; quote it"
    problems.append(problem)
    return ()
