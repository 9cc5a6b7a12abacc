"""``pi-rules stats`` over journals written before the statistics records existed
(issue 29): the old Claude Code state file and ``serve --session`` file in
tests/fixtures/stats/old-journals were written by the code of that time (SOURCE there
says how). Stats counts what they do carry — the deliveries of Claude Code's deliver-once
records — and says in text, JSON and HTML which sessions were old and what it could not
count for them. Expected deliveries come from what the old hook *answered*
(expected.json), not from the journal lines stats reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "stats" / "old-journals"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
SID = EXPECTED["session"]
RULES = ("house", "legacy", "no-forbidden", "pysrc", "ref")
NOT_COUNTED = ["turns", "active", "listed", "tokens", "section/attachment/pointer", "reads", "fires", "denies"]


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.project, self.home, self.state = tmp_path / "project", tmp_path / "home", tmp_path / "state"
        shutil.copytree(FIXTURE / "project", self.project)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True, timeout=60)
        self.home.mkdir()
        self.journal = self.state / "pi-rules" / "claude-code" / f"{SID}.jsonl"
        self.journal.parent.mkdir(parents=True)
        self.serve = tmp_path / "serve-session.jsonl"
        for source, target in ((FIXTURE / "claude-code" / f"{SID}.jsonl", self.journal),
                               (FIXTURE / "serve-session.jsonl", self.serve)):
            target.write_text(source.read_text().replace("<project>", str(self.project)))
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
        self.env.update(HOME=str(self.home), XDG_STATE_HOME=str(self.state), PI_RULES_HOOK_SERVER="off")

    def stats(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(cwd or self.project), "stats",
                               "--journal", str(self.serve), *args], capture_output=True, text=True, env=self.env,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert EXPECTED["prompt"] not in done.stdout + done.stderr
        return done

    def json(self, *args: str, cwd: Path | None = None) -> dict[str, Any]:
        return dict(json.loads(self.stats("--format", "json", *args, cwd=cwd).stdout))


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _delivered(data: dict[str, Any]) -> dict[str, int]:
    return {row["id"]: row["delivered"] for row in data["rules"]}


def test_old_claude_code_deliveries_are_counted_and_the_rest_is_named(world: World) -> None:
    answered = Counter(EXPECTED["delivered"]["claude-code"])
    assert sum(answered.values()) == 3  # house, ref's index line, pysrc's attachment
    data = world.json()
    assert data["sessions"] == 2 and data["turns"] == 0
    assert _delivered(data) == {rule: answered.get(rule, 0) for rule in RULES}
    for row in data["rules"]:  # nothing an old journal did not record is made up
        assert all(row[k] == 0 for k in ("active", "listed", "tokens", "reads", "fires", "denies", "section",
                                         "attachment", "pointers")), row
    old = {s["host"]: s for s in data["oldSessions"]}
    assert old["claude-code"] == {"session": SID, "host": "claude-code", "counted": True, "deliveries": 3,
                                  "countedFields": ["delivered"], "notCounted": NOT_COUNTED, "why": None}
    # The old serve file kept touched paths only: nothing about rules to count, and it says so.
    assert old["serve"] == {"session": "serve-session", "host": "serve", "counted": True, "deliveries": 0,
                            "countedFields": [], "notCounted": ["delivered", *NOT_COUNTED], "why": None}
    assert {(s["session"], s["oldFormat"]) for s in data["sessionTokens"]} == {(SID, True), ("serve-session", True)}


def test_the_text_and_html_reports_say_which_sessions_were_old(world: World) -> None:
    text = world.stats().stdout
    lines = text.splitlines()
    assert lines[0] == "2 sessions, 0 turns in the last 30 days"
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:7]}
    assert {rule: int(cells[1]) for rule, cells in rows.items()} == {"house": 1, "pysrc": 1, "ref": 1, "legacy": 0,
                                                                      "no-forbidden": 0}
    assert "old-format journals (written before pi-rules recorded statistics): 2" in lines
    assert (f"  {SID} (claude-code): 3 deliveries counted; not recorded, not counted: "
            + ", ".join(NOT_COUNTED)) in lines
    assert ("  serve-session (serve): no rule recorded; not recorded, not counted: delivered, "
            + ", ".join(NOT_COUNTED)) in lines
    assert f"  {SID} (claude-code): 0 tokens, 0 turns (old format: not recorded)" in lines
    page = world.stats("--format", "html", "-o", "-").stdout
    assert "<h2>Old-format journals</h2>" in page and page.count("<li>") >= 2
    assert f"<li>{SID} (claude-code): 3 deliveries counted;" in page
    embedded = page.split('id="stats-data">')[1].split("</script>")[0]
    assert json.loads(embedded)["oldSessions"][0]["session"] == SID


def test_an_old_journal_is_dated_by_its_last_change(world: World) -> None:
    old = time.time() - 40 * 86400
    for path in (world.journal, world.serve):
        os.utime(path, (old, old))
    data = world.json()
    assert data["sessions"] == 0 and data["oldSessions"] == [] and not any(_delivered(data).values())
    data = world.json("--since", "60")
    assert data["sessions"] == 2 and _delivered(data)["house"] == 1


def test_an_old_session_of_another_project_is_named_not_counted(world: World, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(FIXTURE / "project", other)
    subprocess.run(["git", "init", "-q", str(other)], check=True, timeout=60)
    data = world.json(cwd=other)
    old = {s["host"]: s for s in data["oldSessions"]}
    assert old["claude-code"]["counted"] is False
    assert old["claude-code"]["why"] == "no touched path places it in this project; --all-projects counts it"
    assert old["serve"]["counted"] is True  # named with --journal: the user said it belongs
    assert data["sessions"] == 1 and not any(_delivered(data).values())
    assert f"  {SID} (claude-code): not counted: no touched path" in world.stats(cwd=other).stdout
    # Positive control: every project's sessions count the old deliveries.
    assert _delivered(world.json("--all-projects", cwd=other))["house"] == 1


def test_old_and_new_journals_add_up(world: World) -> None:
    """A session of today's hook beside the old one: its records are counted as before,
    and only the old journals are named old."""
    payload = {"session_id": "new-session", "cwd": str(world.project), "hook_event_name": "SessionStart",
               "transcript_path": str(world.home / "t.jsonl"), "source": "startup"}
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"], input=json.dumps(payload),
                          capture_output=True, text=True, env=world.env, cwd=world.home, timeout=60)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## house" in context
    data = world.json()
    assert data["sessions"] == 3 and data["turns"] == 1
    assert _delivered(data)["house"] == 2  # once in the old session, once in the new
    assert sorted(s["session"] for s in data["oldSessions"]) == sorted([SID, "serve-session"])
    new = next(s for s in data["sessionTokens"] if s["session"] == "new-session")
    assert new["oldFormat"] is False and new["turns"] == 1 and new["tokens"] > 0
