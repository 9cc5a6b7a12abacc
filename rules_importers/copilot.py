"""The ``copilot`` importer: GitHub Copilot's path-specific instructions (RULE-SPEC §1).

Reads ``<cwd>/.github/instructions/**/*.instructions.md`` in place. ``applyTo`` is one
string of comma-separated globs (split only outside ``{…}``); the bare entry ``**`` —
or no ``applyTo`` at all — means always-apply. ``description`` falls back to the file
stem. Every other key is ignored, except the peers' stream-rule keys, which are kept.

Beyond the spec, and like oh-my-pi, the directories named in
``COPILOT_CUSTOM_INSTRUCTIONS_DIRS`` (Copilot CLI's own variable) contribute their
``.github/instructions`` as global rules: the user named them, so trust does not gate
them, but ``PI_RULES_IMPORT`` does.

The small helpers at the bottom are shared with the ``claude`` importer.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Callable, Mapping

from rules_core import hookimpl
from rules_core.compiled import compile_rule
from rules_core.model import (
    ORDER_GLOBAL,
    DiscoveryContext,
    ImporterInfo,
    ParseResult,
    Rule,
    RuleError,
    RuleFile,
    SchemaKey,
)

from ._lenient import enabled, imported_rule, list_import_root, read_document, split_globs

NAME = "copilot"
ROOT = os.path.join(".github", "instructions")
SUFFIX = ".instructions.md"
CUSTOM_DIRS_ENV = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"
ALL_FILES = "**"
# The peers' stream-rule keys: kept verbatim for the stream-rules feature, never rejected.
STREAM_KEYS = (
    "condition", "astCondition", "scope", "interruptMode", "agents", "ttsr_trigger", "ttsrTrigger",
)


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    summary = "GitHub Copilot: .github/instructions/**/*.instructions.md (applyTo)"
    return [ImporterInfo(NAME, default=True, summary=summary)]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        found += _listed(context, os.path.join(context.cwd, ROOT))
    # Not $HOME files, so not ``enabled_globally``: only the selection gates them.
    if NAME in context.importers:
        found += _custom_dirs(context)
    return found


@hookimpl
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    return guarded(rule_file, lambda: _parse(rule_file, text))


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
            source="global", group=ORDER_GLOBAL, base=context.cwd, scope=f"{len(seen):04d}",
        )
    return found


def _expand_home(entry: str, home: str | None) -> str | None:
    if entry == "~" or entry.startswith("~/"):
        return None if home is None else home + entry[1:]
    return entry


def _parse(rule_file: RuleFile, text: str) -> ParseResult:
    damaged = binary_text(rule_file, text)
    if damaged is not None:
        return damaged
    document = read_document(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (with_quote_hint(document, text),))
    data = document.data
    errors: list[RuleError] = []
    description = explicit_description(rule_file, data, errors)
    globs = _apply_to(rule_file, data, errors)
    if errors:
        return ParseResult(None, tuple(errors))
    rule = imported_rule(
        rule_file,
        description=description or file_stem(rule_file),
        body=document.body,
        globs=globs,
        always_apply=not globs or ALL_FILES in globs,
        extra=stream_extra(data),
    )
    return compiled(rule)


def _apply_to(rule_file: RuleFile, data: Mapping[str, Any], errors: list[RuleError]) -> tuple[str, ...]:
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
    errors.append(RuleError("invalid-value", rule_file.path, problem, rule_file.plugin))
    return ()


# -- helpers shared with the claude importer (candidates for _lenient) ---------------------


def guarded(rule_file: RuleFile, parse: Callable[[], ParseResult]) -> ParseResult:
    """A parser bug must cost one file, not the whole discovery (the engine would
    otherwise drop every rule of the pass)."""
    try:
        return parse()
    except Exception as exc:  # noqa: BLE001 - reported as a value, never raised
        return ParseResult(None, (RuleError(
            "read-failure", rule_file.path,
            f"pi-rules could not read this file (internal error {type(exc).__name__}: {exc}); "
            "please report this",
            rule_file.plugin,
        ),))


def binary_text(rule_file: RuleFile, text: str) -> ParseResult | None:
    """Imports need no frontmatter, so a binary file that happens to be valid UTF-8
    would otherwise become an always-on rule injecting NUL bytes into the prompt."""
    if "\x00" not in text:
        return None
    return ParseResult(None, (RuleError(
        "read-failure", rule_file.path,
        "the file contains NUL bytes, so it is binary, not markdown; delete it or save it as text",
        rule_file.plugin,
    ),))


def explicit_description(
    rule_file: RuleFile, data: Mapping[str, Any], errors: list[RuleError]
) -> str:
    """The trimmed ``description``; empty when absent or blank (``description:`` with
    nothing after it is blank, not a type error)."""
    value = data.get("description")
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    errors.append(RuleError(
        "invalid-value", rule_file.path,
        f"description must be a string, got {kind_of(value)}; quote it or remove the key",
        rule_file.plugin,
    ))
    return ""


def stream_extra(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: data[key] for key in STREAM_KEYS if key in data}


def compiled(rule: Rule) -> ParseResult:
    """Compile the globs once; an uncompilable one loads the rule, never matches, and is
    reported (CONTRACT §2 "Globs")."""
    result, problems = compile_rule(rule.globs, None, None)
    soft = tuple(RuleError("invalid-value", rule.file.path, p, rule.file.plugin) for p in problems)
    return ParseResult(dataclasses.replace(rule, compiled=result), soft)


# A plain YAML scalar cannot start with these; unquoted globs (``**/*.ts``,
# ``{src,lib}/**``) are the usual way a real-world rule file breaks its frontmatter.
_UNQUOTED = re.compile(
    r"^(?P<lead>[ \t]*(?:[A-Za-z_][\w-]*[ \t]*:|-)[ \t]+)(?P<value>[*&!{%@`][^\n]*?)[ \t]*$"
)
_GENERIC_HINT = "check indentation and quote values containing ': ', '#', '*', '&', '[' or '{'"


def with_quote_hint(error: RuleError, text: str) -> RuleError:
    """Name the exact quoted line that fixes an unquoted glob, when the YAML error
    message does not already say it."""
    if not error.message.startswith("invalid YAML") or "quote the value" in error.message:
        return error
    for line in text.split("\n")[1:]:
        if line.rstrip(" \t") == "---":
            break
        match = _UNQUOTED.match(line)
        if match:
            fixed = match.group("value").replace("\\", "\\\\").replace('"', '\\"')
            lead = match.group("lead").strip()
            hint = f'quote the value: {lead} "{fixed}"'
            if _GENERIC_HINT in error.message:
                message = error.message.replace(_GENERIC_HINT, hint)
            else:
                message = f"{error.message}; {hint}"
            return RuleError(error.kind, error.path, message, error.plugin)
    return error


def kind_of(value: object) -> str:
    """``a number (3)``: what the YAML value is, shortened for a one-line message."""
    kind = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a mapping"}
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"{kind.get(type(value), type(value).__name__)} ({shown})"
