"""The ``agents`` importer: the ``.agent``/``.agents`` rule folders (oh-my-pi, Antigravity)
and oh-my-pi's ``.omp`` and xcsh's ``.xcsh`` rules with their sticky ``RULES.md``.

Project, for a trusted project, in this order: ``<dir>/.agent/rules`` then
``<dir>/.agents/rules`` for cwd and each ancestor up to the git root, nearest first (only
cwd outside a repository; ``$HOME`` is skipped — its folders are the user's);
``<cwd>/.omp/rules`` and the ``RULES.md`` of the nearest non-empty ``.omp/`` from cwd up;
the same for ``.xcsh``. User level, global rules whatever the trust: ``~/.agent/rules``,
``~/.agents/rules``, ``~/.omp/agent/rules`` + ``~/.omp/agent/RULES.md``, and the same for
``~/.xcsh/agent``. A rules folder contributes the ``*.md``/``*.mdc`` directly inside it, as
the peers read them. docs/importers.md (the agents importer) says why for every choice.
"""

from __future__ import annotations

import os
import re
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, enabled_globally, finish, glob_values, imported_rule, invalid, kind_of, list_flat,
    path_kind, rule_file_at, extension, unknown_choice, walk_up,
)
from ._recovery import read_document

NAME = "agents"
# RULES.md is always applied whatever it says; its own schema name tells parse so.
STICKY = "agents-sticky"
FAMILIES = (".agent", ".agents")
CONFIGS = ((1, ".omp"), (2, ".xcsh"))  # (rank offset after the .agent(s) walk, folder)
TRIGGERS = ("always_on", "glob", "model_decision", "manual")
_TRIGGER_ALIASES = {"agent": "model_decision"}  # listed by Devin's docs, undefined: the gentlest reading


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    summary = ".agent(s)/rules, .omp/rules, .xcsh/rules and their RULES.md, in the project and in $HOME"
    markers = tuple(os.path.join(folder, name) for folder in (*FAMILIES, *(c for _, c in CONFIGS))
                    for name in ("rules", "RULES.md"))
    return [ImporterInfo(NAME, default=True, summary=summary, markers=markers)]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    if enabled(context, NAME):  # nothing at all is touched otherwise, not even a stat
        found += _project(context)
    if enabled_globally(context, NAME):
        found += _user(context, str(context.home))
    return found


