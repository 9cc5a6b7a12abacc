"""Applying the settings (docs/configuration.md): which importers run, which rules are
disabled, which required plugins are missing, which warnings are silenced, which plugins
are blocked before the manager is made.

Functions of a ``Settings`` and what the plugins declare; the engine calls them for each
discovery and evaluation, hosts call ``plugin_blocks`` before making a plugin manager.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import os
import re
from typing import Callable, Iterable, Sequence

import pluggy

from rules_core.discovery.git import find_git_root
from rules_core.globs.matching import GlobError, Glob, compile_glob
from rules_core.discovery.imports import IMPORT_ENV, Selected, select_importers
from rules_core.model import Discovery, ImporterInfo, Rule, RuleError, RuleWarning
from rules_core.settings.load import Settings, SettingsFile, Value, filter_warnings
from rules_core.settings.parse import PLUGIN

RULE_URL = "rule://"


def importer_selection(settings: Settings, host: str | None, declared: Sequence[ImporterInfo]) -> Selected:
    """The importers the ``import`` setting enables, and an error per unknown name (the
    default set stays on then, as ``PI_RULES_IMPORT`` has always done)."""
    value = settings.value("import", host)
    if value.level == "environment":  # its own messages, exactly as before settings existed
        return select_importers(settings.env.get(IMPORT_ENV), declared)
    defaults = frozenset(info.name for info in declared if info.default)
    if value.value in ("all", "none"):
        return (defaults if value.value == "all" else frozenset()), ()
    known = sorted(info.name for info in declared)
    unknown = [name for name in value.value if name not in known]
    if not unknown:
        return frozenset(value.value), ()
    close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
    message = (
        f"unknown importer {', '.join(repr(n) for n in unknown)} in import"
        f"{' — did you mean ' + repr(close[0]) + '?' if close else ''}; known importers: "
        f"{', '.join(known) or 'none installed'} (or \"all\" / \"none\"); using the default set until it is fixed"
    )
    return defaults, (_error(settings, value, "import", host, message),)


def project_and_user_importers(
    settings: Settings, host: str | None, declared: Sequence[ImporterInfo]
) -> tuple[Selected, frozenset[str]]:
    """(the importers for the project's files, with errors; those for the user's own files).

    Project settings narrow only what the project brought (issue 26): the user's own
    (global) imported rules follow the user's levels alone, so a project's ``import =
    "none"`` cannot un-import them; a project's ``[plugins] block`` of an importer stops
    that importer's project files only, and a block of any other plugin is an error of the
    project file (the plugin also judges the user's own rules)."""
    names, errors = importer_selection(settings, host, declared)
    users_own = importer_selection(_without_project(settings), host, declared)[0]
    known = {info.name for info in declared}
    refused = []
    for name, value in _project_blocks(settings, host):
        if name in known:
            names = names - {name}
        else:
            refused.append(_error(settings, value, "plugins.block", host, (
                f"plugins.block names {name!r}{_table(value, ' in ')}: a project may block only importers (their "
                "project files are then not read); any other plugin also judges your own global rules, so only "
                "your own config file (or -p no:NAME) may block it — narrow the project's rules with disable instead")))
    return (names, (*errors, *refused)), users_own


def _without_project(settings: Settings) -> Settings:
    return dataclasses.replace(settings, files=tuple(f for f in settings.files if f.level != "project"))


def _project_blocks(settings: Settings, host: str | None) -> list[tuple[str, Value]]:
    return [(name, Value(name, f.level, f.shown, table)) for f in settings.files if f.level == "project"
            for name, table in f.items("plugins.block", host)]


def import_chosen(settings: Settings, host: str | None) -> bool:
    """Whether some level chose the importers: then a host's agent reading a file itself
    no longer leaves it out (``pi_rules_host_reads``), as with ``PI_RULES_IMPORT``."""
    return settings.value("import", host).level != "default"


def disabled_reason(settings: Settings, host: str | None) -> Callable[[Rule], str | None]:
    """``rule`` → "disabled in <file> (<entry>)" when an entry of ``disable`` names its id
    (or ``rule://<id>``) or a glob matches its reference path; else ``None``. A project
    file's entries never disable the user's own (global) rules (issue 26)."""
    entries = [(entry, _disabling(entry, value)) for entry, value in settings.items("disable", host)]
    if not entries:
        return lambda rule: None
    users_own = [(entry, _disabling(entry, value))
                 for entry, value in _without_project(settings).items("disable", host)]

    def reason(rule: Rule) -> str | None:
        for entry, (rule_id, glob, why) in (users_own if rule.source == "global" else entries):
            if rule.id == rule_id or (glob is not None and rule.relative_path and glob.match(rule.relative_path)):
                return why
        return None

    return reason


def _disabling(entry: str, value: Value) -> tuple[str, Glob | None, str]:
    rule_id = entry[len(RULE_URL):] if entry.startswith(RULE_URL) else entry
    glob = None
    if not entry.startswith(RULE_URL):
        try:
            glob = compile_glob(entry)
        except GlobError:
            pass  # reported when the file was parsed; the entry still names an id
    return rule_id, glob, f"disabled in {value.source}{_table(value)} ({json.dumps(entry)})"


def plugin_blocks(settings: Settings, host: str | None) -> tuple[str, ...]:
    """The plugins the user's file's ``[plugins] block`` names (``-p no:NAME`` and
    ``PI_RULES_DISABLE_PLUGINS`` reach ``make_plugin_manager`` on their own). A project
    file's blocks never reach the manager: see ``project_and_user_importers``."""
    return tuple(dict.fromkeys(name for f in settings.files if f.level == "user"
                               for name, _ in f.items("plugins.block", host)))


def required_errors(settings: Settings, host: str | None, pm: pluggy.PluginManager) -> tuple[RuleError, ...]:
    """An ``invalid-value`` error for each name in ``[plugins] required`` that no
    registered plugin and no installed distribution has (as pytest's ``required_plugins``)."""
    wanted = settings.items("plugins.required", host)
    if not wanted:
        return ()
    present = {_normal(name) for name, plugin in pm.list_name_plugin() if plugin is not None}
    present |= {_normal(origin.rsplit(" ", 1)[0]) for origin in getattr(pm, "origins", {}).values()}
    errors = []
    for name, value in wanted:
        if _normal(name) in present or (not pm.is_blocked(name) and _installed(_normal(name))):
            continue
        if pm.is_blocked(name):
            why = "is blocked (-p no:NAME, PI_RULES_DISABLE_PLUGINS or [plugins] block); unblock it"
        else:
            why = (f"is not installed (no plugin or distribution of that name); install the distribution "
                   f"(pip install {name}) or remove it from the list")
        message = f"plugins.required names {name!r}{_table(value, ' in ')}, which {why}"
        errors.append(_error(settings, value, "plugins.required", host, message))
    return tuple(errors)


def host_warnings(settings: Settings, hosts: Iterable[str]) -> tuple[RuleWarning, ...]:
    """An ``unknown-host`` warning for each ``[hosts.<name>]`` table no plugin declares:
    its keys apply to nothing (a typo, or a host plugin not installed)."""
    known = sorted(hosts)
    found = []
    for settings_file in settings.files:
        for name in settings_file.hosts:
            if name in known:
                continue
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            line = settings_file.line("hosts", name)
            found.append(RuleWarning("unknown-host", settings_file.path, (
                f"{'line ' + str(line) + ': ' if line else ''}[hosts.{name}] names no known host"
                f"{' — did you mean ' + repr(close[0]) + '?' if close else ''}; its keys apply to nothing "
                f"(known hosts: {', '.join(known) or 'none'})"
            ), PLUGIN, line or None))
    return tuple(found)


def with_settings(discovery: Discovery, settings: Settings, host: str | None, pm: pluggy.PluginManager,
                  hosts: Iterable[str], cwd: str = "", ignore: frozenset[str] | None = None) -> Discovery:
    """``discovery`` with the settings' own errors first and its warnings filtered by
    ``[lint] ignore`` (``ignore``: the call's, already resolved). Never raises: a fault
    here is one error, the rules untouched."""
    try:
        errors = (*settings.errors, *required_errors(settings, host, pm), *discovery.errors)
        warnings = filter_warnings((*host_warnings(settings, hosts), *discovery.warnings),
                                   settings.lint_ignore_for(host) if ignore is None else ignore, cwd)
    except Exception as exc:  # a bug of ours must not cost the rules
        why = f"pi-rules internal error applying the settings ({type(exc).__name__}: {exc}) — please report this"
        fault = RuleError("source-unreadable", "settings", why, PLUGIN)
        return dataclasses.replace(discovery, errors=(fault, *discovery.errors))
    return dataclasses.replace(discovery, errors=errors, warnings=warnings)


def project_bound(home: str | None) -> Callable[[str], str | None]:
    """The folder a project's settings file may be reached from, for a caller without an
    engine (the CLI, before it makes the plugin manager): the git root, as discovery
    takes it — never ``/`` or a folder holding the home folder — else ``None`` (cwd)."""

    found: dict[str, str | None] = {}  # git runs once per working directory

    def bound(cwd: str) -> str | None:
        if cwd not in found:
            root = find_git_root(cwd)
            top = os.path.normpath(root) if root is not None else "/"
            inner = os.path.normpath(home) if home and os.path.isabs(home) else ""
            held = top == "/" or (bool(inner) and (inner == top or inner.startswith(top + "/")))
            found[cwd] = None if held else root
        return found[cwd]

    bound.forget = found.clear  # type: ignore[attr-defined]  # a long-lived host asks git again
    return bound


def _error(settings: Settings, value: Value, key: str, host: str | None, message: str) -> RuleError:
    """An ``invalid-value`` error on the file (or option) ``value`` came from, with the line."""
    settings_file = _file_of(settings, value)
    if settings_file is None:
        return RuleError("invalid-value", value.source or key, message, PLUGIN)
    where = ("hosts", host or "", *key.split(".")) if value.table else tuple(key.split("."))
    line = settings_file.line(*where)
    return RuleError("invalid-value", settings_file.path, f"line {line}: {message}" if line else message, PLUGIN,
                     line or None)


def _file_of(settings: Settings, value: Value) -> SettingsFile | None:
    return next((f for f in settings.files if f.level == value.level and f.shown == value.source), None)


def _table(value: Value, joiner: str = " ") -> str:
    return f"{joiner}[{value.table}]" if value.table else ""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503: how pip compares names


@functools.lru_cache(maxsize=256)
def _installed(name: str) -> bool:
    # Remembered for the process: the plugin manager does not load a distribution
    # installed after it was made either, so "missing" stays true until a restart.
    import importlib_metadata  # here: slow to import, needed only for `[plugins] required`

    try:
        importlib_metadata.distribution(name)
    except Exception:
        return False
    return True

