"""The built-ins are registered from a generated table and imported on first use (issue 30).

The table must say exactly what pluggy finds in each module — otherwise a hook would be
missing or called with the wrong arguments — so it is compared with what pluggy registers
for the real module, plugin by plugin; and a fresh process must import a built-in's module
only once one of its hooks is called.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pluggy
import pytest

from rules_core.plugins import hookspecs, lazy
from rules_core.plugins.manager import BUILTIN_PLUGINS, RulesPluginManager, make_plugin_manager

ROOT = Path(__file__).resolve().parents[2]


def _registered(plugin: object, name: str) -> dict[str, list[tuple[Any, ...]]]:
    """hook name -> what pluggy keeps of each implementation the plugin registered."""
    pm = RulesPluginManager()
    pm.add_hookspecs(hookspecs)
    pm.register(plugin, name=name)
    found: dict[str, list[tuple[Any, ...]]] = {}
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            found.setdefault(caller.name, []).append(
                (impl.plugin_name, impl.argnames, impl.wrapper, impl.hookwrapper, impl.optionalhook,
                 impl.tryfirst, impl.trylast, dict(impl.opts)))
    return found


def test_the_table_is_what_generating_it_again_writes():
    text = Path(lazy.__file__).with_name("_table.py").read_text(encoding="utf-8")
    assert text == lazy.generate(BUILTIN_PLUGINS), "the table is stale: run python -m rules_core.plugins.make_table"


@pytest.mark.parametrize("name", sorted(BUILTIN_PLUGINS))
def test_each_built_in_registers_from_the_table_as_its_module_does(name):
    module_path, entries = lazy.table()[name]
    assert module_path == BUILTIN_PLUGINS[name]

    from_table = _registered(lazy.stand_in(module_path, entries), name)
    from_module = _registered(importlib.import_module(module_path), name)

    assert from_table == from_module


def test_every_built_in_has_a_row_and_the_manager_registers_stand_ins():
    assert sorted(lazy.table()) == sorted(BUILTIN_PLUGINS)
    assert sum(len(entries) for _, entries in lazy.table().values()) > len(BUILTIN_PLUGINS)  # rows are not empty
    pm = make_plugin_manager(entry_points=False)
    for name, module_path in BUILTIN_PLUGINS.items():
        plugin = pm.get_plugin(name)
        assert plugin is not sys.modules.get(module_path)
        assert plugin.__name__ == module_path and os.path.isfile(plugin.__file__)


def test_a_stand_in_calls_the_real_implementation_and_reaches_its_other_names():
    stand = lazy.stand_in(*lazy.table()["packs"])
    assert stand.pack_plugins is importlib.import_module("rules_plugins.packs").pack_plugins

    answers = []
    for plugin in (lazy.stand_in(*lazy.table()["tokens"]), importlib.import_module("rules_plugins.tokens")):
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        pm.register(plugin, name="tokens")
        answers.append(pm.hook.pi_rules_estimate_tokens(text="one two three " * 40))
    assert answers[0] == answers[1] and answers[0] > 0


def test_a_stale_row_says_how_to_regenerate():
    stand = lazy.stand_in("rules_plugins.tokens", [("pi_rules_no_such_hook", (), {})])
    with pytest.raises(lazy.StaleTableError, match="python -m rules_core.plugins.make_table"):
        stand.pi_rules_no_such_hook()


_DRIVER = (
    "import json, sys\n"
    "from rules_core.plugins.manager import BUILTIN_PLUGINS, make_plugin_manager\n"
    "pm = make_plugin_manager(entry_points=False)\n"
    "before = sorted(p for p in BUILTIN_PLUGINS.values() if p in sys.modules)\n"
    "tokens = pm.hook.pi_rules_estimate_tokens(text='one two three')\n"
    "after = sorted(p for p in BUILTIN_PLUGINS.values() if p in sys.modules)\n"
    "print(json.dumps({'before': before, 'after': after, 'tokens': tokens}))\n"
)


def test_a_fresh_manager_imports_a_module_only_when_its_hook_is_called(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    env.update({"PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    done = subprocess.run([sys.executable, "-c", _DRIVER], env=env, capture_output=True, text=True, check=True)
    run = json.loads(done.stdout)

    assert run["before"] == []
    assert run["tokens"]  # the hook answered: the module was imported to run it
    assert run["after"] and set(run["after"]) < set(BUILTIN_PLUGINS.values())
