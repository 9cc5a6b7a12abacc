"""``pi-rules hook claude-code --install/--uninstall/--print-config`` and the plugin directory.

Every install runs the real ``pi-rules`` script in a subprocess, against a temporary project
and a temporary HOME, and judges the files it leaves behind.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_hosts.claude_code.install import (
    add_hooks, add_server, config, is_our_command, remove_hooks, remove_server,
)
from rules_hosts.claude_code.tools import TOOLS
from claude_real import CLAUDE_VERSION  # what .ci/install-claude installs
from golden_files import check_golden
from session_guard import TOOL_CACHE

SCRIPT = Path(sys.executable).parent / "pi-rules"  # the console script of the venv running the tests
PLUGIN = Path(__file__).resolve().parents[2] / "hosts" / "claude-code"


class Setup:
    """A project, a HOME, and the pi-rules script to run against them."""

    def __init__(self, tmp_path: Path, script: Path = SCRIPT) -> None:
        if not script.is_file():
            pytest.skip(f"no pi-rules console script next to {sys.executable} (not a pip-installed venv)")
        self.script = script
        self.project = tmp_path / "project"
        self.home = tmp_path / "home"
        self.project.mkdir()
        self.home.mkdir()
        kept = ("PI_RULES_HOOK_SERVER", "XDG_RUNTIME_DIR")  # hook calls in process (tests/conftest.py)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("PI_RULES_", "CLAUDE_", "XDG_")) or k in kept}
        self.env.update(HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"),
                        XDG_STATE_HOME=str(self.home / ".state"), XDG_CACHE_HOME=str(self.home / ".cache"))
        # pi-rules on PATH, as after `pipx install`: the project scope writes the bare name.
        self.env["PATH"] = os.pathsep.join([str(script.parent), "/usr/bin", "/bin"])

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.script), "--cwd", str(self.project), "hook", "claude-code", *args],
                              capture_output=True, text=True, env=self.env, cwd=str(self.home), timeout=60)

    @property
    def settings(self) -> Path:
        return self.project / ".claude" / "settings.json"

    @property
    def mcp(self) -> Path:
        return self.project / ".mcp.json"

    def backup(self, path: Path) -> Path:
        """Where the install keeps ``path``'s backup: the state directory, not the project."""
        return self.home / ".state" / "pi-rules" / "backups" / (str(path.resolve()).replace("/", "%") + ".bak")


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _our_command(shared: bool = True) -> str:
    """The project scope (shared files) runs the bare name; local and user the absolute path."""
    return shlex.join(["pi-rules" if shared else str(SCRIPT), "hook", "claude-code"])


def _our_mcp(shared: bool = True) -> dict[str, Any]:
    return {"mcpServers": {"pi-rules": {"command": "pi-rules" if shared else str(SCRIPT), "args": ["mcp"]}}}


OTHERS = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
    },
    "model": "opus",
}
OTHER_SERVERS = {"mcpServers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"], "env": {"T": "${T}"}}}}


def _write(path: Path, value: Any) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(value, indent=4).encode()  # not our indent: a rewrite would show
    path.write_bytes(data)
    return data


# -- install / uninstall ----------------------------------------------------------------


def test_install_into_a_project_without_files_creates_both(setup: Setup) -> None:
    done = setup.run("--install")
    assert done.returncode == 0, done.stderr
    assert _load(setup.settings) == config(_our_command())
    assert _load(setup.mcp) == _our_mcp()
    for path in (setup.settings, setup.mcp):
        text = path.read_text()
        assert text.endswith("}\n") and text.startswith('{\n  "')  # 2-space indent, trailing newline
        assert f"created {path}" in done.stdout
        assert not setup.backup(path).exists()  # nothing existed to back up


