"""Building the plugin manager: built-ins, entry points, blocking, tracing.

Nothing is loaded at import time and there is no global manager: every caller gets a
fresh one from ``make_plugin_manager``, so tests never need monkeypatching.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import types
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import pluggy

from rules_core.plugins import hookspecs, lazy
from rules_core.deadline import DeadlineExceeded
from rules_core.plugins.entry_points import entry_points as kept_entry_points

if TYPE_CHECKING:
    import importlib_metadata

ENTRY_POINT_GROUP = "pi_rules"
PACK_GROUP = "pi_rules.rules"  # rule packs (docs/packs.md)
DISABLE_ENV = "PI_RULES_DISABLE_PLUGINS"
DEBUG_ENV = "PI_RULES_DEBUG"

# name -> module path: the plugins this distribution ships, named as data (as pytest's
# ``default_plugins``) and imported only when a manager is made — ``import rules_core``
# loads none of them. Each is registered under its own name, so it can be blocked
# (`-p no:NAME`) or replaced by an entry point of the same name.
BUILTIN_PLUGINS: Mapping[str, str] = {
    "native": "rules_plugins.native",
    "ancestors": "rules_plugins.ancestors",
    "nested": "rules_plugins.nested",
    "copilot": "rules_importers.copilot",
    "claude": "rules_importers.claude",
    "cursor": "rules_importers.cursor",
    "windsurf": "rules_importers.windsurf",
    "cline": "rules_importers.cline",
    "agents": "rules_importers.agents",
    "kiro": "rules_importers.kiro",
    "continue": "rules_importers.continue_rules",
    "roo": "rules_importers.roo",
    "amazonq": "rules_importers.amazonq",
    "junie": "rules_importers.junie",
    "augment": "rules_importers.augment",
    "zed": "rules_importers.zed",
    "trae": "rules_importers.trae",
    "agents-md": "rules_importers.agents_md",
    "claude-md": "rules_importers.claude_md",
    "gemini-md": "rules_importers.gemini_md",
    "skills": "rules_importers.skills",
    "global": "rules_plugins.global_rules",
    "packs": "rules_plugins.packs",  # rule packs: one source per `pi_rules.rules` entry point
    "schema-v1": "rules_plugins.schema_v1",
    "globs": "rules_plugins.match_globs",
    "tools": "rules_plugins.match_tools",
    "folder-scope": "rules_plugins.match_folder",
    "model": "rules_plugins.match_model",
    "branch": "rules_plugins.match_branch",
    "intent": "rules_plugins.intent",
    "agent-scope": "rules_plugins.agent_scope",
    "stream": "rules_plugins.stream",
    "scanner": "rules_plugins.scanner",
    "shell-paths": "rules_plugins.shell_paths",  # paths a shell command touches (docs/shell.md)
    "tokens": "rules_plugins.tokens",
    "markdown": "rules_plugins.markdown",
    "report": "rules_plugins.report",
    "check-formats": "rules_plugins.check_formats",
    # `check` warnings (docs/lint.md), one plugin per family so each can be blocked alone.
    "lint-budget": "rules_plugins.lint_budget",
    "lint-env": "rules_plugins.lint_env",
    "lint-globs": "rules_plugins.lint_globs",
    "glob-dialects": "rules_importers.dialects",  # `check` warning glob-dialect
    "lint-duplicates": "rules_plugins.lint_duplicates",
    "lint-formats": "rules_plugins.lint_formats",
    # Hosts: the tool tables of the agents we know, and the commands hosts add.
    "pi": "rules_hosts.pi.plugin",
    "claude-code": "rules_hosts.claude_code.plugin",
    "serve": "rules_hosts.plugins.serve",
    "mcp": "rules_hosts.plugins.mcp",
    "map": "rules_hosts.plugins.map",
    "stream-cli": "rules_hosts.plugins.stream_cli",
    "trust": "rules_hosts.plugins.trust",
    "rule-test": "rules_hosts.plugins.rule_test",  # `pi-rules test` (docs/testing-rules.md)
    "export": "rules_hosts.plugins.export",  # `pi-rules export` (docs/export.md)
    "previews": "rules_hosts.previews.plugin",  # --host codex|cursor|copilot|gemini|kiro|windsurf
    "eval": "rules_hosts.plugins.eval",  # `pi-rules eval` (docs/eval.md)
    "stats": "rules_hosts.plugins.stats",  # `pi-rules stats` (docs/stats.md)
}


@dataclass(frozen=True)
class PluginInfo:
    name: str
    origin: str  # "builtin" or "<distribution> <version>"
    hooks: tuple[str, ...]


# Where contained implementations report a fault: a list while the facade (hooks.Hooks)
# is calling, ``None`` otherwise (then the exception propagates, as pluggy's own does).
FAULTS: ContextVar[list[tuple[str, Exception]] | None] = ContextVar("pi_rules_faults", default=None)


class _Fault:
    """What a contained implementation returns when it raised: not ``None``, so a
    firstresult call stops there as pluggy's own would on an exception."""

    def __repr__(self) -> str:
        return "FAULT"


