"""The ``agents`` importer: the ``.agent``/``.agents`` rule folders (oh-my-pi, Antigravity)
and oh-my-pi's ``.omp`` and xcsh's ``.xcsh`` rules with their sticky ``RULES.md``.

Project, for a trusted project, in this order: ``<dir>/.agent/rules`` then
``<dir>/.agents/rules`` for cwd and each ancestor up to the git root, nearest first (only
cwd outside a repository; ``$HOME`` is skipped — its folders are the user's);
``<cwd>/.omp/rules`` and the ``RULES.md`` of the nearest non-empty ``.omp/`` from cwd up;
the same for ``.xcsh``. User level, global rules whatever the trust: ``~/.agent/rules``,
``~/.agents/rules``, ``~/.omp/agent/rules`` + ``~/.omp/agent/RULES.md``, and the same for
``~/.xcsh/agent``. A rules folder contributes the ``*.md``/``*.mdc`` directly inside it, as
the peers read them. docs/importers-agents.md says why for every choice.
"""

from __future__ import annotations

import json
import os
import re
from types import MappingProxyType
from typing import Any, Mapping

from rules_core import hookimpl
from rules_core.model import (
    ORDER_GLOBAL, ORDER_IMPORTS, DiscoveryContext, ImporterInfo, MatchContext, ParseResult, Rule, RuleError,
    RuleFile, SchemaKey, Verdict,
)
from rules_plugins._frontmatter import FrontmatterError, load_yaml, split_frontmatter

from ._lenient import (
    IMPORTER_RANKS, Document, dedupe, enabled, enabled_globally, imported_rule, invalid, read_document,
    split_globs,
)
from .cline import describe, finish, kind_name, kind_of, list_flat, off_rule, off_verdicts, stream_keys, walk_up

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
    return [ImporterInfo(NAME, default=True, summary=summary)]


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
        return _sticky(folder, base=directory, source="project", group=ORDER_IMPORTS, offset=offset)
    return []


def _user(context: DiscoveryContext, home: str) -> list[RuleFile | RuleError]:
    found: list[RuleFile | RuleError] = []
    common: dict[str, Any] = {"accept": _is_rule_name, "base": context.cwd, "source": "global",
                              "group": ORDER_GLOBAL}
    for index, family in enumerate(FAMILIES):
        found += list_flat(context, NAME, os.path.join(home, family, "rules"), scope=f"0{index}", **common)
    for offset, config in CONFIGS:
        agent_dir = os.path.join(home, config, "agent")
        rules = os.path.join(agent_dir, "rules")
        found += list_flat(context, NAME, rules, rank_offset=offset, scope="0", **common)
        found += _sticky(agent_dir, base=context.cwd, source="global", group=ORDER_GLOBAL, offset=offset)
    return found


def _sticky(folder: str, *, base: str, source: str, group: int, offset: int) -> list[RuleFile | RuleError]:
    path = os.path.join(folder, "RULES.md")
    kind = kind_of(path, NAME)
    if isinstance(kind, RuleError):
        return [kind]
    if kind != "file":
        return []
    order = (group, IMPORTER_RANKS[NAME] + offset, "1", "RULES.md")  # after the folder's rules
    return [RuleFile(path, folder, "RULES.md", base, NAME, STICKY, source, order)]  # type: ignore[arg-type]


def _is_rule_name(name: str) -> bool:
    return not name.startswith(".") and name.endswith((".md", ".mdc"))


