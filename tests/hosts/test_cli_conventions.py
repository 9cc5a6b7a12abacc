"""CLI conventions people expect (issue 15, item 5): global options before or after the
command, bare `pi-rules` prints help, `--version`, and `pi-rules init`."""

from __future__ import annotations

import json
import os
import re
import tomllib
from importlib import metadata

import pytest

from rules_core.settings.parse import parse_settings
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.cli import init
from rules_hosts.cli import main
from suite_helpers import run_cli


@pytest.fixture
def project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(rule_project.home / ".config"))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_IMPORT", "PI_RULES_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    rule_project.write({
        ".pi/rules/style.md": rule_text("Style body.", globs=["src/**"], match="touched"),
        "src/app.py": "",
    })
    return rule_project


run = run_cli  # the shared helper (tests/suite_helpers.py)


# -- global options after the command ----------------------------------------------------


def test_json_after_the_command_is_the_same_as_before(capsys, project):
    cwd = str(project.cwd)
    before = run(capsys, "--cwd", cwd, "--json", "list")
    after = run(capsys, "list", "--json", "--cwd", cwd)
    assert before == after and before[0] == 0
    assert [r["id"] for r in json.loads(after[1])["rules"]] == ["style"]


def test_cwd_after_the_command(capsys, project, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "--cwd", str(project.cwd))
    assert (code, out) == (0, "ok: 1 rule, no errors\n")
    code, _, err = run(capsys, "check", "--cwd", str(tmp_path / "missing"))
    assert code == 2 and "is not a directory" in err


def test_untrusted_after_the_command_reads_no_project_rules(capsys, project):
    code, out, _ = run(capsys, "list", "--cwd", str(project.cwd), "--json", "--untrusted")
    assert code == 0 and json.loads(out)["rules"] == []


@pytest.mark.parametrize("flag", ["--untrusted", "--unt"])
def test_untrusted_after_the_command_also_leaves_the_settings_file_unread(capsys, project, flag):
    # The settings file is read before the full parse, from the first phase's options:
    # both phases must agree on trust wherever the option stands, abbreviated or not.
    project.write({".pi/rules.toml": "max_tokens = 5\n"})
    cwd = str(project.cwd)
    _, out, _ = run(capsys, "report", "--cwd", cwd, "--json", "--no-branch")
    assert json.loads(out)["budget"]["limit"] == 5
    _, out, _ = run(capsys, "report", "--cwd", cwd, "--json", "--no-branch", flag)
    assert json.loads(out)["budget"]["limit"] == 2000


def test_plugin_blocks_before_and_after_the_command_both_apply(capsys, project):
    code, out, _ = run(capsys, "-p", "no:copilot", "plugins", "--json", "-p", "no:cursor")
    names = {p["name"] for p in json.loads(out)["plugins"]}
    assert code == 0 and {"copilot", "cursor"}.isdisjoint(names) and "claude" in names


def test_a_bad_plugin_option_after_the_command_is_a_usage_error(capsys, project):
    with pytest.raises(SystemExit) as exit_info:
        main(["list", "-p", "copilot"])
    assert exit_info.value.code == 2 and "-p takes no:NAME" in capsys.readouterr().err


def test_global_options_reach_a_verb_below_a_plugin_command(capsys, project):
    code, out, _ = run(capsys, "stream", "test", "--text", "hello", "--json", "--cwd", str(project.cwd))
    assert code == 0 and json.loads(out)["fired"] == []


def test_a_command_option_value_that_looks_global_is_not_taken(capsys, project):
    code, out, _ = run(capsys, "--cwd", str(project.cwd), "render", "--prompt=--json", "--no-branch")
    assert code == 0 and not out.startswith("{")


def test_a_command_help_lists_the_global_options(capsys, project):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert "global options (also accepted before the command)" in out and "--cwd DIR" in out


# -- bare pi-rules and --version -----------------------------------------------------------


def test_bare_pi_rules_prints_help_and_exits_0(capsys, project):
    code, out, err = run(capsys)
    assert (code, err) == (0, "")
    assert out.startswith("usage: pi-rules") and "pi-rules init" in out
    for command in ("list", "check", "explain", "init", "stream", "serve"):
        assert re.search(rf"^\s+{command}\s", out, re.MULTILINE), command


def test_options_without_a_command_are_a_usage_error(capsys, project):
    with pytest.raises(SystemExit) as exit_info:
        main(["--json"])
    assert exit_info.value.code == 2 and "a command is required" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--version"], ["list", "--version"], ["-p", "no:report", "--version"]])
def test_version_prints_the_installed_distribution(capsys, project, args):
    assert run(capsys, *args) == (0, f"pi-rules {metadata.version('pi-rules')}\n", "")


def test_version_as_json(capsys, project):
    code, out, _ = run(capsys, "--version", "--json")
    assert code == 0 and json.loads(out) == {"name": "pi-rules", "version": metadata.version("pi-rules")}


# -- init ------------------------------------------------------------------------------------


