"""``rules_importers.simple.SimpleFormat`` (docs/plugins.md, "Add your own format in a few
lines"): a third party's format defined in a few lines, registered like any plugin."""

from __future__ import annotations

import types
from typing import Any, Mapping

import pytest

from rules_core.plugins.manager import list_plugins
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text
from rules_importers.simple import ALWAYS, ON_DEMAND, Activation, SimpleFormat

from importer_helpers import record  # noqa: F401 - pytest fixture
from importer_helpers import discover, text_with_front


def acme_activation(data: Mapping[str, Any], problems: list[str]) -> Activation:
    """Acme's own key: ``when: always | asked | <comma globs>``."""
    when = data.get("when", "always")
    if not isinstance(when, str):
        problems.append("when must be text; write when: always")
        return ALWAYS
    if when == "always":
        return ALWAYS
    if when == "asked":
        return ON_DEMAND
    return Activation(globs=tuple(g.strip() for g in when.split(",")))


ACME = SimpleFormat(
    name="acme",
    summary="Acme: .acme/rules/**/*.md, .acmerules, ~/.acme/rules (global)",
    folders=(".acme/rules",),
    files={".acmerules": "acmerules"},
    home_folders=(".acme/rules",),
    home_files={".acme/global.md": "acme-global"},
    activation=acme_activation,
)


def acme(project, **kwargs) -> dict:
    return {r.id: r for r in discover(project, plugins=[("acme", ACME)], **kwargs).rules if r.file.plugin == "acme"}


def acme_errors(project) -> list:
    return [e for e in discover(project, plugins=[("acme", ACME)]).errors if e.plugin == "acme"]


# -- a third party's format, registered as the plugin object itself --------------------------


def test_a_format_instance_is_a_plugin_with_the_three_hooks(rule_project):
    pm = fresh_manager(plugins=[("acme", ACME)])
    (info,) = [p for p in list_plugins(pm) if p.name == "acme"]
    assert info.hooks == ("pi_rules_importers", "pi_rules_parse", "pi_rules_sources")
    assert info.origin == "in-process"


def test_folder_files_keep_their_stems_and_fixed_files_name_their_folder(rule_project):
    rule_project.write({".acme/rules/style.md": "Use tabs.\n", ".acme/rules/deep/api.md": "# API\n\nVersion it.\n",
                        ".acmerules": "One file.\n"})
    found = discover(rule_project, plugins=[("acme", ACME)]).rules
    assert [(r.id, r.relative_path, r.source) for r in found] == [
        ("api", "deep/api.md", "project"), ("style", "style.md", "project"),
        ("project/acmerules", ".acmerules", "project")]
    assert all(r.always_apply and r.load == "pinned" and r.match == "touched" for r in found)


def test_frontmatter_keys_choose_the_activation_and_the_body_stays_verbatim(rule_project):
    rule_project.write({
        ".acme/rules/a.md": text_with_front("when: always\ndescription: Always\n", "\nBody A.\n"),
        ".acme/rules/b.md": text_with_front("when: asked\ndescription: Ask for it\n"),
        ".acme/rules/c.md": text_with_front("when: 'src/**/*.py'\n"),
        ".acme/rules/d.md": "# D heading\n\nNo frontmatter.\n",
    })
    found = acme(rule_project)
    assert found["a"].always_apply and found["a"].body == "\nBody A.\n" and found["a"].description == "Always"
    assert found["b"].load == "on-demand" and not found["b"].always_apply
    assert found["c"].globs == ("src/**/*.py",) and found["c"].load == "pinned"
    assert found["d"].always_apply and found["d"].description == "D heading"


def test_a_bad_value_is_an_invalid_value_error_and_loads_nothing(rule_project):
    rule_project.write({".acme/rules/x.md": text_with_front("when: 3\n"),
                        ".acme/rules/y.md": text_with_front("description: [1]\n")})
    assert acme(rule_project) == {}
    assert sorted((e.kind, e.message) for e in acme_errors(rule_project)) == [
        ("invalid-value", "description must be text, got a list; write description: \"…\" in quotes"),
        ("invalid-value", "when must be text; write when: always")]