@hookimpl
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema not in (NAME, STICKY):
        return None
    document = _read(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (document,))
    data = {_camel(str(key)): value for key, value in document.data.items()}
    description = describe(rule_file, data, document.body)
    if isinstance(description, ParseResult):
        return description
    kept = {"description": description, "body": document.body, "extra": stream_keys(data)}
    if rule_file.schema == STICKY:
        if not document.body.strip():
            return off_rule(rule_file, "RULES.md is empty, and oh-my-pi skips an empty RULES.md", **kept)
        return finish(imported_rule(rule_file, always_apply=True, **kept))
    switch = data.get("enabled")
    if switch is not None and type(switch) is not bool:
        return invalid(rule_file, f"enabled must be true or false, got {switch!r}; write enabled: false, "
                                  "unquoted")
    activation = _activation(rule_file, data)
    if isinstance(activation, ParseResult):
        return activation
    if switch is False:
        return off_rule(rule_file, "enabled: false (oh-my-pi skips this rule)", **kept)
    if not document.body.strip():
        return off_rule(rule_file, "the body is empty, and oh-my-pi skips rules without content", **kept)
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
        return invalid(rule_file, f"trigger is {data.get('trigger')!r}; use one of {', '.join(TRIGGERS)}")
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
    if value is None:
        return ()
    if isinstance(value, str):
        return split_globs(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return dedupe(value)
    if isinstance(value, list):
        return invalid(rule_file, 'globs entries must be glob strings; quote each one, e.g. - "src/**"')
    return invalid(rule_file, f"globs must be a glob string or a list of them, got {kind_name(value)}")


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    return off_verdicts(rule, (NAME, STICKY))


# -- oh-my-pi's frontmatter dialect -------------------------------------------------------------

_KEY_LINE = re.compile(r"^([\w-]+):\s*(.*)$")
_PLAIN_VALUE = re.compile(r"^(\s*[A-Za-z_][\w-]*:\s+)(\S.*?)(\s*)$")
_EXPLICIT_START = tuple("\"'[{|>!&*#")
_FLOW_START = tuple("\"'[{")


def _read(rule_file: RuleFile, text: str) -> Document | RuleError:
    """Strict YAML first. When it fails, read it as oh-my-pi does — tab indents, values
    holding ': ', unquoted globs such as ``globs: *.ts`` — but only when no line would be
    lost doing so; anything else stays the strict parser's yaml-syntax error."""
    document = read_document(rule_file, text)
    if not isinstance(document, RuleError):
        return document
    try:
        split = split_frontmatter(text)
    except FrontmatterError:
        return document  # an unterminated block is damage, not a dialect
    if split.yaml_text is None:
        return document
    data = _recover(split.yaml_text)
    return document if data is None else Document(MappingProxyType(data), split.body, True)


def _recover(yaml_text: str) -> dict[str, Any] | None:
    repaired = yaml_text.replace("\t", "  ")
    for candidate in (repaired, _quote_ambiguous(repaired)):
        if candidate is None or candidate == yaml_text:
            continue
        try:
            loaded = load_yaml(candidate)
        except FrontmatterError:
            continue
        if isinstance(loaded, dict):
            return loaded
    data: dict[str, Any] = {}
    list_key: str | None = None  # a key with no value, whose '- item' lines follow
    for line in yaml_text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _KEY_LINE.match(line)
        if match is not None and match.group(1) not in data:
            data[match.group(1)] = value = _fallback_value(match.group(2))
            list_key = match.group(1) if value is None else None
        elif list_key is not None and stripped.startswith("- "):
            data[list_key] = [*(data[list_key] or []), _fallback_value(stripped[2:])]
        else:
            return None  # an indented, duplicate or stray line would be lost
    values = [v for value in data.values() for v in (value if isinstance(value, list) else [value])]
    return None if any(v is _BROKEN for v in values) else data


_BROKEN = object()


def _fallback_value(text: str) -> Any:
    """One value on its own: YAML when it parses, else the raw text (oh-my-pi's reading)."""
    raw = text.strip()
    if raw and not raw.startswith(("'", '"')):
        raw = re.sub(r"[ \t]+#.*$", "", raw)  # a trailing comment, as YAML would drop it
    if not raw:
        return None
    try:
        value = load_yaml(raw)
    except FrontmatterError:
        # A broken list or quote is damage, not an unquoted glob.
        return _BROKEN if raw.startswith(_FLOW_START) else raw
    return raw if isinstance(value, dict) else value


def _quote_ambiguous(yaml_text: str) -> str | None:
    """``description: Use when: editing`` → its value double-quoted (oh-my-pi's repair)."""
    lines, changed = [], False
    for line in yaml_text.split("\n"):
        match = _PLAIN_VALUE.match(line)
        if match and ": " in match.group(2) and not match.group(2).startswith(_EXPLICIT_START):
            line = f"{match.group(1)}{json.dumps(match.group(2), ensure_ascii=False)}{match.group(3)}"
            changed = True
        lines.append(line)
    return "\n".join(lines) if changed else None


def _camel(key: str) -> str:
    """oh-my-pi reads ``always-apply`` as ``alwaysApply``."""
    return re.sub(r"-([a-z])", lambda m: m.group(1).upper(), key)
