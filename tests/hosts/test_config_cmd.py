"""``pi-rules config`` and the settings files as a user meets them through the command
line and the hosts (docs/configuration.md)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from rules_core import Engine
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_hosts.claude_code import hook
from suite_helpers import run_in_project
from rules_hosts.cli.config import host_named
from rules_hosts.session.facts import host_facts
from rules_hosts.session.runtime import Session

from importer_helpers import record  # noqa: F401 - the access-recording fixture

RULES = {
    ".pi/rules/style.md": rule_text("Style body.", alwaysApply=True),
    ".pi/rules/big.md": rule_text("x" * 400, alwaysApply=True),
    ".cursorrules": "Cursor legacy.\n",
    ".clinerules": "Cline.\n",
}
TEXT = [{"type": "text", "text": "file contents"}]


@pytest.fixture
def project(rule_project, monkeypatch):
    for name in [n for n in os.environ if n.startswith("PI_RULES_")] + ["XDG_CONFIG_HOME"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(rule_project.home))
    rule_project.write(RULES)
    return rule_project


run = run_in_project  # the shared helper (tests/suite_helpers.py)


def write_project(project, text: str) -> Path:
    return project.write({".pi/rules.toml": text}) / ".pi" / "rules.toml"


def write_user(project, text: str) -> Path:
    return make_rules(project.home / ".config" / "pi-rules", {"config.toml": text}) / "config.toml"


def config_json(capsys, project, *args: str) -> dict:
    code, out, _ = run(capsys, project, "config", "--json", *args)
    assert code == 0
    return json.loads(out)


def test_config_prints_each_value_with_where_it_came_from(capsys, project, monkeypatch):
    write_project(project, 'max_tokens = 4000\ndisable = ["big"]\n')
    write_user(project, '[lint]\nignore = ["dead-glob"]\n')
    monkeypatch.setenv("PI_RULES_OVERFLOW", "index")
    code, out, err = run(capsys, project, "config", "--max-tokens", "5")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"# effective settings for {project.cwd}"
    assert [line.split("  #")[0].rstrip() for line in lines[1:10]] == [
        "max_tokens = 5", 'overflow = "index"', 'import = "all"', 'disable = ["big"]', "attach = true",
        'trust = "ask"', "plugins.block = []", "plugins.required = []", 'lint.ignore = ["dead-glob"]',
    ]
    assert [line.split("  # ")[1] for line in lines[1:10]] == [
        "command-line --max-tokens", "environment PI_RULES_OVERFLOW", "default", '"big": project .pi/rules.toml',
        "default", "default", "default", "default", '"dead-glob": user ~/.config/pi-rules/config.toml',
    ]
    assert lines[-2:] == ["# project file: .pi/rules.toml (read)", "# user file: ~/.config/pi-rules/config.toml (read)"]


def test_config_json_names_levels_sources_and_files(capsys, project):
    write_project(project, "[hosts.claude-code]\nmax_tokens = 9000\n")
    data = config_json(capsys, project, "--host", "claude-code")
    assert set(data) == {"cwd", "host", "trusted", "settings", "files", "errors", "warnings"}
    assert data["settings"]["max_tokens"] == {"value": 9000, "level": "project", "source": ".pi/rules.toml",
                                              "table": "hosts.claude-code"}
    assert data["settings"]["disable"]["items"] == []
    assert [(f["level"], f["state"]) for f in data["files"]] == [("project", "read"), ("user", "missing")]


def test_a_broken_file_is_reported_by_check_and_config_never_a_traceback(capsys, project):
    write_project(project, 'max_token = 3\noverflow = "indx"\n[plugins]\nrequired = ["pi-rules-absent"]\n')
    code, out, err = run(capsys, project, "check")
    assert code == 1 and "Traceback" not in err
    assert out.splitlines()[:3] == [
        "unknown-key .pi/rules.toml: line 1: unknown key 'max_token' — did you mean 'max_tokens'?",
        "invalid-value .pi/rules.toml: line 2: overflow must be \"drop\" or \"index\", got \"indx\" — "
        "did you mean 'index'?",
        "invalid-value .pi/rules.toml: line 4: plugins.required names 'pi-rules-absent', which is not installed "
        "(no plugin or distribution of that name); install the distribution (pip install pi-rules-absent) or "
        "remove it from the list",
    ]
    code, out, err = run(capsys, project, "config")
    assert code == 0 and err == "" and "unknown-key .pi/rules.toml: line 1" in out
    write_project(project, "\x00garbage = [\n")
    code, out, err = run(capsys, project, "check")
    assert code == 1 and out.startswith("read-failure .pi/rules.toml: not valid TOML") and err == ""


def test_check_json_carries_settings_errors_and_warnings(capsys, project):
    write_project(project, "[hosts.claud]\nattach = false\n")
    code, out, _ = run(capsys, project, "check", "--json")
    data = json.loads(out)
    assert code == 0 and data["warnings"][0]["code"] == "unknown-host"
    assert "did you mean 'claude-code'?" in data["warnings"][0]["message"]


# -- the five levels, end to end ---------------------------------------------------------


@pytest.mark.parametrize("highest, expected", [(0, 11), (1, 22), (2, 33), (3, 44), (4, 2000)])
def test_max_tokens_precedence_reaches_the_report(capsys, project, monkeypatch, highest, expected):
    args = ["--max-tokens", "11"] if highest == 0 else []
    if highest <= 1:
        monkeypatch.setenv("PI_RULES_MAX_TOKENS", "22")
    if highest <= 2:
        write_project(project, "max_tokens = 33\n")
    if highest <= 3:
        write_user(project, "max_tokens = 44\n")
    code, out, _ = run(capsys, project, "report", "--json", "--no-branch", *args)
    assert code == 0 and json.loads(out)["budget"]["limit"] == expected


@pytest.mark.parametrize("highest, expected", [(0, {"native"}), (1, {"native", "cline"}),
                                                (2, {"native", "cursor"}), (3, {"native", "cline", "cursor"}),
                                                (4, {"native", "cline", "cursor"})])
def test_import_precedence_decides_what_is_discovered(capsys, project, monkeypatch, highest, expected):
    args = ["--import", "none"] if highest == 0 else []
    if highest <= 1:
        monkeypatch.setenv("PI_RULES_IMPORT", "cline")
    if highest <= 2:
        write_project(project, 'import = ["cursor"]\n')
    if highest <= 3:
        write_user(project, 'import = ["cursor", "cline"]\n')
    code, out, _ = run(capsys, project, *args, "list", "--json")
    assert code == 0 and {r["plugin"] for r in json.loads(out)["rules"]} == expected


@pytest.mark.parametrize("highest, expected", [(0, "drop"), (1, "index"), (2, "drop"), (3, "index"), (4, "drop")])
def test_overflow_precedence_reaches_the_facts(capsys, project, monkeypatch, highest, expected):
    args = ["--overflow", "drop"] if highest == 0 else []
    if highest <= 1:
        monkeypatch.setenv("PI_RULES_OVERFLOW", "index")
    if highest <= 2:
        write_project(project, 'overflow = "drop"\n')
    if highest <= 3:
        write_user(project, 'overflow = "index"\n')
    data = config_json(capsys, project, *args)
    assert data["settings"]["overflow"]["value"] == expected
    levels = ("command-line", "environment", "project", "user", "default")
    assert data["settings"]["overflow"]["level"] == levels[highest]
    engine = Engine(env=dict(os.environ))
    engine.options.update({"overflow": "drop"} if highest == 0 else {})
    facts = host_facts(str(project.cwd), env=engine.env, branch=None, settings=engine.settings(str(project.cwd)))
    assert facts.overflow == expected


# -- plugins ----------------------------------------------------------------------------


def test_a_blocked_plugin_in_the_users_file_is_never_registered(capsys, project):
    write_user(project, '[plugins]\nblock = ["cursor"]\n')
    code, out, _ = run(capsys, project, "plugins", "--json")
    assert code == 0 and "cursor" not in {p["name"] for p in json.loads(out)["plugins"]}


def test_a_projects_block_of_an_importer_stops_only_its_project_files(capsys, project):
    # Issue 26: the plugin stays registered (it also reads the user's own ~/.cursor rules).
    write_project(project, '[plugins]\nblock = ["cursor"]\n')
    code, out, _ = run(capsys, project, "plugins", "--json")
    assert code == 0 and "cursor" in {p["name"] for p in json.loads(out)["plugins"]}


def test_a_host_tables_block_applies_when_the_command_runs_for_that_host(capsys, project):
    write_project(project, '[hosts.pi.plugins]\nblock = ["cline"]\n')
    _, out, _ = run(capsys, project, "report", "--json", "--no-branch", "--host", "pi")
    assert "cline" not in {r["plugin"] for r in json.loads(out)["rules"]}
    _, out, _ = run(capsys, project, "report", "--json", "--no-branch")
    assert "cline" in {r["plugin"] for r in json.loads(out)["rules"]}


def test_config_lists_every_block_with_its_origin(capsys, project, monkeypatch):
    monkeypatch.setenv("PI_RULES_DISABLE_PLUGINS", "roo")
    write_project(project, '[plugins]\nblock = ["cursor"]\n')
    items = config_json(capsys, project, "-p", "no:zed")["settings"]["plugins.block"]["items"]
    assert [(i["value"], i["level"]) for i in items] == [("zed", "command-line"), ("roo", "environment"),
                                                         ("cursor", "project")]


@pytest.mark.parametrize("argv, host", [
    (["report", "--host", "claude-code"], "claude-code"), (["report", "--host=pi"], "pi"),
    (["hook", "claude-code"], "claude-code"), (["serve"], "pi"), (["list"], None),
])
def test_the_host_is_known_before_the_parser(argv, host):
    assert host_named(argv) == host


# -- trust ------------------------------------------------------------------------------


def test_untrusted_cli_never_touches_the_project_settings_file(capsys, project, record):
    write_project(project, 'disable = ["style"]\n')
    write_user(project, "max_tokens = 7\n")
    record.clear()
    code, out, _ = run(capsys, project, "--untrusted", "config", "--json")
    assert code == 0 and [p for p in record if p.endswith("rules.toml")] == []
    data = json.loads(out)
    assert data["settings"]["max_tokens"]["value"] == 7 and data["files"][0]["state"] == "untrusted"


# -- hosts: a long-lived session sees edits; host tables apply -----------------------------


def test_a_serve_session_sees_an_edit_at_its_next_turn(project):
    engine = Engine(env={"HOME": str(project.home)}, home=str(project.home))
    session = Session(engine, str(project.cwd), trusted=True, host="pi", env={"HOME": str(project.home)})
    assert session.before_agent_start("", branch=None).evaluation.facts.max_tokens == 2000
    path = write_project(project, "[hosts.pi]\nmax_tokens = 50\n")
    assert session.before_agent_start("", branch=None).evaluation.facts.max_tokens == 50
    path.write_text('disable = ["style"]\n[hosts.pi]\nmax_tokens = 60\n')
    os.utime(path, ns=(1, 1))
    turn = session.before_agent_start("", branch=None)
    assert turn.evaluation.facts.max_tokens == 60
    assert "style" not in {o.rule.id for o in turn.evaluation.active} and "Style body." not in session.section


def test_attach_false_in_a_file_stops_attachments_and_the_environment_beats_it(project):
    project.write({".pi/rules/ts.md": rule_text("TS.", globs=["src/**"], match="touched")})
    write_project(project, "attach = false\n")
    env = {"HOME": str(project.home)}
    for session_env, attached in ((env, False), ({**env, "PI_RULES_ATTACH": "on"}, True)):
        session = Session(Engine(env=env, home=str(project.home)), str(project.cwd), trusted=True, env=session_env)
        session.before_agent_start("", branch=None)
        session.tool_start("read", {"path": "src/a.ts"})
        assert bool(session.tool_result("read", TEXT).attached) is attached


def test_the_claude_code_hook_applies_its_host_table(project, tmp_path):
    write_project(project, '[hosts.claude-code]\ndisable = ["style"]\n')
    env = {"HOME": str(project.home), "XDG_STATE_HOME": str(tmp_path / "state")}
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(project.cwd), "prompt": "hi"}
    out, err = io.StringIO(), io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out, err, cwd=str(project.cwd), env=env) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "Cline." in context and "Style body." not in context
