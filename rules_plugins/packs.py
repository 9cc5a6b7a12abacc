"""Rule packs: folders of rule files shipped by installed distributions (docs/packs.md).

A distribution declares an entry point in the group ``pi_rules.rules``; its value names a
package folder (``module:folder``, or a module whose own folder holds the files). The
manager asks this plugin (``pack_plugins``) for one source plugin per entry point and
registers each under the entry point's name, so ``-p no:NAME``, ``[plugins] block`` and
``pi-rules plugins`` treat a pack like any plugin. A pack is data: its folder is found with
the import system's finders, never by importing the distribution's code.

Pack rules are global rules (CONTRACT §6): trust-independent, globs relative to the
working directory, listed after the project's rules (cwd, ancestors, nested, imports) and
before ``~/.pi/agent/rules``. A file's format follows its name: ``*.mdc`` is a Cursor rule,
``*.instructions.md`` a Copilot instructions file, any other ``*.md`` a native rule.
"""

from __future__ import annotations

import dataclasses
import importlib.machinery
import os
import stat
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

from rules_core import hookimpl
from rules_core.discovery.containment import Containment, Unresolved
from rules_core.discovery.listing import list_rule_files
from rules_core.model import ORDER_PACKS, DiscoveryContext, RuleError, RuleFile

GROUP = "pi_rules.rules"
BOUND_LABEL = "the pack folder"
# (suffix, schema, characters the id stem drops): the first suffix a name ends with decides.
# The schemas belong to the built-in importers and the native schema; blocking one (say
# -p no:cursor) leaves its pack files unparsed, reported as such.
_FORMATS = (
    (".instructions.md", "copilot", len(".instructions.md")),
    (".mdc", "cursor", len(".mdc")),
    (".md", "v1", len(".md")),
)
_BROKEN_LINK = "broken symbolic link; point it at an existing file in the pack or delete it"
_NOT_REGULAR = "not a regular file (FIFO, socket or device); rule files must be plain files"


class EntryPointLike(Protocol):
    """What a pack needs of an ``importlib.metadata.EntryPoint``."""

    name: str
    value: str

    @property
    def module(self) -> str: ...

    @property
    def attr(self) -> str: ...


@dataclass(frozen=True)
class PackInfo:
    """A registered pack as ``pi-rules plugins`` shows it: ``folder`` is empty and
    ``problem`` says why when the entry point names no folder."""

    name: str
    value: str
    folder: str
    problem: str


class RulePack:
    """One pack's source plugin, registered under its entry point's name."""

    def __init__(self, name: str, value: str, module: str, attr: str, origin: str, *, clash: str = "") -> None:
        self.name = name
        self.value = value
        self.origin = origin
        self._module = module
        self._attr = attr
        self._clash = clash
        self._folder: tuple[str, str] | None = None

    def folder(self) -> tuple[str, str]:
        """``(folder, "")`` or ``("", problem)``; resolved once (an installed pack does not
        move while a process runs)."""
        if self._folder is None:
            self._folder = ("", self._clash) if self._clash else _resolve(self._module, self._attr)
        return self._folder

    @hookimpl
    def pi_rules_sources(self, context: DiscoveryContext) -> list[RuleFile | RuleError]:
        folder, problem = self.folder()
        if problem:
            return [RuleError("source-unreadable", f"{GROUP}:{self.name}", self._fix(problem), self._registered)]
        listed = list_rule_files(
            folder, accept=_is_rule_file, plugin=self.name, schema="v1", source="global",
            base=context.cwd, group=ORDER_PACKS, scope=self.name, context=context,
        )
        bound = Containment(folder, BOUND_LABEL)
        return [_checked(item, bound, self.name) if isinstance(item, RuleFile) else item for item in listed]

    @property
    def _registered(self) -> str:
        return f"pack:{self.name}" if self._clash else self.name

    def _fix(self, problem: str) -> str:
        return (f"rule pack {self.name!r} from {self.origin} ({self.name} = {self.value}): {problem}; "
                f"its rules are not loaded — reinstall or fix the distribution, or block it with "
                f"-p no:{self._registered}")


