"""The importers' toolkit: the imported rule, its description and globs, and listing the
files other tools keep. Reading frontmatter (and each tool's YAML recovery) is ``_recovery``.

Imports do not use the strict native schema (RULE-SPEC §1 "Lenient parsing"): unknown
keys are ignored, the body is kept verbatim, only real document damage is an error. Every
rule comes from ``imported_rule``: ``match: touched``, ``enforcement: inform``, ``priority:
0``. Project files list in group ``ORDER_IMPORTS`` (after nested ``.pi/rules``, before
global rules); user-level files (``$HOME``) are global rules in ``ORDER_GLOBAL``.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import stat
from types import MappingProxyType
from typing import Any, Callable, Mapping

from rules_core.globs.compiled import compile_rule
from rules_core.discovery.listing import list_rule_files
from rules_core.model import (
    ORDER_GLOBAL, ORDER_IMPORTS, DiscoveryContext, ParseResult, Rule, RuleError, RuleFile, SchemaKey,
)
from rules_core.paths import ancestors_between
from rules_core.select import OVERFLOW_INDEX
from rules_plugins.schema_v1 import validate_extra

# Discovery order among importers (RULE-SPEC §1: Copilot before Claude; the peers after).
# The memory files (AGENTS.md, CLAUDE.md, GEMINI.md) come after every rules folder: they
# are the general text a rule folder refines. Gaps leave room for an importer's own rank
# offsets (copilot +1, cursor +1+depth, windsurf +0..2, agents +0..2); third parties rank 90.
IMPORTER_RANKS = {
    "copilot": 10, "claude": 20, "cursor": 30, "windsurf": 40, "cline": 50, "agents": 60,
    "kiro": 64, "continue": 66, "roo": 68, "amazonq": 70, "junie": 72, "augment": 74, "zed": 76, "trae": 78,
    "skills": 80, "agents-md": 84, "claude-md": 86, "gemini-md": 88,
}
BROKEN_LINK = "broken symbolic link; point it at an existing file or delete it"
NOT_REGULAR = "not a regular file (FIFO, socket or device); rule files must be plain files"


# -- the imported rule ---------------------------------------------------------------------


def imported_rule(
    rule_file: RuleFile, *, description: str, body: str, globs: tuple[str, ...] = (), always_apply: bool = False,
    load: str = "pinned", extra: Mapping[str, Any] | None = None, inactive_reason: str | None = None,
    extra_conditions: tuple[str, ...] = (), spec_budget: bool = False,
) -> Rule:
    """An ordinary rule from an imported file (RULE-SPEC §1). ``inactive_reason`` marks a
    file its own tool deliberately never applies (Cline's ``paths: []``, oh-my-pi's
    ``enabled: false``): listed, always inactive with that reason, never matched.

    Only the spec's own importers (Copilot, Claude) pass ``spec_budget``: their dropped
    rules follow the ``overflow`` setting as RULE-SPEC §6 says. Every other format's tool
    delivers each rule that applies, so a rule the budget leaves out is named in the
    index instead of vanishing (``Rule.overflow``; docs/format.md, "Overflow")."""
    return Rule(
        file=rule_file, description=description, body=body, globs=globs, match="touched",
        load=load, always_apply=always_apply, extra=MappingProxyType(dict(extra or {})),  # type: ignore[arg-type]
        inactive_reason=inactive_reason, extra_conditions=extra_conditions,
        overflow=None if spec_budget else OVERFLOW_INDEX,
    )


def finish(rule: Rule) -> ParseResult:
    """Compile the globs once; a glob that cannot compile loads the rule (it never
    matches) and is reported as ``invalid-value``, as for native rules (CONTRACT §2)."""
    compiled, problems = compile_rule(rule.globs, None, None)
    soft = tuple(RuleError("invalid-value", rule.file.path, p, rule.file.plugin) for p in problems)
    return ParseResult(dataclasses.replace(rule, compiled=compiled), soft)


def plain_rule(rule_file: RuleFile, text: str) -> ParseResult:
    """A legacy single-file rule (``.cursorrules``, ``.windsurfrules``, Windsurf's
    ``global_rules.md``): the whole text, verbatim, always applied."""
    description = first_heading(text, closing=True) or rule_file.stem
    return finish(imported_rule(rule_file, description=description, body=text, always_apply=True))


def invalid(rule_file: RuleFile, *problems: str) -> ParseResult:
    """No rule: each problem is an ``invalid-value`` error naming the file."""
    return ParseResult(None, tuple(RuleError("invalid-value", rule_file.path, p, rule_file.plugin) for p in problems))




def extension(data: Mapping[str, Any], extra_keys: Mapping[str, SchemaKey], problems: list[str]) -> dict[str, Any]:
    """The keys plugins add to every format (the peers' stream-rule keys, ``agents``),
    validated by their plugins as strictly as in native rules: a bad value is a problem
    naming the fix. Keys no plugin offers are other tools' business and are ignored."""
    extra, conditions = validate_extra(data, extra_keys, lambda _kind, message: problems.append(message))
    return {"extra": extra, "extra_conditions": conditions}


# -- descriptions and values -----------------------------------------------------------------

# An ATX heading: after at most three spaces (CommonMark), one to six '#' and a blank.
_HEADING = re.compile(r" {0,3}#{1,6}[ \t]+(.*)")
# Each importer pair words a non-text description its own way (their tests pin it).
_NOT_TEXT = {
    "value": "description must be a string, got {}; quote it or remove the key",
    "kind": "description must be a string, got {}; quote it",
    "scalar": 'description must be text, got {}; write description: "…" in quotes',
}


def describe(
    rule_file: RuleFile, data: Mapping[str, Any], problems: list[str], *,
    body: str | None, closing: bool = False, show: str = "value",
) -> str:
    """An explicit non-blank ``description``; else, given a ``body``, its first ATX
    heading; else the file stem. A non-text description is a problem, worded in the
    importer's ``show`` style (see ``kind_of``)."""
    value = data.get("description")
    if value is not None and not isinstance(value, str):
        problems.append(_NOT_TEXT[show].format(kind_of(value, show)))
        return ""
    if value and value.strip():
        return value.strip()
    return (body is not None and first_heading(body, closing=closing)) or rule_file.stem


def first_heading(body: str, *, closing: bool = False) -> str:
    """The text of the first line that looks like an ATX heading, its ``#`` run stripped
    and trimmed; a heading with no text is passed over. Fenced code is not special
    (RULE-SPEC §1). ``closing`` also strips a closing ``#`` run (Cursor, Windsurf)."""
    for line in body.split("\n"):
        match = _HEADING.match(line)
        if match:
            text = match.group(1).rstrip().strip("# \t") if closing else match.group(1).strip()
            if text:
                return text
    return ""


def did_you_mean(value: object, allowed: Any) -> str:
    """`` — did you mean 'always_on'?`` when ``value`` is close to one of ``allowed``
    (case-insensitive: ``filematch`` → ``fileMatch``), else ``""``."""
    if not isinstance(value, str):
        return ""
    by_lower = {str(a).lower(): str(a) for a in allowed}
    text = value.strip().lower()
    if text in by_lower:
        return f" — did you mean {by_lower[text]!r}?"
    close = difflib.get_close_matches(text, list(by_lower), n=1, cutoff=0.6)
    return f" — did you mean {by_lower[close[0]]!r}?" if close else ""


def unknown_choice(key: str, value: object, allowed: Any) -> str:
    """The problem for an enumerated key with a value it does not know."""
    choices = ", ".join(str(a) for a in allowed)
    return f"unknown {key} {value!r}{did_you_mean(value, allowed)}; use one of {choices}"


_KINDS = {bool: "boolean", int: "number", float: "number", str: "string", list: "list", dict: "mapping"}


def kind_of(value: object, show: str = "value") -> str:
    """What a YAML value is, for a one-line message: ``"value"`` → ``a number (3)``,
    ``"kind"`` → ``a number``, ``"scalar"`` → ``the number 3`` (text as written, quoted)."""
    kind = _KINDS.get(type(value))
    if show == "scalar":
        if kind in ("boolean", "number"):
            return f"the {kind} {str(value).lower() if kind == 'boolean' else value}"
        return f"a {kind}" if kind in ("list", "mapping") else repr(value)
    name = f"a {kind}" if kind else type(value).__name__
    if show == "kind":
        return name
    shown = repr(value)
    return f"{name} ({shown if len(shown) <= 60 else shown[:57] + '...'})"


def glob_list(data: Mapping[str, Any], key: str, problems: list[str]) -> tuple[str, ...]:
    """Cursor's and Windsurf's globs: a comma string or a list of glob strings; empty = none."""
    value = data.get(key)
    globs = () if value is None else glob_values(value)
    if globs is None:
        problems.append(
            f"{key} must be a comma-separated string or a list of glob strings, got {kind_of(value, 'scalar')}; "
            f'write {key}: "src/**/*.ts, docs/**" or one quoted pattern per list item'
        )
    return globs or ()


def glob_values(value: object) -> tuple[str, ...] | None:
    """A comma string (``split_globs``) or a list of strings (``dedupe``) as globs; None
    when the value is neither."""
    if isinstance(value, str):
        return split_globs(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return dedupe(value)
    return None


def split_globs(text: str) -> tuple[str, ...]:
    """Comma-separated globs, split only outside ``{…}``; trimmed, empties dropped,
    duplicates collapsed first-seen: ``src/**/*.{ts,tsx}, docs/**`` is two globs."""
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return dedupe(p.strip() for p in parts)


def dedupe(values: Any) -> tuple[str, ...]:
    """Trimmed, non-empty, first-seen order."""
    seen: dict[str, None] = {}
    for value in values:
        value = value.strip()
        if value:
            seen.setdefault(value, None)
    return tuple(seen)


# -- where the files are ----------------------------------------------------------------------


def enabled(context: DiscoveryContext, name: str) -> bool:
    """An importer's PROJECT files are read only for a trusted project that selected it."""
    return context.trusted and name in context.importers


def enabled_globally(context: DiscoveryContext, name: str) -> bool:
    """An importer's USER-level files (in $HOME) load whatever the trust, like global
    rules — but only when the user's own selection enables the importer (a project's
    ``import`` or ``[plugins] block`` never un-imports the user's rules)."""
    chosen = context.importers if context.global_importers is None else context.global_importers
    return context.home is not None and name in chosen


def walk_up(context: DiscoveryContext) -> list[str]:
    """cwd, then each ancestor up to the git root; only cwd when there is no root."""
    if context.git_root is None:
        return [context.cwd]
    return [context.cwd, *ancestors_between(context.cwd, context.git_root)]


def list_import_root(
    context: DiscoveryContext, name: str, root: str, *, accept: Callable[[str], bool],
    base: str | None = None, source: str = "project", scope: str = "", rank_offset: int = 0,
) -> list[RuleFile | RuleError]:
    """Every accepted file below ``root``, with the importer's schema, order rank and the
    listing cache. Callers check ``enabled``/``enabled_globally`` first."""
    return list_rule_files(
        root, accept=accept, plugin=name, schema=name, source=source,  # type: ignore[arg-type]
        base=base if base is not None else context.cwd, context=context,
        group=_group(source), rank=IMPORTER_RANKS.get(name, 90) + rank_offset, scope=scope,
    )


def list_flat(
    context: DiscoveryContext, name: str, root: str, *, accept: Callable[[str], bool], base: str,
    source: str = "project", rank_offset: int = 0, scope: str = "",
) -> list[RuleFile | RuleError]:
    """The accepted files directly inside ``root`` — the tools we import from read no
    subfolder, so neither do we. Same conventions and cache as ``list_import_root``."""
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
    for entry in (e for e in entries if accept(e.name)):
        try:
            if entry.is_dir(follow_symlinks=True):
                continue  # a folder named like a rule file
            if not entry.is_file(follow_symlinks=True):
                broken = entry.is_symlink() and not os.path.exists(entry.path)
                found.append(RuleError("read-failure", entry.path, BROKEN_LINK if broken else NOT_REGULAR, name))
                continue
        except OSError as exc:
            found.append(RuleError("read-failure", entry.path, exc.strerror or type(exc).__name__, name))
            continue
        found.append(rule_file_at(entry.path, plugin=name, base=base, source=source,
                                  rank_offset=rank_offset, scope=scope))
    return found


def path_kind(path: str, plugin: str) -> str | RuleError | None:
    """What is at a fixed path: ``"dir"``, ``"file"`` (regular), ``"other"`` (FIFO,
    socket, device), None when absent, or a read-failure (broken link, failing stat)."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return RuleError("read-failure", path, BROKEN_LINK, plugin) if os.path.islink(path) else None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        return RuleError("read-failure", path, f"cannot be inspected ({reason}); fix or remove it", plugin)
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    return "file" if stat.S_ISREG(info.st_mode) else "other"


def plain_file(path: str, plugin: str, what: str) -> bool | RuleError:
    """Whether a plain file is at ``path`` (False: nothing, or a folder), else the error a
    user sees: a broken link, a failing stat, or a FIFO, socket or device (``what`` says
    what must be a plain file: ``SKILL.md``, ``memory files``)."""
    kind = path_kind(path, plugin)
    if kind is None or kind == "dir":
        return False
    if isinstance(kind, RuleError):
        return kind
    if kind != "file":
        return RuleError("read-failure", path, f"not a regular file (FIFO, socket or device); {what} must be "
                         f"{'a plain file' if what.endswith('.md') else 'plain files'}", plugin)
    return True


def single_file(
    context: DiscoveryContext, name: str, path: str, *, id_stem: str, rank_offset: int = 0,
    source: str = "project",
) -> list[RuleFile | RuleError]:
    """One fixed file read as one rule (``.cursorrules``, ``global_rules.md``): nothing
    when absent, an error when it is there but is no plain file."""
    kind = path_kind(path, name)
    if kind is None or isinstance(kind, RuleError):
        return [] if kind is None else [kind]
    if kind != "file":
        problem = NOT_REGULAR if kind == "other" else (
            "is a directory, but this file is read as one rule; move the rules inside it to the rules directory")
        return [RuleError("read-failure", path, problem, name)]
    # Globs of both kinds are cwd-relative, as for every global rule.
    return [rule_file_at(path, plugin=name, base=context.cwd, source=source, rank_offset=rank_offset,
                         id_stem=id_stem)]


def rule_file_at(
    path: str, *, plugin: str, base: str, source: str = "project", schema: str | None = None,
    rank_offset: int = 0, scope: str = "", id_stem: str = "",
) -> RuleFile:
    """The RuleFile of one file, referenced by its own name in its own directory."""
    relative = os.path.basename(path)
    order = (_group(source), IMPORTER_RANKS.get(plugin, 90) + rank_offset, scope, relative)
    return RuleFile(path, os.path.dirname(path), relative, base, plugin, schema or plugin, source,  # type: ignore[arg-type]
                    order, id_stem)


def _group(source: str) -> int:
    return ORDER_GLOBAL if source == "global" else ORDER_IMPORTS
