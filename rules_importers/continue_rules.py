"""The ``continue`` importer: Continue's rule files, read in place (docs/importers.md, "The continue importer").

Project files (trusted projects only): ``<cwd>/.continue/rules/**/*.md``. User level:
``~/.continue/rules/**/*.md`` as global rules. The mapping follows Continue's own
``shouldApplyRule`` (core/llm/rules/getSystemMessageWithRules.ts): ``alwaysApply: true``
→ always; ``globs`` → touched globs; ``alwaysApply: false`` with neither globs nor regex →
on-demand; none of the three → always. ``regex`` is a condition on the content of the
touched files (those matching ``globs`` when given), judged here: each file is read
inside the working directory only, size-capped, and searched with a time limit. Globs
are minimatch's (``[!.]`` negates), translated for the engine (``dialects.py``); an empty
``globs: ""`` or ``regex: ""`` is absent, as Continue's truthiness tests read it.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from functools import lru_cache
from typing import Any, Mapping

from rules_core import deadline, hookimpl
from rules_core.globs.compiled import EMPTY_GLOBSET
from rules_core.discovery.containment import Containment, Unresolved
from rules_core.model import (
    DiscoveryContext, ImporterInfo, MatchContext, ParseResult, Rule, RuleError, RuleFile, SchemaKey, Verdict,
)
from rules_core.stream.budget import SEARCH_SECONDS
from rules_plugins._stream_grammar import compile_condition

from ._lenient import (
    describe, enabled, enabled_globally, extension, finish, glob_values, imported_rule, invalid, kind_of,
    list_import_root,
)
from ._recovery import flag, read_markdown
from .dialects import EXTRA_KEY, MINIMATCH, translate_all

NAME = "continue"
RULES_DIR = os.path.join(".continue", "rules")
# The condition a rule with ``regex`` carries: a touched file's content matches.
REGEX = "continue-regex"
RANK = 12  # right after the paths (10): it is about the same touched files
# Per rule and evaluation: the files read, and how much of each. A match further into a
# file is missed (the condition says so); reading more would make every turn slow.
MAX_FILES = 16
READ_BYTES = 256 * 1024
# Per rule and evaluation: what all its searches together may cost (issue 26: a rule may
# list any number of patterns, each searched up to SEARCH_SECONDS per file). Past it, or
# past the call's deadline, the rest are not searched and the verdict says how many.
RULE_SEARCH_SECONDS = 0.25
INVOKABLE = ("invokable: true makes this file a Continue prompt (a / command), not a rule; "
             "Continue never applies it as a rule")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    # Continue reads <workspace>/.continue/rules (cwd), never a parent's.
    return [ImporterInfo(NAME, default=True, lossy_utf8=True, summary="Continue: .continue/rules/**/*.md, ~/.continue/rules (global)",
                         cwd_only=(RULES_DIR,))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    project_root = os.path.join(context.cwd, RULES_DIR)
    if enabled(context, NAME):
        found += list_import_root(context, NAME, project_root, accept=_is_markdown)
    if enabled_globally(context, NAME):
        global_root = os.path.join(context.home or "", RULES_DIR)
        # Working in $HOME, the project folder IS the global one: list it once.
        if not (enabled(context, NAME) and os.path.normpath(global_root) == os.path.normpath(project_root)):
            found += list_import_root(context, NAME, global_root, accept=_is_markdown, source="global")
    return [_named(item) for item in found]


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    doc = read_markdown(rule_file, text)  # no frontmatter is fine: a plain always rule
    if isinstance(doc, ParseResult):
        return doc
    data, problems = doc.data, []
    always = _always_apply(data, problems)
    globs, translated = translate_all(MINIMATCH, _list(data, "globs", problems, 'globs: "src/**/*.ts"'))
    patterns = _regex(data, problems)
    description = _describe(rule_file, data, doc.body, problems)
    invokable = flag(data, "invokable", problems)
    extended = extension(data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    if translated:
        extended["extra"] = {**extended["extra"], EXTRA_KEY: translated}
    if patterns and always is not True:
        extended["extra"] = {**extended["extra"], REGEX: patterns}
        extended["extra_conditions"] = (*extended["extra_conditions"], REGEX)
    # Continue's table: true → always; absent with no globs or regex → always (a root
    # rule with nothing to match is global); false with neither → the agent requests it.
    conditional = bool(globs or patterns)
    rule = imported_rule(
        rule_file, description=description, body=doc.body,
        always_apply=always is True or (always is None and not conditional),
        globs=() if always is True else globs,
        load="on-demand" if always is False and not conditional else "pinned",
        inactive_reason=INVOKABLE if invokable else None, **extended,
    )
    return finish(rule)


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    """``regex``: some touched file (matching the rule's globs, when it has any) has
    content matching one of the patterns — Continue's per-file AND of globs and regex."""
    if REGEX not in rule.extra_conditions or rule.file.schema != NAME:
        return []
    if not context.facts.trusted:
        return [_no("the project is not trusted, so no file content is read for regex")]
    cwd = context.cwd or context.facts.cwd
    globset = rule.compiled.globs if rule.compiled is not None else EMPTY_GLOBSET
    candidates = [p for p in context.touched
                  if not rule.globs or globset.first_session_match((p,), cwd, rule.file.base) is not None]
    patterns: tuple[str, ...] = rule.extra[REGEX]
    shown = ", ".join(f"/{p}/" for p in patterns)
    if not candidates:
        where = "matching its globs " if rule.globs else ""
        return [_no(f"no touched file {where}to search for regex {shown}")]
    contain = Containment(os.path.abspath(cwd), "the working directory")
    notes: list[str] = []
    budget = _Budget(deadline.now() + RULE_SEARCH_SECONDS)
    for path in candidates[:MAX_FILES]:
        matched, text = _search(contain, cwd, path, patterns, budget)
        if matched:
            return [Verdict(REGEX, True, (f"touched {path} matches regex /{text}/",), RANK)]
        if text:
            notes.append(text)
    if budget.skipped:
        notes.append(f"{budget.skipped} searches (pattern × file) not run: the rule's search budget "
                     f"({RULE_SEARCH_SECONDS:g} s) or the call's deadline ({deadline.DEADLINE_ENV}) ran out — "
                     "use fewer or simpler patterns")
    if len(candidates) > MAX_FILES:
        notes.append(f"{len(candidates) - MAX_FILES} more touched files not searched (at most {MAX_FILES})")
    return [_no(f"no touched file's content matches regex {shown}", *notes)]


# -- the frontmatter --------------------------------------------------------------------------


def _always_apply(data: Mapping[str, Any], problems: list[str]) -> bool | None:
    """``alwaysApply`` as Continue tells three states apart: true, false, absent."""
    if data.get("alwaysApply") is None:
        return None
    return flag(data, "alwaysApply", problems)


def _list(data: Mapping[str, Any], key: str, problems: list[str], example: str) -> tuple[str, ...]:
    """A string or a list of strings (glob strings split on commas outside ``{…}``)."""
    value = data.get(key)
    if value is None or value == "":  # Continue tests `if (rule.globs)`: "" is absent
        return ()
    items = glob_values(value)
    if items is None:
        problems.append(f"{key} must be a string or a list of strings, got {kind_of(value, 'scalar')}; write {example}")
        return ()
    if not items:
        problems.append(f"{key} names no pattern; write {example} or remove the key")
    return items


def _regex(data: Mapping[str, Any], problems: list[str]) -> tuple[str, ...]:
    """The ``regex`` patterns, each compiled once here so a broken one is reported with
    the file, not at every evaluation. Not comma-split: a comma is regex text."""
    value = data.get("regex")
    if value is None or value == "":  # Continue tests `if (rule.regex)`: "" is absent
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"regex must be a string or a list of strings, got {kind_of(data.get('regex'), 'scalar')}; "
                        "write regex: \"^import React\"")
        return ()
    patterns = tuple(dict.fromkeys(v for v in value if v))
    if not patterns:
        problems.append('regex names no pattern; write regex: "^import React" or remove the key')
    for pattern in patterns:
        try:
            _compiled(pattern)
        except ValueError as exc:
            problems.append(f"regex: {exc}")
    return patterns