def _project(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    directories = walk_up(context)
    for distance, directory in enumerate(directories):
        if directory == context.home:
            continue  # ~/.agent(s) are user-level rules, listed once by _user
        for index, family in enumerate(FAMILIES):
            root = os.path.join(directory, family, "rules")
            scope = f"{distance:04d}{index}"  # nearest first, .agent before .agents
            found += list_flat(context, NAME, root, accept=_is_rule_name, base=directory, scope=scope)
    for offset, config in CONFIGS:
        rules = os.path.join(context.cwd, config, "rules")  # the peers read these at cwd only
        found += list_flat(context, NAME, rules, accept=_is_rule_name, base=context.cwd, rank_offset=offset,
                           scope="0")
        found += _nearest_sticky(directories, config, offset)
    return found


def _nearest_sticky(directories: list[str], config: str, offset: int) -> list[RuleFile | RuleError]:
    """The RULES.md of the nearest non-empty ``config`` folder; as in oh-my-pi the walk
    stops there even when that folder has none."""
    for directory in directories:
        folder = os.path.join(directory, config)
        try:
            with os.scandir(folder) as it:
                if next(it, None) is None:
                    continue
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            message = f"cannot list this folder ({reason}); its RULES.md is not loaded"
            return [RuleError("source-unreadable", folder, message, NAME)]
        return _sticky(folder, base=directory, source="project", offset=offset)
    return []


def _user(context: DiscoveryContext, home: str) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    common: dict[str, Any] = {"accept": _is_rule_name, "base": context.cwd, "source": "global"}
    for index, family in enumerate(FAMILIES):
        found += list_flat(context, NAME, os.path.join(home, family, "rules"), scope=f"0{index}", **common)
    for offset, config in CONFIGS:
        agent_dir = os.path.join(home, config, "agent")
        rules = os.path.join(agent_dir, "rules")
        found += list_flat(context, NAME, rules, rank_offset=offset, scope="0", **common)
        found += _sticky(agent_dir, base=context.cwd, source="global", offset=offset)
    return found


def _sticky(folder: str, *, base: str, source: str, offset: int) -> list[RuleFile | RuleError]:
    path = os.path.join(folder, "RULES.md")
    kind = path_kind(path, NAME)
    if isinstance(kind, RuleError):
        return [kind]
    if kind not in ("file", "other"):  # the engine reports a FIFO or a device as such
        return []
    # Scope "1": after the folder's rules.
    return [rule_file_at(path, plugin=NAME, schema=STICKY, base=base, source=source, rank_offset=offset, scope="1")]


def _is_rule_name(name: str) -> bool:
    return not name.startswith(".") and name.endswith((".md", ".mdc"))


@hookimpl(trylast=True)
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema not in (NAME, STICKY):
        return None
    document = read_document(rule_file, text, dialect="oh-my-pi")
    if isinstance(document, RuleError):
        return ParseResult(None, (document,))
    data = {_camel(str(key)): value for key, value in document.data.items()}
    problems: list[str] = []
    description = describe(rule_file, data, problems, body=document.body, show="kind")
    extended = extension(data, extra_keys, problems)
    if problems:
        return invalid(rule_file, *problems)
    kept = {"description": description, "body": document.body, **extended}
    if rule_file.schema == STICKY:
        if not document.body.strip():
            off = "turned off: RULES.md is empty, and oh-my-pi skips an empty RULES.md"
            return finish(imported_rule(rule_file, inactive_reason=off, **kept))
        return finish(imported_rule(rule_file, always_apply=True, **kept))
    switch = data.get("enabled")
    if switch is not None and type(switch) is not bool:
        return invalid(rule_file, f"enabled must be true or false, got {switch!r}; write enabled: false, "
                                  "unquoted")
    activation = _activation(rule_file, data)
    if isinstance(activation, ParseResult):
        return activation
    off = None
    if switch is False:
        off = "turned off: enabled: false (oh-my-pi skips this rule)"
    elif not document.body.strip():
        off = "turned off: the body is empty, and oh-my-pi skips rules without content"
    if off is not None:  # listed, never active: no globs, never always
        return finish(imported_rule(rule_file, inactive_reason=off, **kept))
    always, globs, load = activation
    return finish(imported_rule(rule_file, globs=globs, always_apply=always, load=load, **kept))


def _activation(
    rule_file: RuleFile, data: Mapping[str, Any]
) -> tuple[bool, tuple[str, ...], str] | ParseResult:
    """(always, globs, load). ``trigger`` (Antigravity, Windsurf) decides when present;
    otherwise oh-my-pi's keys: ``alwaysApply``, then ``globs``, else fetched on demand."""
    always = data.get("alwaysApply")
    if always is not None and type(always) is not bool:
        message = f"alwaysApply must be true or false, got {always!r}; write alwaysApply: true, unquoted"
        return invalid(rule_file, message)
    globs = _globs(rule_file, data.get("globs"))
    if isinstance(globs, ParseResult):
        return globs
    trigger = data.get("trigger")
    if isinstance(trigger, str):  # read as the windsurf importer reads it
        trigger = _TRIGGER_ALIASES.get(trigger.strip().lower(), trigger.strip().lower())
    if trigger is None:
        if always:
            return True, (), "pinned"
        return (False, globs, "pinned") if globs else (False, (), "on-demand")
    if trigger not in TRIGGERS:
        # Worded as the windsurf importer words it, with the closest mode suggested.
        return invalid(rule_file, unknown_choice("trigger", data.get("trigger"), TRIGGERS))
    if trigger == "always_on":
        return True, (), "pinned"
    if trigger == "glob":
        if not globs:
            message = 'trigger: glob needs globs; add globs: "src/**/*.ts" (comma-separated or a list)'
            return invalid(rule_file, message)
        return False, globs, "pinned"
    return False, (), "on-demand"  # model_decision, manual: the model fetches it when relevant


def _globs(rule_file: RuleFile, value: Any) -> tuple[str, ...] | ParseResult:
    # Empty means absent: Cursor's own rule template writes a bare 'globs:'.
    globs = () if value is None else glob_values(value)
    if globs is not None:
        return globs
    if isinstance(value, list):
        return invalid(rule_file, 'globs entries must be glob strings; quote each one, e.g. - "src/**"')
    return invalid(rule_file, f"globs must be a glob string or a list of them, got {kind_of(value, 'kind')}")


def _camel(key: str) -> str:
    """oh-my-pi reads ``always-apply`` as ``alwaysApply``."""
    return re.sub(r"-([a-z])", lambda m: m.group(1).upper(), key)