def test_broken_yaml_is_yaml_syntax_naming_the_file(rule_project):
    rule_project.write({".acme/rules/x.md": "---\nwhen: [always\n---\nBody.\n"})
    [error] = acme_errors(rule_project)
    assert error.kind == "yaml-syntax" and error.path.endswith(".acme/rules/x.md")


def test_the_peers_agents_key_scopes_an_imported_rule(rule_project):
    rule_project.write({".acme/rules/x.md": text_with_front("agents: [reviewer]\n")})
    engine = rule_project.engine(plugins=[("acme", ACME)])
    by_id = {o.rule.id: o for o in engine.evaluate(rule_project.facts(agent="reviewer")).outcomes}
    assert by_id["x"].status == "active"
    by_id = {o.rule.id: o for o in engine.evaluate(rule_project.facts()).outcomes}
    assert by_id["x"].status == "inactive"


def test_an_empty_file_is_listed_but_never_injected(rule_project):
    rule_project.write({".acme/rules/empty.md": "\n  \n"})
    engine = rule_project.engine(plugins=[("acme", ACME)])
    [outcome] = [o for o in engine.evaluate(rule_project.facts()).outcomes if o.rule.id == "empty"]
    assert outcome.status == "inactive" and outcome.reasons == ("turned off: the file is empty",)


def test_a_binary_file_is_a_read_failure(rule_project):
    rule_project.write({".acme/rules/x.md": "a\x00b\n"})
    [error] = acme_errors(rule_project)
    assert error.kind == "read-failure" and "NUL bytes" in error.message


def test_a_fixed_file_that_is_a_folder_is_a_read_failure(rule_project):
    (rule_project.cwd / ".acmerules").mkdir()
    [error] = acme_errors(rule_project)
    assert error.kind == "read-failure" and "is a directory" in error.message


def test_a_flat_format_reads_no_subfolder(rule_project):
    flat = SimpleFormat(name="flat", summary="", folders=(".flat",), recursive=False)
    rule_project.write({".flat/a.md": "A\n", ".flat/sub/b.md": "B\n", ".flat/c.txt": "C\n"})
    found = discover(rule_project, plugins=[("flat", flat)]).rules
    assert [r.id for r in found if r.file.plugin == "flat"] == ["a"]


# -- home files, trust and PI_RULES_IMPORT -----------------------------------------------------


def test_home_files_are_global_rules_that_apply_always_whatever_their_keys(rule_project):
    rule_project.write({".acme/rules/p.md": "P\n"})
    home = rule_project.home
    (home / ".acme" / "rules").mkdir(parents=True)
    (home / ".acme" / "rules" / "mine.md").write_text(text_with_front("when: asked\n"))
    (home / ".acme" / "global.md").write_text("Be brief.\n")
    found = acme(rule_project)
    assert [(i, r.source, r.always_apply) for i, r in found.items()] == [
        ("p", "project", True), ("mine", "global", True), ("~/acme-global", "global", True)]


def test_home_activation_reads_home_files_when_the_format_asks(rule_project):
    fmt = SimpleFormat(name="acme", summary="", home_folders=(".acme/rules",), activation=acme_activation,
                       home_activation=acme_activation)
    (rule_project.home / ".acme" / "rules").mkdir(parents=True)
    (rule_project.home / ".acme" / "rules" / "mine.md").write_text(text_with_front("when: asked\n"))
    [rule] = [r for r in discover(rule_project, plugins=[("acme", fmt)]).rules if r.file.plugin == "acme"]
    assert rule.load == "on-demand"


def test_an_untrusted_project_reads_only_the_home_files(rule_project):
    rule_project.write({".acme/rules/p.md": "P\n", ".acmerules": "F\n"})
    (rule_project.home / ".acme").mkdir()
    (rule_project.home / ".acme" / "global.md").write_text("Be brief.\n")
    assert list(acme(rule_project, trusted=False)) == ["~/acme-global"]


