"""A byte-identical copy of a file the host reads itself is left out too, with the reason
naming the native file (docs/hosts.md, "Files a host reads natively"). Real layout:
rulesync's own repository (tests/fixtures/layouts/rulesync/SOURCE): a Copilot
``.instructions.md`` with the body of a ``.claude/rules`` file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_hosts.cli import main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "layouts" / "rulesync"
CODING = "If the arguments are multiple, you should use object as the argument."
TESTING = "Test code files should be placed next to the implementation."


@pytest.fixture
def rulesync(tmp_path, monkeypatch):
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("CLAUDE_CODE_MANAGED_SETTINGS_PATH", str(tmp_path / "managed"))
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20000")
    for name in ("PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "rulesync"
    shutil.copytree(FIXTURE, repo)
    (repo / "SOURCE").unlink()
    (repo / "src" / "a.test.ts").write_text("")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def report(capsys, repo, *args):
    assert main(["--cwd", str(repo), "--json", "report", "--touched", "src/a.test.ts", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_copilot_copy_of_a_claude_rule_is_left_out_naming_the_claude_file(capsys, rulesync):
    found = report(capsys, rulesync, "--host", "claude-code")
    copy = next(r for r in found["rules"] if r["relativePath"] == "coding-guidelines.instructions.md")
    assert copy["status"] == "inactive"
    assert copy["reasons"] == ["the same text as .claude/rules/coding-guidelines.md, which claude-code reads "
                               "itself; pi-rules leaves this copy out so it is not sent twice"]
    assert CODING not in found["section"]
    # The control: a Copilot file with a text of its own is still sent.
    assert found["section"].count(TESTING) == 1


def test_without_a_host_the_copy_is_sent_once(capsys, rulesync):
    found = report(capsys, rulesync)
    assert found["section"].count(CODING) == 1
    statuses = sorted(r["status"] for r in found["rules"] if "coding-guidelines" in r["relativePath"])
    assert statuses == ["active", "dropped"]


def test_a_changed_byte_makes_it_a_rule_of_its_own(capsys, rulesync):
    path = rulesync / ".github" / "instructions" / "coding-guidelines.instructions.md"
    path.write_text(path.read_text().replace("multiple,", "several,"))
    found = report(capsys, rulesync, "--host", "claude-code")
    copy = next(r for r in found["rules"] if r["relativePath"] == "coding-guidelines.instructions.md")
    assert copy["status"] == "active"
    assert "If the arguments are several" in found["section"]


def test_the_copy_is_not_reachable_with_read_rule_under_the_host(capsys, rulesync):
    code = main(["--cwd", str(rulesync), "read", "coding-guidelines.instructions.md", "--host", "claude-code"])
    assert (code, "Unknown rule" in capsys.readouterr().out) == (1, True)
    code = main(["--cwd", str(rulesync), "read", "coding-guidelines.instructions.md"])
    assert (code, CODING in capsys.readouterr().out) == (0, True)
