"""An index line never offers a text the same section already sends whole, and the
duplicate view (``check`` ``duplicate-body``, ``map``'s duplicates) covers on-demand and
host-native copies. Layout after dataplat/pgmob (Kiro ``inclusion: always`` beside a
Windsurf manual rule with one body; in pgmob itself the Kiro files are links, one rule
each — tests/core/test_aliases.py) and rulesync (tests/fixtures/layouts/rulesync/SOURCE)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_hosts.cli import main

BODY = "# Documentation Standards\n\nWrite a docstring for every public function.\n"
KIRO = "---\ninclusion: always\n---\n" + BODY
WINDSURF = "---\ntrigger: manual\ndescription: Documentation standards\n---\n" + BODY
RULESYNC = Path(__file__).resolve().parent.parent / "fixtures" / "layouts" / "rulesync"


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("CLAUDE_CODE_MANAGED_SETTINGS_PATH", str(tmp_path / "managed"))
    for name in ("PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_MAX_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def pair(isolated):
    repo = isolated / "pgmob"
    (repo / ".kiro" / "steering").mkdir(parents=True)
    (repo / ".windsurf" / "rules").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".kiro" / "steering" / "documentation-standards.md").write_text(KIRO)
    (repo / ".windsurf" / "rules" / "documentation-standards.md").write_text(WINDSURF)
    return repo


def run_json(capsys, repo, *args):
    assert main(["--cwd", str(repo), "--json", *args]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_the_index_does_not_offer_the_text_the_section_sends(capsys, pair):
    found = run_json(capsys, pair, "report")
    assert found["section"].count("Write a docstring for every public function.") == 1
    assert "Reference rules available on demand" not in found["section"]
    copy = next(r for r in found["rules"] if r["plugin"] == "windsurf")
    assert (copy["status"], copy["cause"], copy["delivery"]) == ("dropped", "duplicate", "none")
    assert copy["duplicateOf"] == next(r["id"] for r in found["rules"] if r["plugin"] == "kiro")


def test_muting_the_pinned_copy_brings_the_index_line_back(capsys, pair):
    """The control: the index line is there when the text is not sent."""
    kiro = next(r["id"] for r in run_json(capsys, pair, "list")["rules"] if r["plugin"] == "kiro")
    found = run_json(capsys, pair, "report", "--mute", kiro)
    assert "Reference rules available on demand" in found["section"]
    assert "Write a docstring" not in found["section"]
    copy = next(r for r in found["rules"] if r["plugin"] == "windsurf")
    assert copy["status"] == "on-demand"


def test_check_and_map_report_the_on_demand_copy(capsys, pair):
    warnings = run_json(capsys, pair, "check")["warnings"]
    assert [w["code"] for w in warnings] == ["duplicate-body"]
    assert "has the same text as the pinned rule" in warnings[0]["message"]
    main(["--cwd", str(pair), "map", "--format", "json"])
    duplicates = json.loads(capsys.readouterr().out)["duplicates"]
    assert len(duplicates) == 1 and len(duplicates[0]) == 2


def test_map_for_claude_code_still_names_a_host_native_copy(capsys, isolated):
    repo = isolated / "rulesync"
    shutil.copytree(RULESYNC, repo)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    main(["--cwd", str(repo), "map", "--format", "json", "--host", "claude-code"])
    duplicates = json.loads(capsys.readouterr().out)["duplicates"]
    assert sorted(map(sorted, duplicates)) == [["coding-guidelines", "coding-guidelines-2"]]
