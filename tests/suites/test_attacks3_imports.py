"""Issue 26, attack 5: every command pi-rules writes for a host starts pi-rules without the
project folder on ``sys.path``, so a repository's own ``rules_hosts/`` never runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

PLANT = "import pathlib\npathlib.Path('PLANTED-RAN').write_text('pwned')\n"


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, Path]:
    home, project = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    make_rules(project, {
        "rules_hosts/__init__.py": PLANT,
        "rules_hosts/__main__.py": PLANT,
        ".pi/rules/style.md": rule_text("Use tabs.", alwaysApply=True),
    })
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return {"home": home, "project": project}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_RULES_", "XDG_"))}
    return {**env, "HOME": str(home), "PI_RULES_HOOK_SERVER": "off"}


def _install(planted: dict[str, Path]) -> tuple[str, dict]:
    # Installed the way a user does from the installed package (not from the project).
    done = subprocess.run([sys.executable, "-P", "-m", "rules_hosts", "hook", "claude-code", "--install"],
                          cwd=planted["project"], env=_env(planted["home"]), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads((planted["project"] / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    server = json.loads((planted["project"] / ".mcp.json").read_text())["mcpServers"]["pi-rules"]
    return command, server


def test_the_installed_hook_command_does_not_import_the_projects_package(planted):
    command, _ = _install(planted)
    payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(planted["project"]),
                          "source": "startup"})
    # Claude Code runs the hook through a shell, in the project.
    ran = subprocess.run(command, shell=True, input=payload, cwd=planted["project"], env=_env(planted["home"]),
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert not (planted["project"] / "PLANTED-RAN").exists()
    assert "Use tabs." in ran.stdout  # positive control: the real hook answered


def test_the_installed_mcp_command_does_not_import_the_projects_package(planted):
    _, server = _install(planted)
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}) + "\n"
    ran = subprocess.run([server["command"], *server["args"]], input=request, cwd=planted["project"],
                         env=_env(planted["home"]), capture_output=True, text=True, timeout=60)
    assert not (planted["project"] / "PLANTED-RAN").exists()
    assert '"serverInfo"' in ran.stdout or "pip install" in ran.stderr  # the real pi-rules answered


def test_the_plant_does_run_under_a_plain_dash_m(planted):
    # Positive control: without -P the project folder comes first and the plant runs.
    subprocess.run([sys.executable, "-m", "rules_hosts", "--version"], cwd=planted["project"],
                   env=_env(planted["home"]), capture_output=True, timeout=60)
    assert (planted["project"] / "PLANTED-RAN").exists()
