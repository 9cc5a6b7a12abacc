"""The settings files (CONTRACT §6, docs/configuration.md): reading, validation, merging
across the five levels, and what the engine does with them (disable, import, required
plugins, host tables, lint.ignore)."""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from rules_core import Engine, Facts
from rules_core.settings.load import (
    MAX_SETTINGS_BYTES,
    Settings,
    SettingsCache,
    filter_warnings,
    read_settings_text,
)
from rules_core.settings.parse import key_lines, parse_settings
from rules_core.model import RuleWarning
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

RULES = {
    ".pi/rules/style.md": rule_text("Style.", alwaysApply=True),
    ".pi/rules/legacy/old.md": rule_text("Old.", alwaysApply=True),
    ".pi/rules/legacy/older.md": rule_text("Older.", alwaysApply=True),
}


def write_project(project, text: str) -> Path:
    return project.write({".pi/rules.toml": text}) / ".pi" / "rules.toml"


def write_user(project, text: str) -> Path:
    return make_rules(project.home / ".config" / "pi-rules", {"config.toml": text}) / "config.toml"


def errors_of(settings: Settings) -> list[tuple[str, str]]:
    return [(e.kind, e.message) for e in settings.errors]


# -- parsing and validation ---------------------------------------------------------------


def test_every_key_is_read_from_a_valid_file():
    parsed = parse_settings(
        'max_tokens = 4000\noverflow = "index"\nimport = ["Copilot", "claude"]\ndisable = ["legacy/**"]\n'
        'attach = false\n[plugins]\nblock = ["cursor"]\nrequired = ["pi-rules-rulebook"]\n'
        '[lint]\nignore = ["dead-glob"]\n[hosts.claude-code]\nmax_tokens = 9000\n[hosts.claude-code.lint]\n'
        'ignore = ["size-cap"]\n', "/p/.pi/rules.toml")
    assert parsed.errors == ()
    assert dict(parsed.values) == {
        "max_tokens": 4000, "overflow": "index", "import": ("copilot", "claude"), "disable": ("legacy/**",),
        "attach": False, "plugins.block": ("cursor",), "plugins.required": ("pi-rules-rulebook",),
        "lint.ignore": ("dead-glob",),
    }
    assert dict(parsed.hosts["claude-code"]) == {"max_tokens": 9000, "lint.ignore": ("size-cap",)}


@pytest.mark.parametrize("text, line, suggestion", [
    ("max_token = 3\n", 1, "did you mean 'max_tokens'?"),
    ("\n# c\nmax-tokens = 3\n", 3, "did you mean 'max_tokens'?"),
    ("[plugin]\nblock = []\n", 1, "did you mean 'plugins'?"),
    ("[plugins]\nblocked = []\n", 2, "did you mean 'block'?"),
    ("block = []\n", 1, "did you mean 'plugins.block'?"),
    ("[hosts.pi]\nattatch = true\n", 2, "did you mean 'attach'?"),
    ("[lint]\nignored = []\n", 2, "did you mean 'ignore'?"),
])
def test_an_unknown_key_is_an_error_with_its_line_and_a_did_you_mean(text, line, suggestion):
    [error] = parse_settings(text, "/p/.pi/rules.toml").errors
    assert error.kind == "unknown-key" and error.path == "/p/.pi/rules.toml"
    assert error.message.startswith(f"line {line}: unknown key") and error.message.endswith(suggestion)


