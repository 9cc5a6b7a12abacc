"""The ``kiro`` importer: Kiro's steering files, read in place (docs/importers.md, "The kiro importer").

Project files (trusted projects only): ``<cwd>/.kiro/steering/**/*.md``. User level:
``~/.kiro/steering/**/*.md`` as global rules. Kiro's ``inclusion`` decides: ``always``
(also no frontmatter) → always; ``fileMatch`` + ``fileMatchPattern`` → touched globs;
``auto`` + ``description`` → on-demand; ``manual`` → on-demand, listed only while the
turn prompt names ``#<file stem>`` (the ``kiro-manual`` condition, judged here) and
readable with ``read_rule`` always. ``#[[file:path]]`` references are expanded in place
(``_includes``), never outside the rule file's ``bound``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from functools import lru_cache
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import (
    DiscoveryContext, ImporterInfo, MatchContext, ParseResult, Rule, RuleError, RuleFile, SchemaKey, Verdict,
)

from ._includes import Expanded, expand
from ._lenient import (
    describe, enabled, enabled_globally, extension, finish, glob_values, imported_rule, invalid, kind_of,
    list_import_root, unknown_choice,
)
from ._memory import MEMORY_POOL
from ._recovery import read_markdown

NAME = "kiro"
STEERING = os.path.join(".kiro", "steering")
# Kiro's inclusion modes, spelled as Kiro spells them (its own docs and generated files
# use the camel-case ``fileMatch``; a wrong case gets a did-you-mean, not a guess).
MODES = ("always", "fileMatch", "auto", "manual")
# The condition a manual steering file carries: the turn prompt names ``#<stem>``.
MANUAL = "kiro-manual"
RANK = 45
# Keys authors write when they mean fileMatchPattern (seen in public steering files).
_PATTERN_MISSPELLINGS = {"filematchpattern", "filematchpatterns", "filematch", "globs", "glob", "pattern", "patterns", "applyto", "paths"}


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    # Kiro reads the steering folder of the workspace it opened (cwd), never a parent's.
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary="Kiro steering: .kiro/steering/**/*.md, ~/.kiro/steering (global)",
                         cwd_only=(STEERING,))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    project_root = os.path.join(context.cwd, STEERING)
    if enabled(context, NAME):
        # References are read inside the git root (cwd without one), never above it.
        bound = context.containment.bound if context.containment is not None else context.cwd
        found += _bounded(list_import_root(context, NAME, project_root, accept=_is_markdown), bound)
    if enabled_globally(context, NAME):
        home = context.home or ""
        global_root = os.path.join(home, STEERING)
        # Working in $HOME, the project folder IS the global one: list it once (Kiro CLI
        # de-duplicates the same way).
        if not (enabled(context, NAME) and os.path.normpath(global_root) == os.path.normpath(project_root)):
            found += _bounded(list_import_root(context, NAME, global_root, accept=_is_markdown, source="global"), home)
    return found


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    doc = read_markdown(rule_file, text)  # no frontmatter is fine: Kiro's default is always
    if isinstance(doc, ParseResult):
        return doc
    problems: list[str] = []
    mode = _inclusion(doc.data, problems)
    globs = _patterns(doc.data, problems) if mode == "fileMatch" else ()
    if mode == "auto":
        _require_description(doc.data, problems)
    description = describe(rule_file, doc.data, problems, body=doc.body, closing=True, show="scalar")
    extended = extension(doc.data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    if mode == "manual":
        extended["extra"] = {**extended["extra"], MANUAL: f"#{rule_file.stem}"}
        extended["extra_conditions"] = (*extended["extra_conditions"], MANUAL)
    expanded = _references(rule_file, doc.body)
    rule = imported_rule(
        rule_file, description=description, body=expanded.text, always_apply=mode == "always", globs=globs,
        load="on-demand" if mode in ("auto", "manual") else "pinned", **extended,
    )
    result = finish(rule)
    unread = tuple(RuleError("invalid-value", rule_file.path, p, NAME) for p in expanded.problems)
    # Kiro puts every ``always`` steering file into every interaction, whole: its memory files.
    kept = dataclasses.replace(result.rule, pool=MEMORY_POOL) if result.rule is not None and mode == "always" else (
        result.rule)
    return ParseResult(kept, result.errors + unread, expanded.depends)


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    """A manual steering file is offered only in a turn whose prompt names ``#<stem>``,
    as Kiro includes it only when the chat references it."""
    if MANUAL not in rule.extra_conditions or rule.file.schema != NAME:
        return []
    stem = rule.file.stem
    if _mention(stem).search(context.facts.prompt):
        return [Verdict(MANUAL, True, (f"the prompt names #{stem}",), RANK)]
    return [Verdict(MANUAL, False, (f"manual steering file: name #{stem} in the prompt to include it",), RANK)]


# -- the frontmatter --------------------------------------------------------------------------


def _inclusion(data: Mapping[str, Any], problems: list[str]) -> str:
    """Kiro's mode; no ``inclusion`` (or no frontmatter) is Kiro's default, ``always``."""
    value = data.get("inclusion")
    if value is None:
        return "always"
    if not isinstance(value, str):
        problems.append(f"inclusion must be one of {', '.join(MODES)}, got {kind_of(value, 'scalar')}; "
                        "write inclusion: always")
        return "always"
    if value.strip() in MODES:
        return value.strip()
    problems.append(unknown_choice("inclusion", value, MODES))
    return "always"


def _patterns(data: Mapping[str, Any], problems: list[str]) -> tuple[str, ...]:
    """``fileMatchPattern``: one glob, a comma string (split outside ``{…}``) or a list."""
    value = data.get("fileMatchPattern")
    globs = () if value is None else glob_values(value)
    if globs is None:
        problems.append(f"fileMatchPattern must be a glob string or a list of glob strings, got "
                        f"{kind_of(value, 'scalar')}; write fileMatchPattern: \"src/**/*.ts\"")
        return ()
    if not globs:
        near = next((k for k in data if isinstance(k, str) and k != "fileMatchPattern"
                     and k.lower().replace("_", "") in _PATTERN_MISSPELLINGS), None)
        hint = f" (this file has {near}:, which Kiro does not read — rename it to fileMatchPattern)" if near else ""
        problems.append(f"inclusion: fileMatch needs fileMatchPattern naming the files it applies to{hint}; "
                        "add fileMatchPattern: \"src/**/*.ts\" (or a list), or choose another inclusion")
    return globs


def _require_description(data: Mapping[str, Any], problems: list[str]) -> None:
    """Kiro includes an ``auto`` file when the request matches its description: without
    one there is nothing to match (a non-text one is reported by ``describe``)."""
    value = data.get("description")
    if value is None or (isinstance(value, str) and not value.strip()):
        problems.append('inclusion: auto needs a description saying when the steering applies (Kiro matches '
                        'requests against it); add description: "…", or use inclusion: manual')


# -- references and mentions --------------------------------------------------------------


def _references(rule_file: RuleFile, body: str) -> Expanded:
    """The body with ``#[[file:…]]`` expanded. Kiro resolves them in the workspace (cwd);
    a global file's are resolved in the home folder, its bound: a global rule is shared
    by every project and must not read an untrusted one's files."""
    if rule_file.source == "global":  # home: so messages say "your home folder", "~/…"
        return expand(body, path=rule_file.path, bound=rule_file.bound, home=rule_file.bound, syntax="kiro",
                      root=rule_file.bound)
    return expand(body, path=rule_file.path, bound=rule_file.bound, home=None, syntax="kiro", root=rule_file.base)


@lru_cache(maxsize=256)
def _mention(stem: str) -> re.Pattern[str]:
    # "#deploy" as a word: not "##deploy", "a#deploy" or "#deploy-runbook"; "#deploy.md" counts.
    return re.compile(rf"(?<![\w#/-])#{re.escape(stem)}(?![\w-])", re.IGNORECASE)


def _bounded(listed: list[RuleFile | RuleError], bound: str) -> list[RuleFile | RuleError]:
    """The listed files with the folder their references may be read from (list_import_root
    does not set it); a file named just ``.md`` gets a stem to be named by."""
    out: list[RuleFile | RuleError] = []
    for item in listed:
        if isinstance(item, RuleFile):
            item = dataclasses.replace(item, bound=bound, id_stem=item.id_stem or ("" if item.stem else "md"))
        out.append(item)
    return out


def _is_markdown(name: str) -> bool:
    return name.endswith(".md")
