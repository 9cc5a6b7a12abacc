"""Registration finds exactly the hooks pluggy itself would find, in modules too.

The manager turns most module attributes away before pluggy's generic look-up (the cost
of making a manager); these tests pin that a plugin module registers the same hook
implementations, with the same options, as under a plain ``pluggy.PluginManager``.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pluggy
import pytest

import rules_core.plugins.hookspecs as hookspecs
from rules_core import list_plugins, make_plugin_manager
from rules_core.plugins.manager import PluginLoadError
from rules_core.rule_tests.pytest_plugin import rule_text

MODULE = '''
    import os  # an imported module is no hook
    from rules_core import hookimpl

    LIMIT = 3

    class Helper:  # a marked method of a class in the module is not the module's hook
        @hookimpl
        def pi_rules_sources(self, context):
            raise AssertionError("never registered")

    def pi_rules_schema_keys(schema):  # unmarked: not a hook, even with a hook's name
        raise AssertionError("never registered")

    @hookimpl(specname="pi_rules_estimate_tokens", tryfirst=True)
    def count_words(text):
        return len(text.split())

    @hookimpl(wrapper=True)
    def pi_rules_render(kind, data):
        result = yield
        return result.upper() if kind == "section" and result else result

    @staticmethod
    @hookimpl(trylast=True)
    def pi_rules_exclude(rule, facts):
        return None
'''


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> ModuleType:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module(name)


def _hooks(pm: pluggy.PluginManager, plugin: object) -> set[tuple[str, str, tuple[bool, ...]]]:
    found = set()
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin:
                options = (impl.tryfirst, impl.trylast, impl.wrapper, impl.hookwrapper, impl.optionalhook)
                found.add((caller.name, impl.function.__name__, options))
    return found


def test_a_plugin_module_registers_what_pluggy_would(tmp_path, monkeypatch):
    module = _module(tmp_path, monkeypatch, "words_plugin", MODULE)
    pm = make_plugin_manager(entry_points=False, env={}, extra=[("words", module)])
    plain = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    plain.add_hookspecs(hookspecs)
    plain.register(module, name="words")

    assert _hooks(pm, module) == _hooks(plain, module) == {
        ("pi_rules_estimate_tokens", "count_words", (True, False, False, False, False)),
        ("pi_rules_render", "pi_rules_render", (False, False, True, False, False)),
        ("pi_rules_exclude", "pi_rules_exclude", (False, True, False, False, False)),
    }
    info = {i.name: i for i in list_plugins(pm)}["words"]
    assert info.hooks == ("pi_rules_estimate_tokens", "pi_rules_exclude", "pi_rules_render")


def test_every_builtin_registers_what_pluggy_would():
    pm = make_plugin_manager(entry_points=False, env={})
    for name, plugin in pm.list_name_plugin():
        plain = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        plain.add_hookspecs(hookspecs)
        plain.register(plugin, name=name)
        assert _hooks(pm, plugin) == _hooks(plain, plugin), name


def test_a_plugin_module_under_another_name_is_called(tmp_path, monkeypatch, rule_project):
    module = _module(tmp_path, monkeypatch, "words_plugin_calls", MODULE)
    rule_project.write({".pi/rules/a.md": rule_text("four words in body", alwaysApply=True)})

    evaluation = rule_project.engine(plugins=[("words", module)]).evaluate(rule_project.facts())

    assert evaluation.budget_used == 4  # `count_words`, found through its specname
    assert evaluation.section == evaluation.section.upper() and "FOUR WORDS IN BODY" in evaluation.section


@pytest.mark.parametrize("hook_name", ["pi_rules_sourcez", "sources"])
def test_a_marked_module_function_naming_no_hook_fails_loudly(tmp_path, monkeypatch, hook_name):
    source = f"""
        from rules_core import hookimpl

        @hookimpl
        def {hook_name}(context):
            return []
    """
    module = _module(tmp_path, monkeypatch, f"typo_plugin_{hook_name}", source)

    with pytest.raises(PluginLoadError, match=hook_name):
        make_plugin_manager(entry_points=False, env={}, extra=[("typo", module)])