def test_install_keeps_every_other_hook_server_and_key(setup: Setup) -> None:
    old_settings, old_mcp = _write(setup.settings, OTHERS), _write(setup.mcp, OTHER_SERVERS)
    done = setup.run("--install")
    assert done.returncode == 0, done.stderr
    settings_now, ours = _load(setup.settings), config(_our_command())["hooks"]
    assert {k: v for k, v in settings_now.items() if k != "hooks"} == {k: v for k, v in OTHERS.items() if k != "hooks"}
    assert list(settings_now) == list(OTHERS)  # keys keep their order
    hooks = settings_now["hooks"]
    assert hooks["Stop"] == OTHERS["hooks"]["Stop"]
    assert hooks["PreToolUse"] == OTHERS["hooks"]["PreToolUse"] + ours["PreToolUse"]  # theirs first
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
        assert hooks[event] == ours[event]
    assert _load(setup.mcp)["mcpServers"] == {**OTHER_SERVERS["mcpServers"], **_our_mcp()["mcpServers"]}
    # The backup holds the file exactly as it was.
    assert setup.backup(setup.settings).read_bytes() == old_settings
    assert setup.backup(setup.mcp).read_bytes() == old_mcp
    assert f"backup: {setup.backup(setup.settings)}" in done.stdout
    assert not list(setup.project.rglob("*.bak"))  # no untracked file in the repository


def test_second_install_changes_nothing_and_says_so(setup: Setup) -> None:
    _write(setup.settings, OTHERS)
    assert setup.run("--install").returncode == 0
    before = {p: p.read_bytes() for p in setup.project.rglob("*") if p.is_file()}
    again = setup.run("--install")
    assert again.returncode == 0 and again.stderr == ""
    assert {p: p.read_bytes() for p in setup.project.rglob("*") if p.is_file()} == before  # no new .bak either
    assert "nothing to do, already installed" in again.stdout
    assert f"unchanged {setup.settings} (already installed)" in again.stdout


def test_uninstall_gives_back_the_original_and_is_idempotent(setup: Setup) -> None:
    _write(setup.settings, OTHERS)
    _write(setup.mcp, OTHER_SERVERS)
    assert setup.run("--install").returncode == 0
    done = setup.run("--uninstall")
    assert done.returncode == 0, done.stderr
    assert _load(setup.settings) == OTHERS
    assert _load(setup.mcp) == OTHER_SERVERS
    after = {p: p.read_bytes() for p in setup.project.rglob("*") if p.is_file()}
    again = setup.run("--uninstall")
    assert again.returncode == 0 and "nothing to do, already uninstalled" in again.stdout
    assert {p: p.read_bytes() for p in setup.project.rglob("*") if p.is_file()} == after


def test_uninstall_removes_files_only_we_filled(setup: Setup) -> None:
    assert setup.run("--install").returncode == 0
    done = setup.run("--uninstall")
    assert done.returncode == 0
    assert not setup.settings.exists() and not setup.mcp.exists()
    assert _load(setup.backup(setup.settings)) == config(_our_command())  # the backup still has it
    assert not list(setup.project.rglob("*.bak"))


def test_an_older_install_is_replaced_not_duplicated(setup: Setup) -> None:
    _write(setup.settings, config("pi-rules hook claude-code"))  # the old pasted snippet, bare name
    _write(setup.mcp, {"mcpServers": {"pi-rules": {"command": "pi-rules", "args": ["mcp"]}}})
    assert setup.run("--install").returncode == 0
    assert _load(setup.settings) == config(_our_command())
    assert _load(setup.mcp) == _our_mcp()


BROKEN = [
    ("settings", b'{"hooks": {"PreToolUse": [}', "not valid JSON (line 1 column 27"),
    ("settings", b"[]\n", "holds a JSON array, not an object"),
    ("settings", b'{"hooks": []}', '"hooks" is a JSON array'),
    ("settings", b'{"hooks": {"PreToolUse": {"matcher": "Read"}}}', '"hooks.PreToolUse" is a JSON object'),
    ("settings", b'{"hooks": {"Stop": [{"hooks": "x.sh"}]}}', '"hooks.Stop[0].hooks" is a JSON string'),
    ("settings", b'{"model": NaN}', "NaN is not JSON"),
    ("settings", b"\xff\xfe{}", "not UTF-8"),
    ("mcp", b'{"mcpServers": ["a"]}', '"mcpServers" is a JSON array'),
    ("mcp", b'{"mcpServers": {"pi-rules": {"command": "other"}}}', "pi-rules did not write"),
]


@pytest.mark.parametrize("which, content, problem", BROKEN)
def test_a_file_it_cannot_merge_into_is_refused_untouched(setup: Setup, which: str, content: bytes, problem: str) -> None:
    broken = setup.settings if which == "settings" else setup.mcp
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_bytes(content)
    done = setup.run("--install")
    assert done.returncode == 1
    assert broken.read_bytes() == content
    assert [p for p in setup.project.rglob("*") if p.is_file()] == [broken]  # the other file is not written either
    assert f"refusing to change {broken}" in done.stderr and problem in done.stderr
    assert "Fix the file by hand (or move it away) and run the command again" in done.stderr
    assert done.stdout == ""