def test_import_none_reads_nothing_not_even_a_stat(rule_project, record):
    rule_project.write({".acme/rules/p.md": "P\n", ".acmerules": "F\n"})
    (rule_project.home / ".acme").mkdir()
    (rule_project.home / ".acme" / "global.md").write_text("Be brief.\n")
    rule_project.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert acme(rule_project) == {}
    assert [p for p in record if ".acme" in p] == []


def test_a_third_party_format_is_selected_by_name_and_on_by_default(rule_project):
    rule_project.write({".acmerules": "F\n"})
    rule_project.env["PI_RULES_IMPORT"] = "cursor"
    assert acme(rule_project) == {}
    rule_project.env["PI_RULES_IMPORT"] = "acme"
    assert list(acme(rule_project)) == ["project/acmerules"]


def test_a_format_off_by_default_is_read_only_when_named(rule_project):
    quiet = SimpleFormat(name="quiet", summary="", files={".quiet": "quiet"}, default=False)
    rule_project.write({".quiet": "Q\n"})
    assert [r for r in discover(rule_project, plugins=[("quiet", quiet)]).rules if r.file.plugin == "quiet"] == []
    rule_project.env["PI_RULES_IMPORT"] = "quiet"
    assert [r.id for r in discover(rule_project, plugins=[("quiet", quiet)]).rules] == ["project/quiet"]


# -- a module that binds the format's hooks, and the fault wrapper ------------------------------


def module_plugin(fmt: SimpleFormat) -> types.ModuleType:
    """What a built-in module looks like: ``pi_rules_importers = FORMAT.pi_rules_importers``…"""
    module = types.ModuleType("acme_rules")
    module.FORMAT = fmt  # type: ignore[attr-defined]
    module.pi_rules_importers = fmt.pi_rules_importers  # type: ignore[attr-defined]
    module.pi_rules_sources = fmt.pi_rules_sources  # type: ignore[attr-defined]
    module.pi_rules_parse = fmt.pi_rules_parse  # type: ignore[attr-defined]
    return module


def test_a_module_binding_the_methods_is_the_same_plugin(rule_project):
    rule_project.write({".acmerules": "F\n"})
    found = discover(rule_project, plugins=[("acme", module_plugin(ACME))]).rules
    assert [r.id for r in found] == ["project/acmerules"]
    # pluggy keeps the trylast marker of a bound method: a firstresult parse by another
    # plugin still wins over the format's own.
    hooks = fresh_manager(plugins=[("acme", module_plugin(ACME))]).hook.pi_rules_parse.get_hookimpls()
    (impl,) = [i for i in hooks if i.plugin_name == "acme"]
    assert impl.trylast


@pytest.mark.parametrize("plugin", [lambda fmt: fmt, module_plugin], ids=["instance", "module"])
def test_a_crashing_format_is_contained_and_named(rule_project, plugin):
    def broken(data: Mapping[str, Any], problems: list[str]) -> Activation:
        raise RuntimeError("boom")

    fmt = SimpleFormat(name="acme", summary="", folders=(".acme/rules",), activation=broken)
    rule_project.write({".acme/rules/x.md": "Body.\n", ".pi/rules/ok.md": rule_text(alwaysApply=True)})
    found = discover(rule_project, plugins=[("acme", plugin(fmt))])
    assert [r.id for r in found.rules] == ["ok"]  # the rest of discovery stands
    [error] = [e for e in found.errors if e.path.endswith("x.md")]
    assert error.kind == "read-failure" and "acme" in error.message and "boom" in error.message


def test_rules_from_a_format_evaluate_like_any_rule(rule_project):
    rule_project.write({".acme/rules/py.md": text_with_front("when: 'src/**/*.py'\n"), "src/a.py": ""})
    engine = rule_project.engine(plugins=[("acme", ACME)])
    outcomes = {o.rule.id: o for o in engine.evaluate(rule_project.facts(touched=["src/a.py"])).outcomes}
    assert outcomes["py"].status == "active" and outcomes["py"].reasons == ("touched src/a.py",)
    outcomes = {o.rule.id: o for o in engine.evaluate(rule_project.facts()).outcomes}
    assert outcomes["py"].status == "inactive"
