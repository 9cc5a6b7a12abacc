"""Issue 26, attack 7: the trust store never records `/`, the home folder or a folder
above it, and a hint never tells the user to (docs/trust.md)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from suite_helpers import cli_process

RULE = {".pi/rules/style.md": rule_text("HOME-RULE", alwaysApply=True)}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "users" / "me"
    make_rules(home, {".cursor/rules/mine.mdc": "---\nalwaysApply: true\n---\nMine.\n"})
    return home


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_RULES_", "XDG_"))}
    return {**env, "HOME": str(home)}


def _run(home: Path, cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return cli_process(*args, cwd=cwd, env=environment(home), stdin=stdin)


def _store(home: Path) -> Path:
    return home / ".config" / "pi-rules" / "trusted.json"


@pytest.mark.parametrize("where", ["/", "home", "above-home"])
def test_trust_refuses_root_home_and_above(home, where):
    target = {"/": Path("/"), "home": home, "above-home": home.parent}[where]
    result = _run(home, home, "trust", str(target))
    assert result.returncode == 1
    assert "never trusts it" in result.stderr and "project's own folder" in result.stderr
    assert not _store(home).exists()


def test_trust_of_a_project_below_home_still_works(home):
    # Positive control: the refusal is about width, not about living below home.
    project = home / "src" / "repo"
    make_rules(project, RULE)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert _run(home, project, "trust").returncode == 0
    assert json.loads(_store(home).read_text())["trusted"] == [str(project)]


def test_a_store_naming_home_or_root_trusts_nothing_below(home):
    project = home / "src" / "cloned"
    make_rules(project, RULE)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _store(home).parent.mkdir(parents=True)
    _store(home).write_text(json.dumps({"version": 1, "trusted": [str(home), "/"]}))
    listed = json.loads(_run(home, project, "--trust-store", "--json", "list").stdout)
    assert "style" not in [r["id"] for r in listed["rules"]]


def test_pi_in_home_is_not_hinted_to_trust_home(home):
    request = json.dumps({"id": 1, "method": "trust_status"}) + "\n"
    result = json.loads(_run(home, home, "--trust-store", "serve", stdin=request).stdout)["result"]
    assert result["trusted"] is False and result["project_rules"] is True
    assert str(home) not in result["hint"] and "never trusted" in result["hint"]


# -- attack 6: a rule test's env -------------------------------------------------------------------


def _rule_test(home: Path, project: Path) -> subprocess.CompletedProcess[str]:
    return _run(home, project, "test")


@pytest.mark.parametrize("variable", ["COPILOT_CUSTOM_INSTRUCTIONS_DIRS", "HOME", "XDG_CONFIG_HOME"])
def test_a_rule_tests_env_cannot_point_pi_rules_at_other_folders(home, tmp_path, variable):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN-1234\n")
    project = tmp_path / "repo"
    folder = project / "instructions"
    make_rules(project, {".pi/rules/style.md": rule_text("Tabs.", alwaysApply=True)})
    folder.mkdir()
    os.symlink(secret, folder / "x.instructions.md")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    make_rules(project, {".pi/rules.test.yaml": (
        f"- name: oracle\n  env: {{{variable}: {json.dumps(str(folder))}}}\n"
        "  expect: {section_contains: [SECRET-TOKEN-1234]}\n")})
    done = _rule_test(home, project)
    assert done.returncode == 1
    assert f"env {variable}: a rule test may set only pi-rules' settings variables" in done.stdout + done.stderr
    assert "SECRET-TOKEN" not in done.stdout.replace("[SECRET-TOKEN-1234]", "")


def test_a_rule_tests_settings_variables_are_still_accepted(home, tmp_path):
    # Positive control: the settings' own variables pass validation and the case runs.
    project = tmp_path / "repo"
    make_rules(project, {".pi/rules/style.md": rule_text("Tabs.", alwaysApply=True),
                         ".pi/rules.test.yaml": "- name: budget\n  env: {PI_RULES_MAX_TOKENS: '5000'}\n"
                                                "  expect: {active: [style]}\n"})
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    done = _rule_test(home, project)
    assert done.returncode == 0, done.stdout
