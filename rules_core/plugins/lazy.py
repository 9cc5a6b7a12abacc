"""Built-in plugins registered from a table, each module imported on its first hook call.

Importing all built-in plugin modules costs a fresh process tens of milliseconds before it
does any work, and ``--version``, ``help`` or a command that calls only a few hooks needs
few or none of them. ``_table.py`` names every hook implementation of every built-in
(its attribute, its argument names and its pluggy options); a stand-in module carries one
forwarding function per entry, so pluggy registers it exactly as it would the real module,
and the real module is imported the first time one of its forwarders is called.

The table is generated from the code: ``python -m rules_core.plugins.make_table`` rewrites it, and
``tests/suites/test_lazy_plugins.py`` fails when it differs from what pluggy finds in the
modules. Third-party entry points never take this path (their code is not ours to table).
"""

from __future__ import annotations

import importlib
import os
import types
from typing import Any, Callable, Iterable, Mapping

from rules_core.plugins import hookspecs

# (attribute, positional argument names, pluggy's hookimpl options)
Entry = tuple[str, tuple[str, ...], dict[str, Any]]

_MARKER = f"{hookspecs.PROJECT_NAME}_impl"  # where pluggy's HookimplMarker keeps the options
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_table.py")
_REGENERATE = "python -m rules_core.plugins.make_table"
# pluggy's hookimpl options when the marker is given none (HookimplMarker.__call__).
_DEFAULTS: Mapping[str, Any] = {"wrapper": False, "hookwrapper": False, "optionalhook": False,
                                "tryfirst": False, "trylast": False, "specname": None}
_UNSET = object()


class StaleTableError(RuntimeError):
    """The table names a hook implementation the module no longer has."""


def stand_in(module_path: str, entries: Iterable[Entry]) -> types.ModuleType:
    """A module object pluggy registers as it would ``module_path`` itself; any other
    attribute asked of it (``pack_plugins``, a constant) imports the real module."""
    stand = types.ModuleType(module_path)
    stand.__file__ = os.path.join(_ROOT, *module_path.split(".")) + ".py"
    loaded: list[types.ModuleType] = []

    def module() -> types.ModuleType:
        if not loaded:
            loaded.append(importlib.import_module(module_path))
        return loaded[0]

    def __getattr__(name: str) -> Any:  # PEP 562: only names the stand-in lacks come here
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(module(), name)

    stand.__getattr__ = __getattr__  # type: ignore[method-assign]
    for attr, argnames, opts in entries:
        setattr(stand, attr, _forwarder(module_path, attr, argnames, opts, module))
    return stand


def _forwarder(module_path: str, attr: str, argnames: tuple[str, ...], opts: Mapping[str, Any],
               module: Callable[[], types.ModuleType]) -> Callable[..., Any]:
    # pluggy reads the argument names from the function's code and checks that a wrapper is
    # a generator function, so each forwarder is compiled with the real one's signature.
    if not all(name.isidentifier() for name in (attr, *argnames)):
        raise StaleTableError(f"the plugin table has a bad name in {module_path}.{attr}; run {_REGENERATE}")
    target: list[Callable[..., Any]] = []

    def resolve() -> Callable[..., Any]:
        if not target:
            found = getattr(module(), attr, None)
            if found is None or _MARKER not in getattr(found, "__dict__", {}):
                raise StaleTableError(f"{module_path}.{attr} is no longer a hook implementation; run {_REGENERATE}")
            target.append(found)
        return target[0]

    params = ", ".join(argnames)
    wrapper = opts.get("wrapper") or opts.get("hookwrapper")
    body = f"return (yield from _resolve()({params}))" if wrapper else f"return _resolve()({params})"
    namespace: dict[str, Any] = {"_resolve": resolve}
    exec(f"def {attr}({params}):\n    {body}\n", namespace)  # noqa: S102 - names from our own table, checked above
    function = namespace[attr]
    function.__module__ = module_path
    function.__qualname__ = attr
    setattr(function, _MARKER, {**_DEFAULTS, **opts})
    return function


def table() -> Mapping[str, tuple[str, tuple[Entry, ...]]]:
    """name -> (module path, entries), as generated."""
    from rules_core.plugins._table import TABLE

    return TABLE


def describe(module: types.ModuleType) -> tuple[Entry, ...]:
    """What pluggy finds in ``module``: every attribute it would register as a hook
    implementation, with its positional argument names and options, sorted by attribute."""
    import pluggy
    from pluggy._hooks import varnames

    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    found = []
    for attr in dir(module):
        opts = pm.parse_hookimpl_opts(module, attr)
        if opts is not None:
            argnames, _ = varnames(getattr(module, attr))
            found.append((attr, tuple(argnames), dict(opts)))
    return tuple(sorted(found))


def generate(builtins: Mapping[str, str]) -> str:
    """The text of ``_table.py`` for the built-in plugins ``builtins`` (name -> module path):
    one line per implementation, options only where they differ from pluggy's defaults."""
    lines = []
    for name, path in builtins.items():
        lines.append(f"    {name!r}: ({path!r}, (")
        for attr, argnames, opts in describe(importlib.import_module(path)):
            changed = {key: value for key, value in opts.items() if _DEFAULTS.get(key, _UNSET) != value}
            lines.append(f"        ({attr!r}, {argnames!r}, {changed!r}),")
        lines.append("    )),")
    return (
        '"""Generated by `python -m rules_core.plugins.make_table` from the built-in plugins: do not edit.\n\n'
        "name -> (module path, ((attribute, argument names, hookimpl options other than the\n"
        'defaults), ...)); see lazy.py.\n"""\n\nfrom __future__ import annotations\n\nfrom typing import Any\n\n'
        "TABLE: dict[str, tuple[str, tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...]]] = {\n"
        + "\n".join(lines) + "\n}\n"
    )
