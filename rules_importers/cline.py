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
stays inactive, saying why, so nothing is dropped silently. docs/importers-cline.md.

The small helpers below the hooks are shared with the ``agents`` importer.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from typing import Any, Callable, Mapping

from rules_core import hookimpl
from rules_core.compiled import compile_rule
from rules_core.model import (
    ORDER_IMPORTS, DiscoveryContext, ImporterInfo, MatchContext, ParseResult, Rule, RuleError, RuleFile,
    SchemaKey, Verdict,
)
from rules_core.paths import ancestors_between

from ._lenient import IMPORTER_RANKS, dedupe, enabled, imported_rule, invalid, read_document, split_globs

NAME = "cline"
LEGACY = ".clinerules"
CURRENT = os.path.join(".cline", "rules")
EXTENSIONS = (".md", ".markdown", ".txt")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    summary = "Cline: the nearest .clinerules (file or folder) and .cline/rules, up to the git root"
    return [ImporterInfo(NAME, default=True, summary=summary)]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    if not enabled(context, NAME):
        return []  # not even a stat: PI_RULES_IMPORT=none, another selection, or untrusted
    for directory in walk_up(context):
        found = _owned_by(context, directory)
        if found is not None:
            return found  # the nearest owner wins; nothing further up is looked at
    return []


def walk_up(context: DiscoveryContext) -> list[str]:
    """cwd, then each ancestor up to the git root; only cwd when there is no root."""
    if context.git_root is None:
        return [context.cwd]
    return [context.cwd, *ancestors_between(context.cwd, context.git_root)]


def _owned_by(context: DiscoveryContext, directory: str) -> list[RuleFile | RuleError] | None:
    """Both layouts at ``directory``, or None when it owns neither."""
    found: list[RuleFile | RuleError] = []
    owner = False
    for offset, name in enumerate((LEGACY, CURRENT)):
        path = os.path.join(directory, name)
        kind = kind_of(path, NAME)
        if kind is None or (kind == "file" and name == CURRENT):
            continue  # a plain file at .cline/rules is no Cline format
        owner = True
        if isinstance(kind, RuleError):
            found.append(kind)
        elif kind == "dir":
            found += list_flat(context, NAME, path, accept=_is_rule_name, base=directory, rank_offset=offset)
        else:  # the single-file form; the engine reports a FIFO or a device as such
            order = (ORDER_IMPORTS, IMPORTER_RANKS[NAME], "", LEGACY)
            rule_file = RuleFile(path, directory, LEGACY, directory, NAME, NAME, "project", order, "clinerules")
            found.append(rule_file)
    return found if owner else None


def _is_rule_name(name: str) -> bool:
    # Hidden files are editor swap files or macOS '._' forks, never rules.
    return not name.startswith(".") and name.lower().endswith(EXTENSIONS)


@hookimpl
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    document = read_document(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (document,))
    data = document.data
    description = describe(rule_file, data, document.body)
    if isinstance(description, ParseResult):
        return description
    paths = _paths(rule_file, data.get("paths"))
    if isinstance(paths, ParseResult):
        return paths
    switch = _switched_off(rule_file, data)
    if isinstance(switch, ParseResult):
        return switch
    kept = {"description": description, "body": document.body, "extra": stream_keys(data)}
    if switch is not None:
        return off_rule(rule_file, switch, **kept)
    if paths == ():
        return off_rule(rule_file, "paths is empty, which Cline reads as 'never apply'", **kept)
    if not document.body.strip():
        return off_rule(rule_file, "the file is empty, and Cline skips empty rules", **kept)
    return finish(imported_rule(rule_file, globs=paths or (), always_apply=paths is None, **kept))


def _paths(rule_file: RuleFile, value: Any) -> tuple[str, ...] | None | ParseResult:
    """None: no ``paths`` (always). ``()``: a list with no glob (Cline: never)."""
    if value is None:
        return None
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            return invalid(rule_file, 'paths entries must be glob strings; quote each one, e.g. - "src/**"')
        return dedupe(value)
    if isinstance(value, str):
        globs = split_globs(value)
        if not globs:
            return invalid(
                rule_file,
                f"paths is {value!r}, which names no glob; write paths: [\"src/**\"], or "
                "paths: [] to turn the rule off, or remove it to always apply",
            )
        return globs
    return invalid(rule_file, f"paths must be a list of glob strings, got {kind_name(value)}")


def _switched_off(rule_file: RuleFile, data: Mapping[str, Any]) -> str | None | ParseResult:
    """Cline's own toggle, stored in the file: ``disabled`` wins over the legacy ``enabled``."""
    for key in ("disabled", "enabled"):
        value = data.get(key)
        if value is not None and type(value) is not bool:
            message = f"{key} must be true or false, got {value!r}; write {key}: true or {key}: false, unquoted"
            return invalid(rule_file, message)
    if "disabled" in data and data["disabled"] is not None:
        return "disabled: true (turned off in Cline)" if data["disabled"] else None
    return "enabled: false (turned off in Cline)" if data.get("enabled") is False else None


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    return off_verdicts(rule, (NAME,))