def _describe(rule_file: RuleFile, data: Mapping[str, Any], body: str, problems: list[str]) -> str:
    """``description``; else Continue's display ``name``; else the first heading; else the stem."""
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        problems.append(f"name must be text, got {kind_of(name, 'scalar')}; write name: \"…\" in quotes")
    explicit = data.get("description")
    if (explicit is None or (isinstance(explicit, str) and not explicit.strip())) and isinstance(name, str) and name.strip():
        return name.strip()
    return describe(rule_file, data, problems, body=body, closing=True, show="scalar")


# -- reading the touched files --------------------------------------------------------------


@lru_cache(maxsize=128)  # each at most MAX_EXPANSION items (~2.6 MB) compiled
def _compiled(pattern: str) -> Any:
    """Continue builds ``new RegExp(pattern)``: JavaScript syntax, no flags (``^``/``$``
    anchor the whole file, ``.`` stops at a newline). Raises ValueError naming the fix."""
    return compile_condition(pattern)


# Verdicts by (file identity, patterns): a file unchanged since the last evaluation is
# not read or searched again — nor is a catastrophic pattern re-run against it each turn.
_seen: dict[tuple[Any, ...], tuple[bool, str]] = {}
_SEEN_CAP = 1024


@dataclasses.dataclass
class _Budget:
    """What one rule's searches may still spend, and how many were not run."""

    until: float
    skipped: int = 0

    def timeout(self) -> float | None:
        """Seconds the next search may take, or None when nothing is left."""
        left = min(self.until - deadline.now(), SEARCH_SECONDS)
        call = deadline.remaining()
        if call is not None:
            left = min(left, call)
        return left if left > 0 else None