def test_uninstall_refuses_a_broken_file_and_leaves_a_foreign_server(setup: Setup) -> None:
    setup.settings.parent.mkdir()
    setup.settings.write_bytes(b"{oops")
    assert setup.run("--uninstall").returncode == 1 and setup.settings.read_bytes() == b"{oops"
    setup.settings.unlink()
    foreign = {"mcpServers": {"pi-rules": {"command": "/opt/other/server"}}}
    data = _write(setup.mcp, foreign)
    done = setup.run("--uninstall")
    assert done.returncode == 0 and setup.mcp.read_bytes() == data


def test_scope_local_writes_settings_local_and_the_project_entry_of_claude_json(setup: Setup) -> None:
    state = setup.home / ".claude.json"
    original = {"numStartups": 3, "projects": {"/elsewhere": {"mcpServers": {"x": {"command": "x"}}}}}
    _write(state, original)
    state.chmod(0o600)
    done = setup.run("--install", "--scope", "local")
    assert done.returncode == 0, done.stderr
    assert _load(setup.project / ".claude" / "settings.local.json") == config(_our_command(shared=False))
    assert not setup.settings.exists() and not setup.mcp.exists()
    now = _load(state)
    assert now["numStartups"] == 3 and now["projects"]["/elsewhere"] == original["projects"]["/elsewhere"]
    assert now["projects"][str(setup.project)] == _our_mcp(shared=False)
    # Claude Code's state file holds account data: the rewrite and the backup stay private.
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert stat.S_IMODE(setup.backup(state).stat().st_mode) == 0o600
    assert setup.run("--uninstall", "--scope", "local").returncode == 0
    assert _load(state) == original
    assert not (setup.project / ".claude" / "settings.local.json").exists()


def test_scope_user_writes_the_home_settings_and_the_root_of_claude_json(setup: Setup) -> None:
    done = setup.run("--install", "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert _load(setup.home / ".claude" / "settings.json") == config(_our_command(shared=False))
    assert _load(setup.home / ".claude.json") == _our_mcp(shared=False)
    assert not setup.settings.exists() and not setup.mcp.exists()
    assert setup.run("--uninstall", "--scope", "user").returncode == 0
    assert not (setup.home / ".claude" / "settings.json").exists()


def test_local_commands_name_the_running_script_by_absolute_path(setup: Setup) -> None:
    assert setup.run("--install", "--scope", "local").returncode == 0
    for groups in _load(setup.project / ".claude" / "settings.local.json")["hooks"].values():
        command = groups[-1]["hooks"][0]["command"]
        first = shlex.split(command)[0]
        assert command.startswith(str(SCRIPT)) and os.path.isabs(first) and os.path.isfile(first)
    server = _load(setup.home / ".claude.json")["projects"][str(setup.project)]["mcpServers"]["pi-rules"]
    assert os.path.isabs(server["command"]) and os.path.isfile(server["command"])


def test_a_path_with_spaces_is_quoted_and_the_hook_runs_through_a_shell(tmp_path: Path) -> None:
    if not SCRIPT.is_file():
        pytest.skip(f"no pi-rules console script next to {sys.executable}")
    tools = tmp_path / "my tools"
    tools.mkdir()
    shutil.copy2(SCRIPT, tools / "pi-rules")  # its shebang still names the venv's python
    setup = Setup(tmp_path, tools / "pi-rules")
    subprocess.run(["git", "init", "-q", str(setup.project)], check=True)
    make_rules(setup.project, {".pi/rules/always.md": rule_text("Be kind to reviewers.", alwaysApply=True)})
    assert setup.run("--install", "--scope", "local").returncode == 0
    local = setup.project / ".claude" / "settings.local.json"
    command = _load(local)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == shlex.join([str(tools / "pi-rules"), "hook", "claude-code"]) and "'" in command
    # What Claude Code does with it: run it through a shell with the payload on stdin.
    payload = {"session_id": "s-1", "cwd": str(setup.project), "hook_event_name": "SessionStart", "source": "startup"}
    ran = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                         env={**setup.env, "PATH": "/usr/bin:/bin"}, cwd=str(setup.project), timeout=60)
    assert ran.returncode == 0 and ran.stderr == ""
    assert "Be kind to reviewers." in json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]


