"""Pi's host profile without a live Pi (`--host pi`: rebuilt from the disk the way Pi builds
it) and with one (`serve`'s `before_agent_start` carrying Pi's own context files and skills).
The real Pi runs in test_pi_current.py; here the CLI and the server run on real trees."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from rules_hosts.cli import main
from rules_hosts.protocols.serve import Server, serve_stream
from rules_hosts.session.runtime import Session

GUIDE = "# Guide\n\nCANARY-GUIDE: run make test.\n"
READ = "Pi reads this file itself (one AGENTS.md or CLAUDE.md per folder from cwd up); not sent twice"


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _report(tmp_path: Path, monkeypatch: Any, capsys: Any, cwd: Path, *args: str) -> dict[str, dict[str, Any]]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.delenv("PI_RULES_IMPORT", raising=False)
    assert main(["--cwd", str(cwd), "--json", "report", "--host", "pi", *args]) == 0
    return {o["id"]: o for o in json.loads(capsys.readouterr().out)["rules"]}


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "outer" / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    _tree(repo, files)
    return repo


def test_override_first_and_one_file_per_folder(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path, {
        "AGENTS.override.md": "# Override\n\nCANARY-OVERRIDE\n", "AGENTS.md": GUIDE,
        "web/CLAUDE.md": "# Web\n\nCANARY-WEB\n",  # the only file of its folder: Pi's
        "api/AGENTS.md": "# Api\n\nCANARY-API\n", "api/CLAUDE.md": "# Api claude\n\nCANARY-API-CLAUDE\n",
    })
    rules = _report(tmp_path, monkeypatch, capsys, repo / "web")
    assert rules["repo/AGENTS.override"]["reasons"] == [READ]  # Pi 1.6 reads the override first
    assert rules["repo/web/CLAUDE"]["reasons"] == [READ]
    rules = _report(tmp_path, monkeypatch, capsys, repo / "api")
    assert rules["repo/api/AGENTS"]["reasons"] == [READ]
    assert rules["repo/api/CLAUDE"]["status"] == "active"  # Pi read the folder's AGENTS.md instead


def test_a_copy_of_a_file_pi_reads_is_left_out_and_a_different_one_is_not(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path, {"AGENTS.md": GUIDE, "pkg/AGENTS.md": GUIDE, "lib/AGENTS.md": "# Lib\n\nCANARY-LIB\n"})
    rules = _report(tmp_path, monkeypatch, capsys, repo, "--touched", "pkg/a.ts", "--touched", "lib/a.ts")
    assert rules["repo/pkg/AGENTS"]["status"] == "inactive" and rules["repo/pkg/AGENTS"]["reasons"] == [READ]
    assert rules["repo/lib/AGENTS"]["status"] == "active"  # below cwd, its own text: pi-rules sends it


def test_without_a_live_pi_nothing_above_the_git_root_is_looked_at(tmp_path, monkeypatch, capsys):
    """Pi reads up to the filesystem root; pi-rules may not (RULE-SPEC §1), so a copy of a
    file above the git root is caught only by a live Pi's list (test_serve_... below)."""
    repo = _repo(tmp_path, {"pkg/AGENTS.md": GUIDE})
    _tree(tmp_path / "outer", {"AGENTS.md": GUIDE})
    rules = _report(tmp_path, monkeypatch, capsys, repo, "--touched", "pkg/a.ts")
    assert rules["repo/pkg/AGENTS"]["status"] == "active"


def test_a_link_to_a_file_pi_reads_is_left_out(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path, {"AGENTS.md": GUIDE, "pkg/x.ts": ""})
    os.symlink("../AGENTS.md", repo / "pkg" / "CLAUDE.md")
    rules = _report(tmp_path, monkeypatch, capsys, repo / "pkg")
    # One file with two names is one rule (CONTRACT §7), left out under either name.
    assert rules["repo/AGENTS"]["reasons"] == [READ]
    assert rules["repo/AGENTS"]["aliases"] == [str(repo / "pkg" / "CLAUDE.md")] and "repo/pkg/CLAUDE" not in rules


def test_a_file_pi_shows_as_a_literal_import_is_delivered_with_its_import(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path, {"tools/CLAUDE.md": "@style.md\n", "tools/style.md": "# Style\n\nCANARY-STYLE\n"})
    rules = _report(tmp_path, monkeypatch, capsys, repo / "tools")
    assert rules["repo/tools/CLAUDE"]["status"] == "active"
    home = tmp_path / "home"
    done = subprocess.run(["pi-rules", "--cwd", str(repo / "tools"), "render", "--host", "pi"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "HOME": str(home),
                                                      "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent")})
    assert done.stdout.count("CANARY-STYLE") == 1, done.stdout + done.stderr


# ---- a live Pi's report, through serve ------------------------------------------------------


def _serve(tmp_path: Path, repo: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from rules_core.rule_tests.pytest_plugin import fresh_manager
    from rules_core import Engine

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    server = Server(Session(engine, str(repo), trusted=True, host="pi", env={"HOME": str(home)}), log=io.StringIO())
    text = "".join(json.dumps({"id": i, "method": "before_agent_start", "params": p}) + "\n"
                   for i, p in enumerate(requests))
    out = io.StringIO()
    assert serve_stream(server, io.StringIO(text), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_serve_leaves_out_exactly_what_pi_reports(tmp_path):
    repo = _repo(tmp_path, {"AGENTS.md": GUIDE, ".pi/rules/own.md":
                            "---\ndescription: Own\nversion: 1\nalwaysApply: true\n---\nCANARY-OWN\n"})
    pi_file = {"path": str(repo / "AGENTS.md"), "content": GUIDE}
    own = str(repo / ".pi" / "rules" / "own.md")
    answers = _serve(tmp_path, repo, [
        {"context_files": [pi_file]},  # Pi has the guide: left out
        {"context_files": []},  # Pi loaded nothing (--no-context-files): pi-rules sends it
        {"context_files": [pi_file], "skills": [{"name": "own", "path": own}]},  # Pi owns that file
    ])
    sections = [a["result"]["section"] or "" for a in answers]
    assert "CANARY-GUIDE" not in sections[0] and "CANARY-OWN" in sections[0]
    assert "CANARY-GUIDE" in sections[1]
    assert answers[2]["result"]["action"] == "remove"  # nothing left to send


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
                        ["path", "content", "name", "x"]), inner, max_size=4), max_leaves=12))
def test_any_json_in_the_lists_is_answered_never_an_error(tmp_path, value):
    repo = tmp_path / "r"
    repo.mkdir(exist_ok=True)
    answers = _serve(tmp_path, repo, [{"context_files": value, "skills": value}
                                      if isinstance(value, list) or value is None else {"context_files": [value]}])
    assert len(answers) == 1 and "result" in answers[0], answers