FAULT = _Fault()


_ABSENT = object()
# What pluggy accepts as a hook implementation (pluggy._manager._static_hook_attr).
_HOOKABLE = (types.FunctionType, staticmethod, classmethod, types.MethodType)
# Names the module type itself (or `object`) defines: their static look-up may be the type's.
_MODULE_TYPE_NAMES = frozenset(dir(types.ModuleType))


class RulesPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers which distribution each plugin came from and
    contains faults: every implementation is wrapped at registration so that, under the
    facade, one that raises is recorded and returns ``FAULT`` — the other implementations
    of a list hook still run, a firstresult call stops there, and none is called twice."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.origins: dict[str, str] = {}
        self._marker = f"{hookspecs.PROJECT_NAME}_impl"  # where pluggy's HookimplMarker keeps its options

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        # pluggy looks up every attribute of every plugin with `inspect.getattr_static`
        # (~1,500 per manager, most of the cost of making one). For a plain module that
        # lookup of a name the module type does not define is its `__dict__` entry, so a
        # value that cannot be a marked hook (a class, a constant, an imported module, an
        # unmarked function) is turned away here with the answer pluggy would give;
        # anything else, and every plugin that is not a plain module, takes pluggy's path.
        if type(plugin) is types.ModuleType and name not in _MODULE_TYPE_NAMES:
            value = plugin.__dict__.get(name, _ABSENT)
            if value is not _ABSENT and not isinstance(value, _HOOKABLE):
                return None
            if type(value) is types.FunctionType and self._marker not in value.__dict__:
                return None
        return super().parse_hookimpl_opts(plugin, name)

    def register(self, plugin: object, name: str | None = None) -> str | None:
        registered = super().register(plugin, name)
        if registered is not None:
            for caller in self.get_hookcallers(plugin) or []:
                for impl in caller.get_hookimpls():
                    if impl.plugin is plugin and not (impl.wrapper or impl.hookwrapper):
                        impl.function = _contained(impl.function, impl.plugin_name)
        return registered


def _contained(function: Callable[..., Any], plugin_name: str) -> Callable[..., Any]:
    @functools.wraps(function)
    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except DeadlineExceeded:
            raise  # not a fault of the plugin: the call's budget is spent (rules_core.deadline)
        except Exception as exc:
            sink = FAULTS.get()
            if sink is None:
                raise
            sink.append((plugin_name, exc))
            return FAULT

    return call


class PluginLoadError(Exception):
    """A third-party plugin could not be imported or implements an unknown hook."""


def blocked_from_env(env: Mapping[str, str]) -> set[str]:
    raw = env.get(DISABLE_ENV, "")
    return {name.strip() for name in raw.split(",") if name.strip()}


