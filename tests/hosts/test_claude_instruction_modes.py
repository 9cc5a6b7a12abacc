"""Claude Code's profile follows the user's project-instructions mode (docs/hosts.md,
"Claude Code's project-instructions mode"): ``pluginConfigs["agents-md@builtin"].options.
instructionFiles`` in the user's and the managed settings, as Claude Code 2.1.332 reads it."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules_hosts.claude_code.instructions import FALLBACK, MODES, instruction_mode
from rules_hosts.cli import main

AGENTS = "# Agents\n\nCanary agents-41c.\n"
NESTED = "# Web\n\nCanary web-77d.\n"
CLAUDE = "# Claude\n\nCanary claude-5e2.\n"
RULE = "---\ndescription: Style\n---\nCanary rules-c90.\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CLAUDE_CODE_MANAGED_SETTINGS_PATH", str(tmp_path / "managed"))
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20000")
    for name in ("PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    (project / "web" / "src").mkdir(parents=True)
    (project / ".claude" / "rules").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "AGENTS.md").write_text(AGENTS)
    (project / "web" / "AGENTS.md").write_text(NESTED)
    (project / "web" / "src" / "a.ts").write_text("")
    (project / ".claude" / "rules" / "style.md").write_text(RULE)
    return project


def _write(path, document) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(document if isinstance(document, str) else json.dumps(document))


def user_settings(mode, key="instructionFiles", plugin="agents-md@builtin") -> None:
    _write(os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json"),
           {"permissions": {"allow": []}, "pluginConfigs": {plugin: {"options": {key: mode}}}})


def managed_settings(mode, name="managed-settings.json") -> None:
    _write(os.path.join(os.environ["CLAUDE_CODE_MANAGED_SETTINGS_PATH"], name),
           {"pluginConfigs": {"agents-md@builtin": {"options": {"instructionFiles": mode}}}})


def sent(capsys, repo) -> str:
    code = main(["--cwd", str(repo), "--json", "report", "--host", "claude-code", "--touched", "web/src/a.ts"])
    assert code == 0
    return json.loads(capsys.readouterr().out)["section"]


def canaries(section: str) -> set[str]:
    return {name for name in ("agents", "web", "claude", "rules") if f"Canary {name}-" in section}


def test_default_mode_sends_agents_md_only_where_a_claude_md_shadows_it(capsys, repo):
    assert canaries(sent(capsys, repo)) == set()  # no CLAUDE.md: Claude reads both AGENTS.md itself
    (repo / "CLAUDE.md").write_text(CLAUDE)
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


def test_a_claude_local_md_shadows_agents_md_as_in_claude_code(capsys, repo):
    (repo / "CLAUDE.local.md").write_text(CLAUDE)
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


def test_both_mode_leaves_every_agents_md_to_claude(capsys, repo):
    (repo / "CLAUDE.md").write_text(CLAUDE)
    user_settings("claude-md-and-agents-md")
    section = sent(capsys, repo)
    assert canaries(section) == set()
    main(["--cwd", str(repo), "--json", "report", "--host", "claude-code"])
    rules = json.loads(capsys.readouterr().out)["rules"]
    root = next(r for r in rules if r["relativePath"] == "AGENTS.md")
    assert "claude-md-and-agents-md" in root["reasons"][0]


def test_claude_md_only_mode_sends_every_agents_md(capsys, repo):
    user_settings("claude-md")
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


def test_managed_only_mode_sends_the_projects_own_files(capsys, repo):
    (repo / "CLAUDE.md").write_text(CLAUDE)
    user_settings("managed-only")
    assert canaries(sent(capsys, repo)) == {"agents", "web", "claude", "rules"}


def test_the_managed_value_beats_the_users(capsys, repo):
    user_settings("claude-md-and-agents-md")
    managed_settings("claude-md")
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


def test_a_managed_drop_in_file_counts_and_later_drop_ins_win(capsys, repo):
    managed_settings("claude-md-and-agents-md", os.path.join("managed-settings.d", "10-a.json"))
    managed_settings("claude-md", os.path.join("managed-settings.d", "20-b.json"))
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


def test_the_users_home_settings_count_without_claude_config_dir(capsys, repo, monkeypatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    _write(os.path.join(os.environ["HOME"], ".claude", "settings.json"),
           {"pluginConfigs": {"agents-md@builtin": {"options": {"instructionFiles": "claude-md"}}}})
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


def test_the_older_option_counts_only_while_instruction_files_is_unset(capsys, repo):
    user_settings("claude", key="projectInstructions")
    assert canaries(sent(capsys, repo)) == {"agents", "web"}
    _write(os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json"), {"pluginConfigs": {"agents-md@builtin": {
        "options": {"projectInstructions": "claude", "instructionFiles": "claude-md-and-agents-md"}}}})
    assert canaries(sent(capsys, repo)) == set()


def test_project_settings_do_not_set_the_mode(capsys, repo):
    """Claude Code reads plugin options from the user's and the managed settings only."""
    _write(str(repo / ".claude" / "settings.json"),
           {"pluginConfigs": {"agents-md@builtin": {"options": {"instructionFiles": "claude-md"}}}})
    assert canaries(sent(capsys, repo)) == set()
    user_settings("claude-md")  # the control: the same value where Claude Code reads it
    assert canaries(sent(capsys, repo)) == {"agents", "web"}


@pytest.mark.parametrize("content", [
    "", "{", "[1, 2]", '"claude-md"', '{"pluginConfigs": []}', '{"pluginConfigs": {"agents-md@builtin": 3}}',
    '{"pluginConfigs": {"agents-md@builtin": {"options": {"instructionFiles": ["claude-md"]}}}}',
    "[" * 100_000 + "]" * 100_000, '{"a": "' + "x" * (2 * 1024 * 1024) + '"}', b"\xff\xfe{}",
])
def test_a_hostile_settings_file_means_the_default_mode(repo, content):
    path = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content if isinstance(content, bytes) else content.encode())
    assert instruction_mode(os.environ) == FALLBACK


def test_a_fifo_as_settings_file_never_blocks(repo):
    path = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path)
    assert instruction_mode(os.environ) == FALLBACK


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30) | st.sampled_from(MODES),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["pluginConfigs", "agents-md@builtin", "options", "instructionFiles", "projectInstructions",
                         "x"]), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(document=_json)
def test_any_json_yields_one_of_the_four_modes(tmp_path_factory, document):
    folder = tmp_path_factory.mktemp("settings")
    _write(str(folder / "settings.json"), document)
    env = {"CLAUDE_CONFIG_DIR": str(folder), "CLAUDE_CODE_MANAGED_SETTINGS_PATH": str(folder / "none")}
    assert instruction_mode(env) in MODES
