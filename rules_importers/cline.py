"""The ``cline`` importer: Cline's ``.clinerules`` (one file, or a folder of rules) and
its newer ``.cline/rules`` folder, read in place from the nearest directory owning one.

Cline reads both at its workspace root. We take the NEAREST directory that owns either,
walking from cwd up to the git root (only cwd outside a repository), as the peers do,
and read both there. A folder contributes the ``*.md``, ``*.markdown`` and ``*.txt``
files directly inside it — current Cline reads no subfolder, so ``workflows/``,
``hooks/`` and ``skills/`` (not rules) are never read either. ``paths`` (Cline's
conditional rules) becomes touched globs relative to the owning directory, Cline's
workspace root; no ``paths`` means always. A rule Cline itself would never apply
(``paths: []``, ``disabled: true``, ``enabled: false``, an empty file) is loaded but
stays inactive (``Rule.inactive_reason``), saying why, so nothing is dropped silently.
docs/importers.md (the cline importer).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, finish, glob_values, imported_rule, invalid, kind_of, list_flat, path_kind, rule_file_at,
    extension, walk_up,
)
from ._recovery import read_document

NAME = "cline"
LEGACY = ".clinerules"
CURRENT = os.path.join(".cline", "rules")
EXTENSIONS = (".md", ".markdown", ".txt")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    summary = "Cline: the nearest .clinerules (file or folder) and .cline/rules, up to the git root"
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary=summary, markers=(LEGACY, CURRENT))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not enabled(context, NAME):
        return []  # not even a stat: PI_RULES_IMPORT=none, another selection, or untrusted
    for directory in walk_up(context):
        found = _owned_by(context, directory)
        if found is not None:
            return found  # the nearest owner wins; nothing further up is looked at
    return []


def _owned_by(context: DiscoveryContext, directory: str) -> list[RuleFile | RuleError] | None:
    """Both layouts at ``directory``, or None when it owns neither."""
    found: list[RuleFile | RuleError] = []
    owner = False
    for offset, name in enumerate((LEGACY, CURRENT)):
        path = os.path.join(directory, name)
        kind = path_kind(path, NAME)
        if kind is None or (kind in ("file", "other") and name == CURRENT):
            continue  # a plain file at .cline/rules is no Cline format
        owner = True
        if isinstance(kind, RuleError):
            found.append(kind)
        elif kind == "dir":
            found += list_flat(context, NAME, path, accept=_is_rule_name, base=directory, rank_offset=offset)
        else:  # the single-file form; the engine reports a FIFO or a device as such
            found.append(rule_file_at(path, plugin=NAME, base=directory, id_stem="clinerules"))
    return found if owner else None


def _is_rule_name(name: str) -> bool:
    # Hidden files are editor swap files or macOS '._' forks, never rules.
    return not name.startswith(".") and name.lower().endswith(EXTENSIONS)


@hookimpl(trylast=True)
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    document = read_document(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (document,))
    data = document.data
    problems: list[str] = []
    description = describe(rule_file, data, problems, body=document.body, show="kind")
    paths = _paths(data.get("paths"), problems)
    off = _switched_off(data, problems)
    extended = extension(data, extra_keys, problems)
    if problems:
        return invalid(rule_file, problems[0])  # one at a time, in the order read
    kept = {"description": description, "body": document.body, **extended}
    if off is None and paths == ():
        off = "turned off: paths is empty, which Cline reads as 'never apply'"
    if off is None and not document.body.strip():
        off = "turned off: the file is empty, and Cline skips empty rules"
    if off is not None:  # listed, never active: no globs, never always
        return finish(imported_rule(rule_file, inactive_reason=off, **kept))
    return finish(imported_rule(rule_file, globs=paths or (), always_apply=paths is None, **kept))


def _paths(value: Any, problems: list[str]) -> tuple[str, ...] | None:
    """None: no ``paths`` (always). ``()``: a list with no glob (Cline: never)."""
    if value is None:
        return None
    globs = glob_values(value)
    if globs is None and isinstance(value, list):
        problems.append('paths entries must be glob strings; quote each one, e.g. - "src/**"')
    elif globs is None:
        problems.append(f"paths must be a list of glob strings, got {kind_of(value, 'kind')}")
    elif not globs and isinstance(value, str):
        problems.append(
            f"paths is {value!r}, which names no glob; write paths: [\"src/**\"], or "
            "paths: [] to turn the rule off, or remove it to always apply"
        )
    return globs


def _switched_off(data: Mapping[str, Any], problems: list[str]) -> str | None:
    """Cline's own toggle, stored in the file: ``disabled`` wins over the legacy ``enabled``."""
    for key in ("disabled", "enabled"):
        value = data.get(key)
        if value is not None and type(value) is not bool:
            problems.append(f"{key} must be true or false, got {value!r}; write {key}: true or {key}: false, unquoted")
            return None
    if "disabled" in data and data["disabled"] is not None:
        return "turned off: disabled: true (turned off in Cline)" if data["disabled"] else None
    return "turned off: enabled: false (turned off in Cline)" if data.get("enabled") is False else None