@pytest.mark.parametrize("text, fix", [
    ("max_tokens = 0\n", "write max_tokens = 4000"),
    ("max_tokens = \"4000\"\n", "write max_tokens = 4000"),
    ("max_tokens = true\n", "write max_tokens = 4000"),
    ("max_tokens = 1.5\n", "write max_tokens = 4000"),
    ('overflow = "indx"\n', "did you mean 'index'?"),
    ('import = "copilot, claude"\n', 'write import = ["copilot", "claude"]'),
    ("import = [1]\n", 'write import = ["copilot", "claude"]'),
    ('attach = "off"\n', "must be true or false"),
    ('disable = "style"\n', 'write disable = ["legacy-style", "drafts/**"]'),
    ('disable = ["./"]\n', "neither a rule id nor a glob that compiles"),
    ("[plugins]\nblock = [\"\"]\n", 'block = ["copilot"] under [plugins]'),
    ("plugins = 3\n", "write [plugins]"),
    ("hosts = 3\n", "write [hosts.claude-code]"),
    ("[hosts]\npi = 3\n", "write [hosts.pi]"),
])
def test_a_bad_value_is_an_invalid_value_error_and_is_not_used(text, fix):
    parsed = parse_settings(text, "/p/.pi/rules.toml")
    [error] = parsed.errors
    assert error.kind == "invalid-value" and error.message.startswith("line ") and fix in error.message
    assert dict(parsed.values) == {} and all(not v for v in parsed.hosts.values())


def test_broken_toml_is_a_read_failure_naming_the_line_never_a_traceback():
    [error] = parse_settings("max_tokens = 4000\noverflow = \n", "/p/.pi/rules.toml").errors
    assert error.kind == "read-failure" and "line 2" in error.message and "not valid TOML" in error.message


def test_absurd_nesting_is_an_error_not_a_recursion_crash():
    assert parse_settings("a = " + "[" * 5000 + "]" * 5000, "/p").errors[0].kind == "read-failure"


@hsettings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('[]."\'=#\n abcdefhilmnopstuxk_-0123456789{},')), max_size=200))
def test_whatever_the_text_parsing_never_raises(text):
    parsed = parse_settings(text, "/p/.pi/rules.toml")
    assert all(e.path == "/p/.pi/rules.toml" for e in parsed.errors)


def test_key_lines_skip_multi_line_strings_and_follow_tables():
    text = 'x = """\nmax_tokens = 1\n"""\n[plugins]\nblock = []\n[hosts."claude-code"]\nmax_tokens = 3\n'
    assert key_lines(text) == {"x": 1, "plugins": 4, "plugins.block": 5, "hosts.claude-code": 6,
                               "hosts.claude-code.max_tokens": 7}


# -- reading ----------------------------------------------------------------------------