def pack_plugins(
    entry_points: Iterable[EntryPointLike], taken: Callable[[str], bool], origin: Callable[[Any], str],
) -> list[tuple[str, RulePack]]:
    """The manager's call: ``(name, plugin)`` for each pack entry point. A pack whose name
    another plugin already has is registered as ``pack:NAME`` and only reports the clash
    (blocking the name would block both)."""
    plugins: list[tuple[str, RulePack]] = []
    for ep in entry_points:
        label = origin(ep)
        module, attr = _reference(ep)
        if taken(ep.name):
            clash = (f"the name {ep.name!r} is already a plugin's, so blocking it would block both; "
                     "rename the entry point")
            plugins.append((f"pack:{ep.name}", RulePack(ep.name, ep.value, module, attr, label, clash=clash)))
        else:
            plugins.append((ep.name, RulePack(ep.name, ep.value, module, attr, label)))
    return plugins


def _reference(ep: EntryPointLike) -> tuple[str, str]:
    """``(module, attr)``; a value that is no object reference at all gives ``("", "")``,
    which resolving reports, because parsing it raises and the manager must not."""
    try:
        return ep.module, ep.attr or ""
    except (ValueError, AttributeError):
        return "", ""


def registered_packs(plugins: Iterable[tuple[str, object]]) -> list[PackInfo]:
    """The packs among ``(name, plugin)`` pairs (``pm.list_name_plugin()``), by name."""
    infos = []
    for name, plugin in plugins:
        if isinstance(plugin, RulePack):
            folder, problem = plugin.folder()
            infos.append(PackInfo(name=name, value=plugin.value, folder=folder, problem=problem))
    return sorted(infos, key=lambda info: info.name)


def _is_rule_file(name: str) -> bool:
    return name.endswith(".md") or name.endswith(".mdc")


def _checked(rule_file: RuleFile, bound: Containment, plugin: str) -> RuleFile | RuleError:
    """The file with its format's schema and id stem; a symbolic link is followed only
    while it stays inside the pack folder (the listing never enters linked folders)."""
    if os.path.islink(rule_file.path):
        found = bound.resolve(rule_file.path)
        if found is None:
            return RuleError("read-failure", rule_file.path, _BROKEN_LINK, plugin)
        if isinstance(found, Unresolved):
            return RuleError("read-failure", rule_file.path, found.message, plugin)
        if not stat.S_ISREG(found[1].st_mode):
            return RuleError("read-failure", rule_file.path, _NOT_REGULAR, plugin)
    name = rule_file.relative_path.rsplit("/", 1)[-1]
    for suffix, schema, cut in _FORMATS:
        if name.endswith(suffix):
            stem = name[:-cut] or name
            return dataclasses.replace(rule_file, schema=schema, id_stem=stem)
    return rule_file  # unreachable: the listing accepts only the suffixes above


def _resolve(module: str, attr: str) -> tuple[str, str]:
    """The folder ``module:attr`` names, found with ``PathFinder`` one dotted part at a
    time, so no ``__init__`` runs (``importlib.util.find_spec`` would import the parents)."""
    parts = module.split(".")
    if not module or not all(part.isidentifier() for part in parts):
        return "", "the value is not a module name; write module:folder, as pi_rules_pack_x:rules"
    try:
        spec = importlib.machinery.PathFinder.find_spec(parts[0])
        for depth, part in enumerate(parts[1:], start=1):
            if spec is None or not spec.submodule_search_locations:
                break
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[: depth + 1]), list(spec.submodule_search_locations))
    except Exception as exc:  # a finder on sys.path may fail any way; the pack just does not load
        return "", f"the module {module} cannot be looked up ({type(exc).__name__}: {exc})"
    if spec is None or (len(parts) > 1 and spec.name != module):
        return "", f"no module {module} is installed where Python looks (sys.path)"
    if spec.submodule_search_locations:
        base = list(spec.submodule_search_locations)[0]
    elif spec.origin and os.path.isabs(spec.origin):
        base = os.path.dirname(spec.origin)
    else:
        return "", f"the module {module} has no folder on disk (built in, frozen or zipped)"
    steps = attr.split(".") if attr else []
    if not all(step.isidentifier() for step in steps):
        return "", f"{attr!r} is not a folder name inside {module}; write module:folder"
    folder = os.path.realpath(os.path.join(base, *steps))
    if not os.path.isdir(folder):
        return "", f"the folder {folder} does not exist; the distribution must ship it as package data"
    return folder, ""