def _search(contain: Containment, cwd: str, path: str, patterns: tuple[str, ...],
            budget: _Budget) -> tuple[bool, str]:
    """(True, the pattern that matched), or (False, why the file was not (fully)
    searched — empty for a plain no match)."""
    lexical = os.path.normpath(os.path.join(os.path.abspath(cwd), path))
    try:
        found = contain.resolve(lexical)
    except (OSError, ValueError):
        found = Unresolved("cannot be resolved")
    if found is None:
        return False, ""  # not there (yet): nothing to match, nothing to report
    if isinstance(found, Unresolved):
        if found.escape and not contain.inside(lexical):
            return False, f"{path} not read: only files inside the working directory are searched"
        return False, f"{path} not read: {found.message}"
    physical, info = found
    if not stat.S_ISREG(info.st_mode):
        return False, "" if stat.S_ISDIR(info.st_mode) else f"{path} not read: not a regular file"
    key = (physical, info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, patterns)
    if key not in _seen:
        skipped_before = budget.skipped
        result = _searched(physical, path, patterns, budget)
        if budget.skipped == skipped_before:  # a cut search is run again next time, not remembered
            if len(_seen) >= _SEEN_CAP:
                _seen.clear()
            _seen[key] = result
        return result
    return _seen[key]


def _searched(physical: str, path: str, patterns: tuple[str, ...], budget: _Budget) -> tuple[bool, str]:
    text = _head(physical)
    if text is None:
        return False, f"{path} not read: it could not be opened as a plain file"
    slow = []
    for index, pattern in enumerate(patterns):
        timeout = budget.timeout()  # a checkpoint per pattern: their number is the repository's
        if timeout is None:
            budget.skipped += len(patterns) - index
            break
        try:
            if _compiled(pattern).search(text, timeout=timeout) is not None:
                return True, pattern
        except TimeoutError:
            slow.append(f"regex /{pattern}/ took over {timeout:.2g} s on {path} (catastrophic "
                        "backtracking?), so it counts as no match — simplify its nested or overlapping repetitions")
    return False, "; ".join(slow)


def _head(physical: str) -> str | None:
    """The first ``READ_BYTES`` of a regular file as text, or None. Non-blocking and not
    following a link swapped in since the file was resolved (nothing can hang or escape)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(physical, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, READ_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _no(*reasons: str) -> Verdict:
    return Verdict(REGEX, False, reasons, RANK)


def _named(item: RuleFile | RuleError) -> RuleFile | RuleError:
    # A file named just ``.md`` has an empty stem; it still needs an id.
    if isinstance(item, RuleFile) and not item.stem:
        return dataclasses.replace(item, id_stem="md")
    return item


def _is_markdown(name: str) -> bool:
    return name.endswith(".md")