@pytest.fixture
def empty(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_IMPORT"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    return project


def test_init_creates_an_example_rule_that_check_passes(capsys, empty):
    code, out, _ = run(capsys, "init", "--cwd", str(empty))
    assert code == 0
    assert out.splitlines()[:3] == ["created .pi/rules/example.md", "created .pi/rules.toml",
                                    "created .pi/rules.test.yaml"]
    assert (empty / ".pi" / "rules" / "example.md").read_text() == init.EXAMPLE_RULE_TEXT
    code, out, _ = run(capsys, "check", "--cwd", str(empty), "--json")
    assert code == 0 and json.loads(out)["errors"] == [] and json.loads(out).get("warnings", []) == []


def test_the_first_pi_rules_test_after_init_passes(capsys, empty):
    # issue 34: init created no test file, so the first `pi-rules test` exited 1.
    run(capsys, "init", "--cwd", str(empty))
    code, out, _ = run(capsys, "test", "--cwd", str(empty))
    assert code == 0 and out.splitlines()[-1] == "2 passed, 0 failed"
    # Positive control: the cases really judge the rule (drop its glob and the first fails).
    rule = empty / ".pi" / "rules" / "example.md"
    rule.write_text(rule.read_text().replace('globs: [".pi/rules/**"]', 'globs: ["docs/**"]'))
    assert run(capsys, "test", "--cwd", str(empty))[0] == 1


def test_init_writes_no_test_file_for_a_project_with_its_own_rules(capsys, project):
    code, out, _ = run(capsys, "init", "--cwd", str(project.cwd))
    assert code == 0 and not (project.cwd / ".pi" / "rules.test.yaml").exists()
    assert "skipped .pi/rules.test.yaml: its cases test the example rule, which was not created" in out


def test_the_example_rule_applies_to_rule_files_only(capsys, empty):
    run(capsys, "init", "--cwd", str(empty))
    for touched, expected in ((".pi/rules/new.md", ["example"]), ("src/app.py", [])):
        code, out, _ = run(capsys, "render", "--cwd", str(empty), "--json", "--no-branch", "--touched", touched)
        active = [r["id"] for r in json.loads(out)["rules"] if r["status"] == "active"]
        assert (code, active) == (0, expected), touched


def test_init_never_overwrites_and_says_what_it_skipped(capsys, empty):
    (empty / ".pi").mkdir()
    (empty / ".pi" / "rules.toml").write_text("max_tokens = 3000\n")
    code, out, _ = run(capsys, "init", "--cwd", str(empty))
    assert code == 0
    assert "created .pi/rules/example.md" in out
    assert "skipped .pi/rules.toml: it already exists; left as it is" in out
    assert (empty / ".pi" / "rules.toml").read_text() == "max_tokens = 3000\n"
    code, out, _ = run(capsys, "init", "--cwd", str(empty), "--json")
    assert code == 0 and json.loads(out) == {
        "created": [],
        "skipped": [{"path": ".pi/rules/example.md", "reason": "it already exists"},
                    {"path": ".pi/rules.toml", "reason": "it already exists"},
                    {"path": ".pi/rules.test.yaml", "reason": "it already exists"}],
        "failed": [],
    }


def test_init_adds_no_example_to_a_project_that_has_rules(capsys, project):
    code, out, _ = run(capsys, "init", "--cwd", str(project.cwd))
    assert code == 0 and "skipped .pi/rules/example.md: .pi/rules/ already has rules" in out
    assert not (project.cwd / ".pi" / "rules" / "example.md").exists()
    assert (project.cwd / ".pi" / "rules.toml").is_file()


def test_init_does_not_write_through_a_dangling_link(capsys, empty, tmp_path):
    outside = tmp_path / "outside.toml"
    (empty / ".pi").mkdir()
    os.symlink(outside, empty / ".pi" / "rules.toml")
    code, out, _ = run(capsys, "init", "--cwd", str(empty))
    assert code == 0 and "skipped .pi/rules.toml" in out and not outside.exists()


def test_init_reports_a_file_it_cannot_create_and_exits_1(capsys, empty):
    (empty / ".pi").write_text("not a folder")
    code, out, err = run(capsys, "init", "--cwd", str(empty))
    assert code == 1 and out == ("skipped .pi/rules.test.yaml: its cases test the example rule, which was not "
                                 "created; left as it is\n")
    assert "pi-rules init: cannot create .pi/rules/example.md" in err
    assert "pi-rules init: cannot create .pi/rules.toml" in err


def _uncommented(text: str) -> str:
    """The settings template with every commented-out key and table turned on."""
    return "\n".join(
        line[2:] if re.match(r"# (\[|[a-z_]+ = )", line) else line for line in text.split("\n")
    )


def test_the_settings_template_changes_nothing_until_a_line_is_uncommented():
    assert tomllib.loads(init.SETTINGS_TEXT) == {}


def test_the_settings_template_names_every_key_and_is_valid_uncommented():
    data = tomllib.loads(_uncommented(init.SETTINGS_TEXT))
    assert set(data) == {"max_tokens", "overflow", "import", "disable", "attach", "plugins", "lint", "hosts"}
    assert set(data["plugins"]) == {"block", "required"} and set(data["lint"]) == {"ignore"}
    assert set(data["hosts"]) == {"claude-code"}
    parsed = parse_settings(_uncommented(init.SETTINGS_TEXT), ".pi/rules.toml")
    assert parsed.errors == ()