def test_a_file_over_64_kib_is_an_error_and_is_never_read_whole(tmp_path, monkeypatch):
    big = tmp_path / "config.toml"
    big.write_text("# x\n" * (MAX_SETTINGS_BYTES // 2))
    real_read, asked = os.read, []
    monkeypatch.setattr(os, "read", lambda fd, n: (asked.append(n), real_read(fd, n))[1])
    error = read_settings_text(str(big), follow=True)
    assert error.kind == "read-failure" and "64 KiB" in error.message
    assert sum(asked) <= MAX_SETTINGS_BYTES + 1


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    error = read_settings_text(str(fifo), follow=True)
    assert error.kind == "read-failure" and "not a regular file" in error.message


def test_not_utf8_is_a_read_failure(tmp_path):
    (tmp_path / "c.toml").write_bytes(b"max_tokens = 1 # \xff\n")
    assert "not valid UTF-8" in read_settings_text(str(tmp_path / "c.toml"), follow=True).message


def test_user_file_honours_xdg_config_home_and_ignores_a_relative_one(rule_project):
    xdg = make_rules(rule_project.home / "xdg" / "pi-rules", {"config.toml": "max_tokens = 5\n"}).parent
    write_user(rule_project, "max_tokens = 6\n")
    for env, expected in (({"XDG_CONFIG_HOME": str(xdg)}, 5), ({"XDG_CONFIG_HOME": "rel"}, 6), ({}, 6)):
        cache = SettingsCache(env, str(rule_project.home), lambda cwd: None)
        assert cache.settings(str(rule_project.cwd), True).value("max_tokens").value == expected


def test_project_file_is_read_from_the_working_directory_only_never_an_ancestor(rule_project):
    write_project(rule_project, "max_tokens = 5\n")
    sub = rule_project.cwd / "packages" / "a"
    sub.mkdir(parents=True)
    engine = rule_project.engine()
    assert engine.settings(str(sub)).value("max_tokens").value == 2000
    assert engine.settings(str(rule_project.cwd)).value("max_tokens").value == 5


def test_an_untrusted_project_file_is_not_read_the_user_file_is(rule_project):
    write_project(rule_project, "max_tokens = 5\n")
    write_user(rule_project, "max_tokens = 6\n")
    settings = rule_project.engine().settings(str(rule_project.cwd), trusted=False)
    assert settings.value("max_tokens").value == 6
    assert [(s.level, s.state) for s in settings.states] == [("project", "untrusted"), ("user", "read")]


def test_a_settings_link_leading_out_of_the_project_is_refused(rule_project, tmp_path):
    outside = tmp_path / "elsewhere.toml"
    outside.write_text("max_tokens = 5\n")
    (rule_project.cwd / ".pi").mkdir()
    os.symlink(outside, rule_project.cwd / ".pi" / "rules.toml")
    settings = rule_project.engine().settings(str(rule_project.cwd))
    assert settings.value("max_tokens").value == 2000
    assert settings.errors[0].kind == "read-failure" and "leads outside" in settings.errors[0].message


def test_an_edit_is_seen_by_the_next_evaluation_of_a_long_lived_engine(rule_project):
    rule_project.write(RULES)
    path = write_project(rule_project, 'disable = ["style"]\n')
    engine = rule_project.engine()
    facts = rule_project.facts()
    assert [o.rule.id for o in engine.evaluate(facts).active] == ["old", "older"]
    path.write_text('disable = ["legacy/**"]\nmax_tokens = 99\n')
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    assert [o.rule.id for o in engine.evaluate(facts).active] == ["style"]
    assert engine.settings(str(rule_project.cwd)).value("max_tokens").value == 99


def test_an_unchanged_file_is_not_read_again(rule_project, monkeypatch):
    write_project(rule_project, "max_tokens = 5\n")
    engine = rule_project.engine()
    engine.settings(str(rule_project.cwd))
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (opened.append(path), real_open(path, *a, **k))[1])
    assert engine.settings(str(rule_project.cwd)).value("max_tokens").value == 5
    assert opened == []


# -- precedence -------------------------------------------------------------------------

LEVELS = {  # key: (command line, environment, project file, user file, default), each distinct in level
    "max_tokens": (11, "22", "33", "44", 2000),
    "overflow": ("index", "drop", '"index"', '"drop"', "drop"),
    "import": ("none", "copilot", '["claude"]', '["cursor"]', "all"),
}
EXPECTED = {
    "max_tokens": (11, 22, 33, 44, 2000),
    "overflow": ("index", "drop", "index", "drop", "drop"),
    "import": ("none", ("copilot",), ("claude",), ("cursor",), "all"),
}
LEVEL_NAMES = ("command-line", "environment", "project", "user", "default")


@pytest.mark.parametrize("key", sorted(LEVELS))
@pytest.mark.parametrize("highest", range(5))
def test_precedence_command_line_env_project_user_default(rule_project, key, highest):
    option, env, project, user, _ = LEVELS[key]
    rule_project.env = {"PI_RULES_" + key.upper(): env} if highest <= 1 else {}
    if highest <= 2:
        write_project(rule_project, f"{key} = {project}\n")
    if highest <= 3:
        write_user(rule_project, f"{key} = {user}\n")
    engine = rule_project.engine()
    if highest == 0:
        engine.options[key] = EXPECTED[key][0]
    value = engine.settings(str(rule_project.cwd)).value(key)
    assert (value.value, value.level) == (EXPECTED[key][highest], LEVEL_NAMES[highest])


def test_an_unreadable_environment_value_falls_back_to_the_files(rule_project):
    write_project(rule_project, "max_tokens = 33\n")
    rule_project.env = {"PI_RULES_MAX_TOKENS": "abc", "PI_RULES_OVERFLOW": "sideways"}
    settings = rule_project.engine().settings(str(rule_project.cwd))
    assert settings.value("max_tokens").value == 33 and settings.value("overflow").level == "default"
    assert errors_of(settings)[0][0] == "invalid-value" and "PI_RULES_OVERFLOW" in errors_of(settings)[0][1]


def test_a_host_table_beats_its_files_top_level_and_the_project_beats_the_user(rule_project):
    write_project(rule_project, "max_tokens = 3000\n[hosts.claude-code]\nmax_tokens = 8000\n")
    write_user(rule_project, "[hosts.pi]\nmax_tokens = 500\nattach = false\n")
    settings = rule_project.engine().settings(str(rule_project.cwd))
    assert settings.value("max_tokens", "claude-code").value == 8000
    assert settings.value("max_tokens", "claude-code").origin == "project .pi/rules.toml [hosts.claude-code]"
    assert settings.value("max_tokens", "pi").value == 3000  # the project file, whatever the user's table
    assert settings.value("max_tokens").value == 3000
    assert settings.value("attach", "pi").value is False and settings.value("attach").value is True


def test_list_keys_add_up_across_levels_each_item_keeping_its_origin(rule_project):
    rule_project.env = {"PI_RULES_DISABLE_PLUGINS": "cline"}
    write_project(rule_project, '[plugins]\nblock = ["cursor"]\n')
    write_user(rule_project, '[plugins]\nblock = ["cursor", "roo"]\n')
    items = rule_project.engine().settings(str(rule_project.cwd)).items("plugins.block")
    assert [(i, v.level) for i, v in items] == [("cline", "environment"), ("cursor", "project"), ("roo", "user")]


# -- what the engine does with them ------------------------------------------------------


@pytest.mark.parametrize("entry", ["style", "rule://style", "style.md", "*.md"])
def test_a_disabled_rule_never_loads_and_says_which_file_disabled_it(rule_project, entry):
    rule_project.write(RULES)
    write_project(rule_project, f'disable = ["{entry}"]\n')
    engine = rule_project.engine()
    evaluation = engine.evaluate(rule_project.facts())
    style = next(o for o in evaluation.outcomes if o.rule.id == "style")
    assert (style.status, style.reasons) == ("inactive", (f'disabled in .pi/rules.toml ("{entry}")',))
    assert "style" not in {o.rule.id for o in evaluation.active}
    assert engine.read_rule(rule_project.facts(), "style.md").rule is None
    [why] = [e for e in engine.explain(rule_project.facts(), "a.py").entries if e.rule.id == "style"]
    assert why.reasons == (f'disabled in .pi/rules.toml ("{entry}")',)


def test_the_user_file_disables_by_glob_and_is_named_from_home(rule_project):
    rule_project.write(RULES)
    write_user(rule_project, 'disable = ["legacy/**"]\n')
    evaluation = rule_project.engine().evaluate(rule_project.facts())
    assert {o.rule.id: o.reasons for o in evaluation.outcomes if o.status == "inactive"} == {
        "old": ('disabled in ~/.config/pi-rules/config.toml ("legacy/**")',),
        "older": ('disabled in ~/.config/pi-rules/config.toml ("legacy/**")',),
    }


def test_a_host_table_disables_for_that_host_only(rule_project):
    rule_project.write(RULES)
    write_project(rule_project, '[hosts.claude-code]\ndisable = ["style"]\n')
    engine = rule_project.engine()
    assert "style" in {o.rule.id for o in engine.evaluate(rule_project.facts(host="pi")).active}
    cc = engine.evaluate(rule_project.facts(host="claude-code"))
    assert next(o for o in cc.outcomes if o.rule.id == "style").reasons == (
        'disabled in .pi/rules.toml [hosts.claude-code] ("style")',)


def test_import_from_a_file_chooses_the_importers_and_names_an_unknown_one(rule_project):
    rule_project.write({".cursorrules": "Cursor.\n", ".clinerules": "Cline.\n"})
    write_project(rule_project, 'import = ["cline"]\n')
    engine = rule_project.engine()
    assert {r.file.plugin for r in engine.discover(str(rule_project.cwd)).rules} == {"cline"}
    write_project(rule_project, '\nimport = ["clin"]\n')
    discovery = engine.discover(str(rule_project.cwd))
    [error] = [e for e in discovery.errors if "importer" in e.message]
    assert error.kind == "invalid-value" and error.path.endswith(".pi/rules.toml")
    assert error.message.startswith("line 2: unknown importer 'clin' in import — did you mean 'cline'?")
    assert {r.file.plugin for r in discovery.rules} >= {"cline", "cursor"}  # the default set, as the env does


def test_an_import_setting_brings_back_what_the_host_reads_itself(rule_project):
    rule_project.write({"CLAUDE.md": "# Memory\n\nBe brief.\n"})
    engine = rule_project.engine()
    facts = rule_project.facts(host="claude-code")
    assert all(o.status == "inactive" for o in engine.evaluate(facts).outcomes)
    write_project(rule_project, 'import = "all"\n')
    assert any(o.status == "active" for o in rule_project.engine().evaluate(facts).outcomes)


def test_a_missing_required_plugin_is_an_error_naming_the_distribution(rule_project):
    write_project(rule_project, '[plugins]\nrequired = ["copilot", "pluggy", "pi-rules-absent"]\n')
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [(e.kind, e.message.split(",")[0]) for e in errors] == [
        ("invalid-value", "line 2: plugins.required names 'pi-rules-absent'")]
    assert "pip install pi-rules-absent" in errors[0].message


def test_a_required_plugin_that_is_blocked_says_so(rule_project):
    write_project(rule_project, '[plugins]\nrequired = ["copilot"]\n')
    engine = Engine(fresh_manager(blocked=["copilot"]), home=str(rule_project.home), env={})
    [error] = engine.discover(str(rule_project.cwd)).errors
    assert "is blocked" in error.message


def test_lint_ignore_silences_warning_codes(rule_project):
    write_project(rule_project, '[hosts.nobody]\nattach = false\n[lint]\nignore = ["unknown-host"]\n')
    settings = rule_project.engine().settings(str(rule_project.cwd))
    assert settings.lint_ignore == frozenset({"unknown-host"})
    assert rule_project.engine().discover(str(rule_project.cwd)).warnings == ()
    write_project(rule_project, '[hosts.nobody]\nattach = false\n')
    [warning] = rule_project.engine().discover(str(rule_project.cwd)).warnings
    assert warning.code == "unknown-host"
    kept = RuleWarning("dead-glob", "/p", "m")
    assert filter_warnings([RuleWarning("unknown-host", "/p", "m"), kept], settings.lint_ignore) == (kept,)


def test_settings_errors_come_first_in_every_discovery_and_never_cost_the_rules(rule_project):
    rule_project.write(RULES)
    write_project(rule_project, "max_tokens = [\n")
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert discovery.errors[0].kind == "read-failure" and len(discovery.rules) == 3


def test_facts_given_explicitly_are_not_changed_by_the_settings(rule_project):
    write_project(rule_project, "max_tokens = 5\n")
    evaluation = rule_project.engine().evaluate(Facts(cwd=str(rule_project.cwd)))
    assert evaluation.facts.max_tokens == 2000  # the engine takes facts as given; hosts build them


def test_a_settings_file_that_is_a_directory_or_unreadable_is_reported(rule_project):
    (rule_project.cwd / ".pi" / "rules.toml").mkdir(parents=True)
    [error] = rule_project.engine().settings(str(rule_project.cwd)).errors
    assert error.kind == "read-failure" and "not a regular file" in error.message
    if os.geteuid() == 0:
        return  # root reads a chmod 000 file anyway
    (rule_project.cwd / ".pi" / "rules.toml").rmdir()
    path = write_project(rule_project, "max_tokens = 5\n")
    path.chmod(0)
    try:
        [error] = rule_project.engine().settings(str(rule_project.cwd)).errors
        assert error.kind == "read-failure"
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_settings_are_frozen_values(rule_project):
    settings = rule_project.engine().settings(str(rule_project.cwd))
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.env = {}  # type: ignore[misc]