# -- helpers shared with the agents importer (candidates for _lenient) ---------------------

OFF = "enabled"
STREAM_KEYS = ("condition", "astCondition", "scope", "interruptMode", "agents", "ttsr_trigger", "ttsrTrigger")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.*)$")
_BROKEN = "broken symbolic link; point it at an existing file or delete it"
_NOT_REGULAR = "not a regular file (FIFO, socket or device); rule files must be plain files"


def kind_of(path: str, plugin: str) -> str | RuleError | None:
    """"dir", "file" (anything else that exists), None when absent, or a read-failure."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(path):
            return RuleError("read-failure", path, _BROKEN, plugin)
        return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return RuleError("read-failure", path, f"cannot be inspected ({reason}); fix or remove it", plugin)
    return "dir" if stat.S_ISDIR(info.st_mode) else "file"


def list_flat(
    context: DiscoveryContext,
    name: str,
    root: str,
    *,
    accept: Callable[[str], bool],
    base: str,
    source: str = "project",
    group: int = ORDER_IMPORTS,
    rank_offset: int = 0,
    scope: str = "",
) -> list[RuleFile | RuleError]:
    """The accepted files directly inside ``root`` — the tools we import from read no
    subfolder, so neither do we. Same conventions and listing cache as
    ``_lenient.list_import_root``, which always recurses."""
    cache = context.listing_cache
    known = cache.known_failure(root) if cache is not None else None
    if known is not None:
        return [known]
    try:
        with os.scandir(root) as it:
            entries = sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        error = RuleError(
            "source-unreadable", root,
            f"cannot list this rules directory ({exc.strerror or type(exc).__name__}); "
            "fix its permissions or remove it — its rules are not loaded", name,
        )
        if cache is not None:
            cache.remember_failure(root, error)
        return [error]
    found: list[RuleFile | RuleError] = []
    rank = IMPORTER_RANKS.get(name, 90) + rank_offset
    for entry in entries:
        if not accept(entry.name):
            continue
        try:
            if entry.is_dir(follow_symlinks=True):
                continue  # a folder named like a rule file
            if not entry.is_file(follow_symlinks=True):
                broken = entry.is_symlink() and not os.path.exists(entry.path)
                message = _BROKEN if broken else _NOT_REGULAR
                found.append(RuleError("read-failure", entry.path, message, name))
                continue
        except OSError as exc:
            found.append(RuleError("read-failure", entry.path, exc.strerror or type(exc).__name__, name))
            continue
        found.append(
            RuleFile(
                path=entry.path, rules_root=root, relative_path=entry.name, base=base, plugin=name,
                schema=name, source=source, order=(group, rank, scope, entry.name),  # type: ignore[arg-type]
            )
        )
    return found


def describe(rule_file: RuleFile, data: Mapping[str, Any], body: str) -> str | ParseResult:
    """An explicit non-blank description, else the first ATX heading, else the stem."""
    value = data.get("description")
    if value is not None and not isinstance(value, str):
        return invalid(rule_file, f"description must be a string, got {kind_name(value)}; quote it")
    if value and value.strip():
        return value.strip()
    for line in body.split("\n"):  # fences are not special, as for Claude's rules
        match = _HEADING.match(line)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return rule_file.stem


def stream_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """The peers' stream-rule keys, kept verbatim for the stream-rules issue."""
    return {key: data[key] for key in STREAM_KEYS if key in data}


def finish(rule: Rule) -> ParseResult:
    """Compile the globs once; a glob that cannot compile is reported, the rule still loads."""
    compiled, problems = compile_rule(rule.globs, None, None)
    soft = tuple(RuleError("invalid-value", rule.file.path, p, rule.file.plugin) for p in problems)
    return ParseResult(dataclasses.replace(rule, compiled=compiled), soft)


def off_rule(
    rule_file: RuleFile, why: str, *, description: str, body: str, extra: dict[str, Any]
) -> ParseResult:
    """A rule its own tool would never apply: listed (so nothing vanishes), never active.

    It carries an ``enabled`` condition that only ``off_verdicts`` judges — always false.
    """
    rule = imported_rule(rule_file, description=description, body=body, extra={**extra, OFF: f"false: {why}"})
    return finish(dataclasses.replace(rule, extra_conditions=(OFF,)))


def off_verdicts(rule: Rule, schemas: tuple[str, ...]) -> list[Verdict]:
    if rule.file.schema not in schemas or OFF not in rule.extra_conditions:
        return []
    why = str(rule.extra.get(OFF, "")).removeprefix("false: ")
    return [Verdict(OFF, False, (f"turned off: {why}",), rank=5)]


def kind_name(value: object) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "a mapping"}.get(type(value), type(value).__name__)
