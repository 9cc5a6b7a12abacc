"""The plugin framework: built-ins are named plugins that can be blocked or replaced."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import rules_core.plugins.hookspecs as hookspecs
from rules_core import SchemaKey, hookimpl, list_plugins, make_plugin_manager
from rules_hosts.cli import main
from rules_core.plugins.manager import BUILTIN_PLUGINS, PluginLoadError
from rules_core.rule_tests.pytest_plugin import rule_text

DOCS = Path(__file__).parent.parent.parent / "docs" / "plugins.md"


def test_every_builtin_is_a_named_plugin():
    pm = make_plugin_manager(entry_points=False, env={})
    infos = {i.name: i for i in list_plugins(pm)}
    assert set(BUILTIN_PLUGINS) <= set(infos)
    assert infos["native"].origin == "builtin"
    assert infos["native"].hooks == ("pi_rules_sources",)
    assert infos["markdown"].hooks == ("pi_rules_render",)


@pytest.mark.parametrize("name", sorted(BUILTIN_PLUGINS))
def test_each_builtin_can_be_blocked(name):
    pm = make_plugin_manager([name], entry_points=False, env={})
    assert name not in {i.name for i in list_plugins(pm)}


def test_env_var_blocks_plugins_too():
    pm = make_plugin_manager(entry_points=False, env={"PI_RULES_DISABLE_PLUGINS": " global , tools"})
    names = {i.name for i in list_plugins(pm)}
    assert "global" not in names and "tools" not in names and "native" in names


def test_blocking_the_native_source_removes_cwd_rules(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(globs=["a"])})
    rule_project.write_global({"g.md": rule_text(globs=["a"])})
    discovery = rule_project.engine(blocked=["native"]).discover(str(rule_project.cwd))
    assert [r.id for r in discovery.rules] == ["g"]


def test_third_party_firstresult_impl_wins_over_builtin(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(alwaysApply=True)})

    class Plain:
        @hookimpl
        def pi_rules_render(self, kind, data):
            if kind == "section":
                return "RULES: " + ",".join(o.rule.id for o in data["active"]) + "\n"
            return None

    evaluation = rule_project.engine(plugins=[("plain", Plain())]).evaluate(rule_project.facts())
    assert evaluation.section == "RULES: a\n"


def test_third_party_token_estimate_replaces_the_builtin(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text("four words in body", alwaysApply=True)})

    class Words:
        @hookimpl
        def pi_rules_estimate_tokens(self, text):
            return len(text.split())

    evaluation = rule_project.engine(plugins=[("words", Words())]).evaluate(rule_project.facts())
    assert evaluation.budget_used == 4


def test_schema_keys_hook_extends_the_strict_schema_and_blocking_restores_unknown_key(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(globs=["src/**"], team="payments")})

    def team(value):
        if not isinstance(value, str):
            raise ValueError("team must be a string")
        return value.lower()

    class Teams:
        @hookimpl
        def pi_rules_schema_keys(self, schema):
            return [SchemaKey("team", team)] if schema == "v1" else []

    rule = rule_project.engine(plugins=[("teams", Teams())]).discover(str(rule_project.cwd)).rules[0]
    assert rule.extra["team"] == "payments"
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [e.kind for e in errors] == ["unknown-key"]


def test_plugin_condition_key_counts_as_trigger_and_must_be_judged(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(weekday="friday")})

    class Weekday:
        @hookimpl
        def pi_rules_schema_keys(self, schema):
            return [SchemaKey("weekday", str, is_condition=True)]

        @hookimpl
        def pi_rules_match(self, rule, context):
            if "weekday" not in rule.extra:
                return []
            return [__import__("rules_core").Verdict("weekday", True, ("weekday friday",), 60)]

    outcome = rule_project.engine(plugins=[("weekday", Weekday())]).evaluate(rule_project.facts()).outcomes[0]
    assert (outcome.status, outcome.reasons) == ("active", ("weekday friday",))


def test_a_crashing_source_plugin_is_reported_and_others_still_load(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(globs=["a"])})

    class Broken:
        @hookimpl
        def pi_rules_sources(self, context):
            raise RuntimeError("boom")

    discovery = rule_project.engine(plugins=[("broken", Broken())]).discover(str(rule_project.cwd))
    assert [r.id for r in discovery.rules] == ["a"]
    assert [(e.kind, e.plugin) for e in discovery.errors] == [("source-unreadable", "broken")]
    assert "-p no:broken" in discovery.errors[0].message


def test_a_crashing_matcher_fails_only_its_rule_visibly(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(globs=["a"])})

    class Broken:
        @hookimpl
        def pi_rules_match(self, rule, context):
            raise ValueError("bad")

    outcome = rule_project.engine(plugins=[("broken", Broken())]).evaluate(rule_project.facts(touched=["a"])).outcomes[0]
    assert outcome.status == "inactive"
    assert "matcher 'broken' failed: ValueError: bad" in outcome.reasons


def test_misspelled_hook_fails_loudly():
    class Typo:
        @hookimpl
        def pi_rules_sourcez(self, context):
            return []

    with pytest.raises(PluginLoadError, match="pi_rules_sourcez"):
        make_plugin_manager(entry_points=False, env={}, extra=[("typo", Typo())])


def test_debug_env_traces_hook_calls_to_stderr(rule_project, capsys, monkeypatch):
    rule_project.write({".pi/rules/a.md": rule_text(globs=["a"])})
    monkeypatch.setenv("PI_RULES_DEBUG", "1")
    monkeypatch.setenv("HOME", str(rule_project.home))
    assert main(["--cwd", str(rule_project.cwd), "list"]) == 0
    err = capsys.readouterr().err
    assert "pi_rules_sources" in err and "pi_rules_parse" in err


def test_plugins_command_lists_name_origin_and_hooks(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^native\s+builtin\s+pi_rules_sources$", out, re.M)
    assert main(["--json", "plugins"]) == 0
    assert '"name": "schema-v1"' in capsys.readouterr().out


def test_cli_blocks_with_p_no_name(capsys, rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    assert main(["-p", "no:markdown", "plugins"]) == 0
    assert not re.search(r"^markdown ", capsys.readouterr().out, re.M)
    with pytest.raises(SystemExit):
        main(["-p", "markdown", "plugins"])


def test_docs_list_every_hook_with_its_exact_signature():
    doc = DOCS.read_text(encoding="utf-8")
    for name, function in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("pi_rules_"):
            continue
        params = ", ".join(inspect.signature(function).parameters)
        assert f"{name}({params})" in doc, f"docs/plugins.md does not document {name}({params})"


def test_testing_fixtures_give_hermetic_fresh_managers(plugin_manager):
    names = {i.name for i in list_plugins(plugin_manager)}
    assert names == set(BUILTIN_PLUGINS)
    assert plugin_manager is not make_plugin_manager(entry_points=False, env={})


def test_docs_table_maps_every_built_in_plugin_to_its_module():
    doc = DOCS.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z0-9-]+)` \| `([a-z0-9_.]+)` \|", doc, re.M))
    assert rows == dict(BUILTIN_PLUGINS)
