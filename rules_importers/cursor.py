"""The ``cursor`` importer: Cursor's rules, read in place (docs/importers-cursor.md).

Project files (trusted projects only): ``<cwd>/.cursor/rules/**/*.{mdc,md}``, the legacy
``<cwd>/.cursorrules``, then every ``<cwd>/<dir>/.cursor/rules`` below cwd (at most
``MAX_DEPTH`` segments, shallow first, never through hidden or symlinked directories),
scoped to ``<dir>``. User level: ``~/.cursor/rules``
as global rules. ``alwaysApply`` → always; ``globs`` → touched globs; anything else →
on-demand (Cursor's "agent requested" and "manual"), never dropped.

The helpers below the hooks are shared with the ``windsurf`` importer, which writes its
rules the same way (lenient frontmatter with a line-based fallback, heading fallback for
the description, the peers' stream keys kept verbatim).
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from types import MappingProxyType
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.compiled import compile_rule
from rules_core.fs import NEVER_SCANNED
from rules_core.model import (
    ORDER_GLOBAL, ORDER_IMPORTS, DiscoveryContext, ImporterInfo, ParseResult, Rule, RuleError,
    RuleFile, SchemaKey,
)
from rules_importers._lenient import (
    IMPORTER_RANKS, Document, dedupe, enabled, enabled_globally, imported_rule, list_import_root,
    split_globs,
)
from rules_plugins._frontmatter import FrontmatterError, load_yaml, split_frontmatter

NAME = "cursor"
RULES_DIR = os.path.join(".cursor", "rules")
LEGACY = ".cursorrules"
MAX_DEPTH = 6
# The oh-my-pi/xcsh stream-rule keys: kept verbatim for the stream-rules issue.
STREAM_KEYS = ("condition", "astCondition", "scope", "interruptMode", "agents", "ttsr_trigger", "ttsrTrigger")


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary=(
        "Cursor rules: .cursor/rules/**/*.{mdc,md} at cwd and in folders below it, "
        ".cursorrules, ~/.cursor/rules (global)"
    ))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):
        cwd = context.cwd
        found += list_import_root(context, NAME, os.path.join(cwd, RULES_DIR), accept=_is_cursor_rule)
        found += single_file(context, NAME, os.path.join(cwd, LEGACY), id_stem="cursorrules", rank_offset=1)
        for depth, folder in _nested_folders(context):
            base = os.path.join(cwd, folder)
            found += list_import_root(
                context, NAME, os.path.join(base, RULES_DIR), accept=_is_cursor_rule,
                base=base, scope=folder, rank_offset=1 + depth,
            )
    if enabled_globally(context, NAME):
        found += list_import_root(
            context, NAME, os.path.join(context.home or "", RULES_DIR), accept=_is_cursor_rule,
            source="global", group=ORDER_GLOBAL,
        )
    return found


@hookimpl
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    if rule_file.relative_path == LEGACY:
        return plain_rule(rule_file, text)
    doc = read_frontmatter(rule_file, text)
    if isinstance(doc, RuleError):
        return ParseResult(None, (doc,))
    problems: list[str] = []
    always = flag(doc.data, "alwaysApply", problems)
    globs = glob_list(doc.data, "globs", problems)
    description = describe(rule_file, doc, problems)
    if problems:
        return ParseResult(None, tuple(RuleError("invalid-value", rule_file.path, p, NAME) for p in problems))
    # Cursor attaches a nested folder's rules only to files in that folder: an "always"
    # rule there means "any touched file below the folder", which `**` from its base says.
    nested = rule_file.source == "project" and rule_file.order[2] != ""
    if always and nested:
        always, globs = False, ("**",)
    rule = imported_rule(
        rule_file, description=description, body=doc.body, always_apply=always,
        globs=() if always else globs,
        load="pinned" if always or globs else "on-demand",
        extra=stream_extra(doc.data),
    )
    return finish(rule)


def _is_cursor_rule(name: str) -> bool:
    return name.endswith((".mdc", ".md"))


# -- nested .cursor/rules ---------------------------------------------------------------


def _nested_folders(context: DiscoveryContext) -> list[tuple[int, str]]:
    """Walking six levels of a monorepo is the expensive part of discovery: the folders
    found are kept until the engine says the tree changed; their rules are re-listed."""
    cache = context.tree_cache
    key = (NAME, "nested-folders", context.cwd)
    if cache is not None and key in cache:
        return cache[key]
    folders = _find_nested_folders(context.cwd)
    if cache is not None:
        cache[key] = folders
    return folders


def _find_nested_folders(cwd: str) -> list[tuple[int, str]]:
    """(depth, cwd-relative folder) of every folder below cwd owning a real
    ``.cursor/rules``, shallow first then lexicographic; each directory is listed once."""
    folders: list[tuple[int, str]] = []
    level, _ = _subdirectories(cwd)
    for depth in range(1, MAX_DEPTH + 1):
        next_level: list[str] = []
        for relative in level:
            names, owns_rules = _subdirectories(os.path.join(cwd, relative))
            if owns_rules:
                folders.append((depth, relative))
            if depth < MAX_DEPTH:
                next_level.extend(f"{relative}/{name}" for name in names)
        level = next_level
    return sorted(folders)


def _subdirectories(directory: str) -> tuple[list[str], bool]:
    """Real, visible subdirectories worth descending (never through a symlink, so never
    out of cwd), and whether ``directory`` owns a real ``.cursor/rules``."""
    names: list[str] = []
    owns_rules = False
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if entry.name == ".cursor":
                    owns_rules = _real_directory(os.path.join(entry.path, "rules"))
                elif not entry.name.startswith(".") and entry.name not in NEVER_SCANNED:
                    # Hidden directories (.git, .venv, other tools' config) hold no
                    # packages and can be huge; nested .pi/rules skips them too.
                    names.append(entry.name)
    except OSError:
        pass  # unlistable below cwd: nothing nested can be found there
    return sorted(names), owns_rules


def _real_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


# -- shared with the windsurf importer ----------------------------------------------------


def single_file(
    context: DiscoveryContext, name: str, path: str, *, id_stem: str, rank_offset: int = 0,
    source: str = "project",
) -> list[RuleFile | RuleError]:
    """One fixed file (``.cursorrules``, ``global_rules.md``) as a RuleFile, an error when
    it is there but is no plain file, nothing when it is absent."""
    problem = None
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if not os.path.islink(path):
            return []
        problem = "broken symbolic link; point it at an existing file or delete it"
    except (OSError, ValueError) as exc:
        problem = f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    else:
        if stat.S_ISDIR(info.st_mode):
            problem = ("is a directory, but this file is read as one rule; "
                       "move the rules inside it to the rules directory")
        elif not stat.S_ISREG(info.st_mode):
            problem = "not a regular file (FIFO, socket or device); rule files must be plain files"
    if problem is not None:
        return [RuleError("read-failure", path, problem, name)]
    relative = os.path.basename(path)
    group = ORDER_GLOBAL if source == "global" else ORDER_IMPORTS
    return [RuleFile(  # globs of both kinds are cwd-relative, as for every global rule
        path=path, rules_root=os.path.dirname(path), relative_path=relative, base=context.cwd,
        plugin=name, schema=name, source=source,  # type: ignore[arg-type]
        order=(group, IMPORTER_RANKS[name] + rank_offset, "", relative), id_stem=id_stem,
    )]


def plain_rule(rule_file: RuleFile, text: str) -> ParseResult:
    """A legacy single-file rule: the whole text, verbatim, always applied."""
    description = first_heading(text) or rule_file.stem
    return ParseResult(imported_rule(rule_file, description=description, body=text, always_apply=True))


def read_frontmatter(rule_file: RuleFile, text: str) -> Document | RuleError:
    """Frontmatter the way Cursor and Windsurf read it: YAML first; when YAML fails (the
    unquoted ``globs: **/*.ts`` their users write is a YAML alias), a line-based
    ``key: value`` reading; when that cannot account for every line either, the YAML
    error stands as ``yaml-syntax``."""
    try:
        split = split_frontmatter(text)
    except FrontmatterError as exc:
        return RuleError("yaml-syntax", rule_file.path, str(exc), rule_file.plugin)
    if split.yaml_text is None:
        return Document(MappingProxyType({}), text, False)
    try:
        data = load_yaml(split.yaml_text)
    except FrontmatterError as exc:
        data = _line_mapping(split.yaml_text)
        if data is None:
            return RuleError("yaml-syntax", rule_file.path, str(exc), rule_file.plugin)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return RuleError("yaml-syntax", rule_file.path,
                         "frontmatter must be a mapping of 'key: value' lines, not a list or scalar",
                         rule_file.plugin)
    return Document(MappingProxyType(data), split.body, True)


_KEY_LINE = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)")
_COMMENT = re.compile(r"(?:^|[ \t])#.*$")


def _line_mapping(yaml_text: str) -> dict[str, Any] | None:
    """Top-level ``key: value`` lines, plus ``- item`` lines under a key with no value;
    ``None`` if any other line (or a repeated key) is present."""
    data: dict[str, Any] = {}
    list_key: str | None = None
    for line in yaml_text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _KEY_LINE.fullmatch(line.rstrip())
        if match:
            key, value = match.group(1), _scalar(match.group(2))
            if key in data:
                return None
            data[key] = value
            list_key = key if value is None else None
        elif list_key is not None and (stripped == "-" or stripped.startswith("- ")):
            data[list_key] = [*(data[list_key] or []), _scalar(stripped[1:]) or ""]
        else:
            return None
    return data


def _scalar(raw: str) -> Any:
    """A fallback value: quotes removed, ``[a, b]`` a list, ``# comments`` dropped; text
    stays text (``true`` included, which the key readers accept)."""
    value = raw.strip()
    if not _quoted(value):
        value = _COMMENT.sub("", value).strip()
    if _quoted(value):
        return value[1:-1]
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(item) for item in split_globs(value[1:-1])]
    return value or None


def _quoted(value: str) -> bool:
    return len(value) > 1 and value[0] in ("'", '"') and value.endswith(value[0])


def flag(data: Mapping[str, Any], key: str, problems: list[str]) -> bool:
    """A boolean key; the text ``"true"``/``"false"`` counts (see the docs), null is false."""
    value = data.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    problems.append(f"{key} must be true or false, got {shown(value)}; write {key}: true or {key}: false")
    return False


def glob_list(data: Mapping[str, Any], key: str, problems: list[str]) -> tuple[str, ...]:
    """A comma string (split outside ``{…}``) or a list of glob strings; empty = none."""
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return split_globs(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return dedupe(value)
    problems.append(
        f"{key} must be a comma-separated string or a list of glob strings, got {shown(value)}; "
        f'write {key}: "src/**/*.ts, docs/**" or one quoted pattern per list item'
    )
    return ()


def describe(rule_file: RuleFile, doc: Document, problems: list[str]) -> str:
    """An explicit non-blank ``description``, else the first body heading, else the stem."""
    value = doc.data.get("description")
    if value is not None and not isinstance(value, str):
        problems.append(f'description must be text, got {shown(value)}; write description: "…" in quotes')
        return ""
    if isinstance(value, str) and value.strip():
        return value.strip()
    return first_heading(doc.body) or rule_file.stem


_HEADING = re.compile(r"#{1,6}[ \t]+(.*)")


def first_heading(body: str) -> str:
    for line in body.split("\n"):
        match = _HEADING.fullmatch(line.rstrip())
        if match and match.group(1).strip("# \t"):
            return match.group(1).strip("# \t")
    return ""


def stream_extra(data: Mapping[str, Any]) -> dict[str, Any]:
    return {key: data[key] for key in STREAM_KEYS if key in data}


def finish(rule: Rule) -> ParseResult:
    """Compile the globs once; a pattern that cannot compile loads the rule (it never
    matches) and is reported, as for native rules."""
    compiled, problems = compile_rule(rule.globs, None, None)
    soft = tuple(RuleError("invalid-value", rule.file.path, p, rule.file.plugin) for p in problems)
    return ParseResult(dataclasses.replace(rule, compiled=compiled), soft)


def shown(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)