def make_plugin_manager(
    blocked: Iterable[str] = (),
    *,
    entry_points: bool = True,
    env: Mapping[str, str] | None = None,
    extra: Iterable[tuple[str, object]] = (),
) -> RulesPluginManager:
    """A fresh manager with the built-ins and (unless disabled) installed plugins.

    ``blocked`` names are never registered; ``PI_RULES_DISABLE_PLUGINS`` adds to them.
    An entry point with a built-in's name replaces that built-in. ``extra`` registers
    in-process plugins (tests, embedding hosts) after everything else.
    """
    env = os.environ if env is None else env
    pm = RulesPluginManager()
    pm.add_hookspecs(hookspecs)
    for name in set(blocked) | blocked_from_env(env):
        pm.set_blocked(name)

    third_party = _entry_points() if entry_points else []
    replaced = {ep.name for ep in third_party}
    for name, module_path in BUILTIN_PLUGINS.items():
        if name in replaced or pm.is_blocked(name):
            continue
        pm.register(_builtin(name, module_path), name=name)
    origins = pm.origins
    for ep in third_party:
        if pm.is_blocked(ep.name) or pm.has_plugin(ep.name):
            continue
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken install must say which plugin, not crash
            raise PluginLoadError(
                f"plugin {ep.name!r} from {_dist_label(ep)} failed to import: {exc}; "
                f"fix or uninstall it, or block it with -p no:{ep.name}"
            ) from exc
        pm.register(plugin, name=ep.name)
        origins[ep.name] = _dist_label(ep)
    if entry_points:
        _register_packs(pm)
    for name, plugin in extra:
        if not pm.is_blocked(name):
            pm.register(plugin, name=name)
            origins[name] = "in-process"
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginLoadError(f"{exc}; check the hook name against docs/plugins.md") from exc
    if env.get(DEBUG_ENV, "").strip() not in ("", "0"):
        _enable_tracing(pm)
    return pm


def _builtin(name: str, module_path: str) -> object:
    """The built-in as a stand-in from the generated table (its module imported on its first
    hook call, docs/performance.md), or the module itself where the table has no row for it."""
    row = lazy.table().get(name)
    if row is None or row[0] != module_path:
        return importlib.import_module(module_path)
    return lazy.stand_in(module_path, row[1])


def list_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Registered plugins sorted by name, with their origin and implemented hooks."""
    origins: Mapping[str, str] = getattr(pm, "origins", {})
    infos = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # blocked
            continue
        hooks = tuple(sorted(caller.name for caller in pm.get_hookcallers(plugin) or []))
        origin = "builtin" if name in BUILTIN_PLUGINS and name not in origins else origins.get(name, "in-process")
        infos.append(PluginInfo(name=name, origin=origin, hooks=hooks))
    return sorted(infos, key=lambda info: info.name)


def _register_packs(pm: RulesPluginManager) -> None:
    """Rule packs (docs/packs.md) are data, not code: the plugin registered as `packs`
    makes one source plugin per entry point of `pi_rules.rules`, registered under the
    entry point's name so blocking and listing treat it like any plugin."""
    wanted = [ep for ep in _pack_entry_points() if not pm.is_blocked(ep.name)]
    if not wanted:  # asked first: the `packs` module is imported only when a pack is installed
        return
    make = getattr(pm.get_plugin("packs"), "pack_plugins", None)
    if make is None:  # `packs` blocked, or replaced by a plugin that makes none
        return
    for name, plugin in make(wanted, pm.has_plugin, _dist_label):
        if not pm.is_blocked(name) and not pm.has_plugin(name):
            pm.register(plugin, name=name)
            pm.origins[name] = getattr(plugin, "origin", "in-process")


@functools.cache
def _pack_entry_points() -> tuple[importlib_metadata.EntryPoint, ...]:
    # Once per process: a pack is only ever listed, so a long-lived host pays the scan once.
    return tuple(_entry_points(PACK_GROUP))


def _entry_points(group: str = ENTRY_POINT_GROUP) -> list[importlib_metadata.EntryPoint]:
    # Kept across processes while nothing installed changes: reading every installed
    # distribution's metadata costs each hook process tens of milliseconds.
    eps = kept_entry_points(group, _read_group)
    # Sorted by name so loading order never depends on site-packages enumeration order.
    unique: dict[str, importlib_metadata.EntryPoint] = {}
    for ep in sorted(eps, key=lambda e: (e.name, _dist_label(e))):
        unique.setdefault(ep.name, ep)
    return list(unique.values())


def _read_group(group: str) -> Iterable[importlib_metadata.EntryPoint]:
    import importlib_metadata  # only when the kept list is stale: it is slow to import

    return importlib_metadata.entry_points(group=group)


def _dist_label(ep: importlib_metadata.EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def _enable_tracing(pm: pluggy.PluginManager) -> None:
    pm.trace.root.setwriter(lambda text: sys.stderr.write(f"pi-rules: {text}"))
    pm.enable_tracing()