# -- the shared project scope (issue 34) --------------------------------------------------


def test_project_scope_without_pi_rules_on_path_is_refused_and_recommends_local(setup: Setup) -> None:
    setup.env["PATH"] = "/usr/bin:/bin"  # a venv install, not activated: no `pi-rules` on PATH
    done = setup.run("--install")
    assert done.returncode == 1
    assert "not on PATH" in done.stderr and "--scope local" in done.stderr and "no file was changed" in done.stderr
    assert not setup.settings.exists() and not setup.mcp.exists()
    # Positive control: the same venv install works in the local scope, by absolute path.
    assert setup.run("--install", "--scope", "local").returncode == 0
    assert str(SCRIPT) in (setup.project / ".claude" / "settings.local.json").read_text()


def test_project_scope_writes_only_the_bare_name_and_says_where_it_found_it(setup: Setup) -> None:
    done = setup.run("--install")
    assert done.returncode == 0, done.stderr
    assert f"bare `pi-rules` (on PATH here: {SCRIPT})" in done.stderr
    for path in (setup.settings, setup.mcp):
        assert str(SCRIPT.parent) not in path.read_text()  # nothing of this machine's venv


def _site_without_mcp(tmp_path: Path) -> Path:
    """This venv's site-packages less the MCP SDK: every other entry linked, ``mcp`` left out."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages") and Path(p, "pluggy").is_dir()))
    shadow = tmp_path / "site"
    shadow.mkdir()
    for entry in site.iterdir():
        if entry.name == "mcp" or entry.name.startswith("mcp-"):
            continue
        (shadow / entry.name).symlink_to(entry)
    return shadow


def _install_without_sdk(setup: Setup, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``--install`` by an interpreter that cannot import the MCP SDK (checked)."""
    shadow = tmp_path / "site"
    if not shadow.exists():
        _site_without_mcp(tmp_path)
    repo = Path(__file__).resolve().parents[2]
    env = {**setup.env, "PYTHONPATH": os.pathsep.join([str(repo), str(shadow)])}
    run = [sys.executable, "-S", "-m", "rules_hosts", "--cwd", str(setup.project), "hook", "claude-code",
           "--install", *args]
    probe = subprocess.run([sys.executable, "-S", "-c", "import importlib.util as u; print(u.find_spec('mcp'))"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "None"  # the SDK is really out of reach of that interpreter
    return subprocess.run(run, env=env, capture_output=True, text=True, timeout=60, cwd=str(setup.home))


def test_no_mcp_entry_without_the_sdk_and_the_note_says_how_to_add_it(setup: Setup, tmp_path: Path) -> None:
    done = _install_without_sdk(setup, tmp_path)
    assert done.returncode == 0, done.stderr
    assert _load(setup.settings) == config(_our_command())
    assert not setup.mcp.exists()
    assert "MCP server (read_rule as a tool) was not added" in done.stderr and "pip install 'pi-rules[mcp]'" in done.stderr
    # Positive control: with the SDK (this venv), the same install adds the server.
    assert setup.run("--install").returncode == 0 and _load(setup.mcp) == _our_mcp()


def test_an_earlier_installs_mcp_entry_is_removed_without_the_sdk_and_others_stay(setup: Setup, tmp_path: Path) -> None:
    assert setup.run("--install").returncode == 0  # with the SDK (this venv): the entry is written
    servers = _load(setup.mcp)["mcpServers"]
    _write(setup.mcp, {"mcpServers": {**OTHER_SERVERS["mcpServers"], **servers}})
    done = _install_without_sdk(setup, tmp_path)
    assert done.returncode == 0, done.stderr
    assert _load(setup.mcp) == OTHER_SERVERS  # ours gone, the hand-written github server kept
    assert f"updated {setup.mcp} (backup: " in done.stdout
    assert f"removed the MCP server entry (read_rule as a tool) an earlier install wrote to {setup.mcp}" in done.stderr
    assert "To add it back: pip install 'pi-rules[mcp]'" in done.stderr and "--install --scope project` again" in done.stderr
    assert _load(setup.settings) == config(_our_command())  # the hooks are installed as ever
    # A second run has nothing left to remove, and says only that the server was not added.
    again = _install_without_sdk(setup, tmp_path)
    assert again.returncode == 0 and "removed the MCP server" not in again.stderr
    assert "was not added" in again.stderr and _load(setup.mcp) == OTHER_SERVERS


def test_a_file_holding_only_our_entry_goes_and_the_local_scope_is_tidied_too(setup: Setup, tmp_path: Path) -> None:
    assert setup.run("--install").returncode == 0 and _load(setup.mcp) == _our_mcp()
    done = _install_without_sdk(setup, tmp_path)
    assert done.returncode == 0 and f"removed {setup.mcp}" in done.stdout
    assert not setup.mcp.exists()
    # Local scope: the entry sits in ~/.claude.json under projects.<cwd>, beside Claude Code's own state.
    state = setup.home / ".claude.json"
    assert setup.run("--install", "--scope", "local").returncode == 0
    data = _load(state)
    _write(state, {**data, "numStartups": 3})
    done = _install_without_sdk(setup, tmp_path, "--scope", "local")
    assert done.returncode == 0 and f"wrote to {state}" in done.stderr
    assert _load(state) == {"numStartups": 3}


def test_a_hand_written_server_is_never_touched_without_the_sdk(setup: Setup, tmp_path: Path) -> None:
    # Named pi-rules, but not a command pi-rules writes: someone else's server.
    theirs = {"mcpServers": {"pi-rules": {"command": "node", "args": ["tools/rules-server.js"]},
                             **OTHER_SERVERS["mcpServers"]}}
    written = _write(setup.mcp, theirs)
    done = _install_without_sdk(setup, tmp_path)
    assert done.returncode == 0, done.stderr
    assert setup.mcp.read_bytes() == written  # not even re-indented
    assert "removed the MCP server" not in done.stderr and "was not added" in done.stderr
    assert str(setup.mcp) not in done.stdout
    # A .mcp.json pi-rules cannot read is left alone too: the hooks are still installed.
    setup.mcp.write_text("{not json")
    done = _install_without_sdk(setup, tmp_path)
    assert done.returncode == 0 and setup.mcp.read_text() == "{not json"
    assert _load(setup.settings) == config(_our_command())


def test_install_and_uninstall_leave_no_untracked_file_in_the_repository(setup: Setup) -> None:
    subprocess.run(["git", "init", "-q", str(setup.project)], check=True)
    _write(setup.settings, OTHERS)
    _write(setup.mcp, OTHER_SERVERS)
    subprocess.run(["git", "-C", str(setup.project), "add", "-A"], check=True)
    assert setup.run("--install").returncode == 0
    assert setup.run("--uninstall").returncode == 0
    status = subprocess.run(["git", "-C", str(setup.project), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    # The two files are back (JSON-equal; re-indented, hence modified), and nothing new appeared.
    assert sorted(status.splitlines()) == ["AM .claude/settings.json", "AM .mcp.json"]
    assert _load(setup.settings) == OTHERS and _load(setup.mcp) == OTHER_SERVERS
    assert setup.backup(setup.mcp).is_file()  # the backups exist, outside the repository


# -- print-config -----------------------------------------------------------------------


def _module_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("form", ["settings", "mcp"])
def test_print_config_of_one_file_is_one_json_document(form: str) -> None:
    done = _module_run("--print-config", form)
    assert done.returncode == 0 and done.stderr == ""
    value = json.loads(done.stdout)  # the whole stdout, nothing around it
    launch = [sys.executable, "-P", "-m", "rules_hosts"]  # not the console script: python -m runs
    if form == "settings":
        assert value == config(shlex.join([*launch, "hook", "claude-code"]))
    else:
        assert value == {"mcpServers": {"pi-rules": {"command": sys.executable, "args": [*launch[1:], "mcp"]}}}


def test_print_config_for_people_matches_the_golden_file() -> None:
    done = _module_run("--print-config")
    assert done.returncode == 0 and done.stderr == ""
    text = done.stdout.replace(shlex.quote(sys.executable), "<python>").replace(sys.executable, "<python>")
    check_golden("claude-print-config.txt", text)


# -- the merge, for any settings object (hypothesis) ------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_handler = st.fixed_dictionaries({"type": st.just("command"), "command": st.text(max_size=30)}) | _json
_group = st.fixed_dictionaries({"hooks": st.lists(_handler, min_size=1, max_size=3)},
                               optional={"matcher": st.text(max_size=10)})
_events = st.sampled_from(["PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "Notification"])
# An empty event list or hooks object has no meaning to Claude Code, and uninstall drops the
# ones it emptied: generated settings hold none (docs/hosts.md says so).
_settings = st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), _json, max_size=4).flatmap(
    lambda rest: st.one_of(
        st.just(rest),
        st.dictionaries(_events, st.lists(_group, min_size=1, max_size=3), min_size=1, max_size=4).map(
            lambda hooks: {**rest, "hooks": hooks}),
    )
)


@settings(max_examples=150, deadline=None)
@given(_settings)
def test_install_then_uninstall_gives_back_any_settings_object(original: dict[str, Any]) -> None:
    # A command of ours in the input would rightly be removed: the property is about theirs.
    for groups in original.get("hooks", {}).values():
        for group in groups:
            for handler in group["hooks"]:
                if isinstance(handler, dict) and is_our_command(handler.get("command")):
                    return
    installed = add_hooks(original, config())
    assert add_hooks(installed, config()) == installed
    assert remove_hooks(installed) == original
    assert remove_hooks(original) == original


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _json, max_size=4),
       st.dictionaries(st.text(max_size=8).filter(lambda k: k != "pi-rules"), _json, min_size=1, max_size=3),
       st.sampled_from([(), ("projects", "/p")]))
def test_server_add_then_remove_gives_back_any_object(rest: dict[str, Any], servers: dict[str, Any],
                                                      at: tuple[str, ...]) -> None:
    original = dict(rest)
    parent = original
    for key in at:
        parent = parent.setdefault(key, {}) if isinstance(parent.get(key, {}), dict) else None
        if parent is None:
            return  # a non-object where the entry goes is refused before any change
    parent["mcpServers"] = servers
    added = add_server(original, at, {"command": "/x/pi-rules", "args": ["mcp"]})
    assert remove_server(added, at) == original


# -- the plugin directory ---------------------------------------------------------------

HOOK_EVENTS = {  # Claude Code's documented hook events (hooks reference, 2.1.x)
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification", "UserPromptSubmit", "SessionStart",
    "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
    "PermissionRequest",
}


def test_the_plugin_directory_has_the_documented_layout() -> None:
    manifest = _load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", manifest["name"])  # kebab-case, required
    assert isinstance(manifest["description"], str) and re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    # Only the manifest lives in .claude-plugin/; components sit at the plugin root.
    assert [p.name for p in (PLUGIN / ".claude-plugin").iterdir()] == ["plugin.json"]
    hooks = _load(PLUGIN / "hooks" / "hooks.json")
    assert set(hooks) == {"description", "hooks"}
    # The same hooks object --print-config settings prints, with pi-rules found on PATH.
    assert hooks["hooks"] == config("pi-rules hook claude-code")["hooks"]
    assert set(hooks["hooks"]) <= HOOK_EVENTS
    for event, groups in hooks["hooks"].items():
        for group in groups:
            if "matcher" in group:
                names = group["matcher"].split("|")
                assert all(re.fullmatch(r"[A-Za-z]+", n) for n in names), group["matcher"]
                if event in ("PreToolUse", "PostToolUse"):
                    assert set(names) <= set(TOOLS) | {"Bash"}
    assert _load(PLUGIN / ".mcp.json") == {"mcpServers": {"pi-rules": {"command": "pi-rules", "args": ["mcp"]}}}


def _claude() -> Path | None:
    binary = TOOL_CACHE / f"claude-{CLAUDE_VERSION}" / "node_modules" / ".bin" / "claude"
    return binary if binary.is_file() else None


def test_claude_code_itself_validates_the_plugin(tmp_path: Path) -> None:
    claude = _claude()
    if claude is None:
        pytest.skip(f"Claude Code {CLAUDE_VERSION} is not installed (.ci/install-claude needs node and npm)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "ANTHROPIC_"))}
    done = subprocess.run([str(claude), "plugin", "validate", "--strict", str(PLUGIN)], capture_output=True,
                          text=True, env={**env, "HOME": str(tmp_path)}, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
