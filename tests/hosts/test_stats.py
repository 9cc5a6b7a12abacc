"""``pi-rules stats`` over real journals (issue 29): a Claude Code session driven through
real hook subprocesses and a ``pi-rules serve --session`` session; the test counts, from
what each host was answered and from ``pi-rules report``, what stats must say."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from claude_driver import ClaudeDriver, ids
from rules_core.rule_tests.pytest_plugin import rule_text
from test_map import Browser, chromium  # noqa: F401 - chromium is the fixture that finds the browser

FORBIDDEN = "FORBIDDEN_TOKEN"
RULES = {
    ".pi/rules/house.md": rule_text("House style.", description="House style", alwaysApply=True),
    ".pi/rules/pysrc.md": rule_text("Type-hint Python.", description="Python sources", globs=["src/**/*.py"],
                                    match="touched"),
    ".pi/rules/ref.md": rule_text("Reference body.", description="Reference", alwaysApply=True, load="on-demand"),
    ".pi/rules/no-forbidden.md": rule_text(f"Never write {FORBIDDEN.lower()}.", description="No forbidden token",
                                           condition=FORBIDDEN, scope="tool:write", interruptMode="tool-only"),
    ".pi/rules/legacy.md": rule_text("Old code.", description="Legacy", globs=["legacy/**"], match="touched"),
}
POINTER = re.compile(r"^- (\S+) — .*\((?:read it with the Read tool|fetch with the read_rule tool)\)$", re.M)
SECRET_PROMPT = "my secret prompt words 7f3a"


class Expected:
    """Counts the test derives itself: deliveries from the hosts' answers, activity from
    ``pi-rules report`` over the same facts, tokens from ``report``'s estimates."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project, self.env = project, env
        self.counts: dict[str, Counter[str]] = {}
        self.session_tokens: list[int] = []

    def count(self, rule_id: str, key: str, n: int = 1) -> None:
        self.counts.setdefault(rule_id, Counter())[key] += n

    def report(self, host: str, touched: list[str]) -> dict[str, Any]:
        args = [a for path in touched for a in ("--touched", path)]
        done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(self.project), "report", "--json",
                               "--host", host, "--no-branch", *args], capture_output=True, text=True,
                              env=self.env, timeout=60)
        assert done.returncode == 0, done.stderr
        return {r["id"]: r for r in json.loads(done.stdout)["rules"]}

    def turn(self, host: str, touched: list[str]) -> None:
        for rule_id, rule in self.report(host, touched).items():
            if rule["status"] == "active":
                self.count(rule_id, "active")
            elif rule["status"] == "on-demand":
                self.count(rule_id, "listed")

    def delivered(self, text: str | None, tokens: dict[str, int], by_path: dict[str, str]) -> int:
        """Counts one answer's deliveries; the rule tokens it carried."""
        spent = 0
        for rule_id in [i for i in ids(text) if i != "Reference rules available on demand"]:
            self.count(rule_id, "delivered")
            self.count(rule_id, "tokens", tokens[rule_id])
            spent += tokens[rule_id]
        for path in POINTER.findall(text or ""):
            self.count(by_path[path], "delivered")
            self.count(by_path[path], "pointers")
        return spent


@pytest.fixture
def sessions(tmp_path: Path) -> tuple[ClaudeDriver, Path, Expected]:
    driver = ClaudeDriver(tmp_path)
    driver.write(RULES)
    expected = Expected(driver.cwd, {**driver.env, "PI_RULES_HOOK_SERVER": "off"})
    rules = expected.report("claude-code", [])
    tokens = {rule_id: rule["tokens"] for rule_id, rule in rules.items()}
    claude_paths = {rule["path"]: rule_id for rule_id, rule in rules.items()}
    pi_paths = {rule["relativePath"]: rule_id for rule_id, rule in rules.items()}

    # Claude Code: real hook processes, one per event.
    spent = expected.delivered(driver.start(), tokens, claude_paths)
    expected.turn("claude-code", [])
    spent += expected.delivered(driver.prompt(SECRET_PROMPT), tokens, claude_paths)
    expected.turn("claude-code", [])
    spent += expected.delivered(driver.tool("Write", {"file_path": driver.path("src/app.py"), "content": "x = 1\n"}),
                                tokens, claude_paths)
    driver.tool("Read", {"file_path": driver.path(".pi/rules/ref.md")})
    expected.count("ref", "reads")
    denied = driver.send("PreToolUse", tool_name="Write",
                         tool_input={"file_path": driver.path("src/bad.py"), "content": f"V = '{FORBIDDEN}'\n"})
    assert denied is not None and denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    expected.count("no-forbidden", "fires")
    expected.count("no-forbidden", "denies")
    spent += expected.delivered(driver.prompt("again"), tokens, claude_paths)
    expected.turn("claude-code", ["src/app.py", ".pi/rules/ref.md", "src/bad.py"])
    expected.session_tokens.append(spent)

    # pi-rules serve --session: the Pi host's protocol, one process.
    store = tmp_path / "serve-session.jsonl"
    lines = [
        {"method": "session_start", "params": {"reason": "startup"}},
        {"method": "before_agent_start", "params": {"prompt": SECRET_PROMPT, "tools": ["read", "write"], "branch": None}},
        {"method": "tool_start", "params": {"tool": "write", "args": {"path": "src/x.py"}}},
        {"method": "tool_result", "params": {"tool": "write", "content": [{"type": "text", "text": "ok"}]}},
        {"method": "read_rule", "params": {"args": {"path": "ref.md"}}},
        {"method": "stream_turn", "params": {}},
        {"method": "stream_delta", "params": {"source": "tool", "tool": "write", "call_id": "c1", "path": "src/y.py",
                                              "text": f"V = '{FORBIDDEN}'"}},
        {"method": "before_agent_start", "params": {"prompt": "again", "tools": ["read", "write"], "branch": None}},
    ]
    data = "".join(json.dumps({"id": i, **line}) + "\n" for i, line in enumerate(lines))
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(driver.cwd), "serve", "--session",
                           str(store)], input=data, capture_output=True, text=True, env=driver.env, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line)["result"] for line in done.stdout.splitlines()]
    first, attached, read, fired, second = answers[1], answers[3], answers[4], answers[6], answers[7]
    spent = expected.delivered(first["section"], tokens, pi_paths)
    expected.turn("pi", [])
    for rule_id in attached["attached"]:
        expected.count(rule_id, "delivered")
        expected.count(rule_id, "tokens", tokens[rule_id])
        spent += tokens[rule_id]
    assert read["text"] == "Reference body."
    expected.count("ref", "reads")
    for firing in fired["fired"]:
        expected.count(firing["id"], "fires")
        if firing["interrupt"]:
            expected.count(firing["id"], "denies")
    # The second turn's section repeats what the first delivered: only new ids count.
    before = set(ids(first["section"])) | set(attached["attached"])
    for rule_id in ids(second["section"]):
        if rule_id not in before:
            spent += expected.delivered(f"## {rule_id}", tokens, pi_paths)
    expected.turn("pi", ["src/x.py"])
    expected.session_tokens.append(spent)
    return driver, store, expected


def _stats(driver: ClaudeDriver, store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rules_hosts", "--cwd", str(driver.cwd), "stats", "--journal",
                           str(store), *args], capture_output=True, text=True, env=driver.env, timeout=60)


def test_stats_json_gives_the_counts_of_both_sessions(sessions: tuple[ClaudeDriver, Path, Expected]) -> None:
    driver, store, expected = sessions
    done = _stats(driver, store, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["sessions"] == 2 and data["turns"] == 5
    keys = ("active", "listed", "delivered", "pointers", "tokens", "reads", "fires", "denies")
    got = {row["id"]: {k: row[k] for k in keys} for row in data["rules"]}
    want = {rule_id: {k: expected.counts.get(rule_id, Counter())[k] for k in keys} for rule_id in got}
    assert got == want
    assert set(got) == {"house", "pysrc", "ref", "no-forbidden", "legacy"}
    assert got["no-forbidden"]["denies"] == 2 and got["ref"]["reads"] == 2  # the scenario ran as meant
    assert sorted(s["tokens"] for s in data["sessionTokens"]) == sorted(expected.session_tokens)
    advice = {(a["id"], a["code"]) for a in data["advice"]}
    assert ("legacy", "never-active") in advice
    assert ("house", "always-active") in advice and ("pysrc", "always-active") not in advice


def test_stats_never_prints_prompt_text_and_journals_hold_none(sessions: tuple[ClaudeDriver, Path, Expected]) -> None:
    driver, store, _ = sessions
    outputs = [_stats(driver, store, "--format", f, "-o", "-").stdout for f in ("text", "json", "html")]
    assert all(SECRET_PROMPT not in out for out in outputs)
    # Positive control: the words did reach the hosts; the statistics records hold none.
    journals = [driver.state_file(), store]
    assert all(SECRET_PROMPT not in p.read_text() for p in journals)
    assert any('"type":"pi-rules/turn"' in p.read_text() for p in journals)


def test_stats_text_lists_each_rule_and_the_advice(sessions: tuple[ClaudeDriver, Path, Expected]) -> None:
    driver, store, expected = sessions
    done = _stats(driver, store)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "2 sessions, 5 turns in the last 30 days"
    row = next(line.split() for line in lines if line.startswith("no-forbidden "))
    assert row[1:] == ["0", "0", "0", "0", "0", "2", "2"]
    assert "advice legacy: never active in 30 days: dead? remove it or fix its globs" in lines


def test_stats_since_leaves_out_older_records(sessions: tuple[ClaudeDriver, Path, Expected]) -> None:
    driver, store, _ = sessions
    for path in (driver.state_file(), store):  # every record 40 days older
        lines = []
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if "at" in record:
                record["at"] -= 40 * 86400
            lines.append(json.dumps(record, separators=(",", ":")))
        path.write_text("\n".join(lines) + "\n")
    recent = json.loads(_stats(driver, store, "--json").stdout)
    older = json.loads(_stats(driver, store, "--json", "--since", "41").stdout)
    assert recent["sessions"] == 0 and older["sessions"] == 2


def test_stats_page_in_headless_chromium_draws_one_bar_per_rule(
    sessions: tuple[ClaudeDriver, Path, Expected], tmp_path: Path, chromium: str
) -> None:
    driver, store, _ = sessions
    page = tmp_path / "stats.html"
    assert _stats(driver, store, "--format", "html", "-o", str(page)).returncode == 0
    data = json.loads(_stats(driver, store, "--json").stdout)
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.open(page.as_uri(), width=1200, height=900)
        assert browser.wait_for("document.querySelectorAll('#chart-tokens rect').length > 0")
        bars = browser.value("[...document.querySelectorAll('#chart-delivered rect')].map(r => "
                             "[+r.dataset.value, r.getBoundingClientRect().width])")
        assert [b[0] for b in bars] == [r["delivered"] for r in data["rules"]]
        widest = max(b[1] for b in bars)
        top = max(r["delivered"] for r in data["rules"])
        # Bars are drawn to scale: each as wide as its share of the largest.
        assert all(abs(width - widest * value / top) <= 1 for value, width in bars)
        assert browser.value("document.querySelectorAll('#chart-sessions rect').length") == 2
        assert browser.value("document.querySelectorAll('#rules tr').length") == len(data["rules"]) + 1
        assert browser.value("document.getElementById('summary').textContent") == \
            "2 sessions, 5 turns in the last 30 days"
        shot = browser.screenshot()
    assert shot.startswith(b"\x89PNG") and len(shot) > 10_000
    if os.environ.get("PI_RULES_STATS_SCREENSHOT"):  # how docs/stats.png is refreshed on purpose
        Path(os.environ["PI_RULES_STATS_SCREENSHOT"]).write_bytes(shot)
    if os.environ.get("PI_RULES_STATS_DUMP"):  # for a human: the text and JSON of this run
        Path(os.environ["PI_RULES_STATS_DUMP"]).write_text(_stats(driver, store).stdout + json.dumps(data, indent=1))


def test_stats_renderings_are_stable(tmp_path: Path) -> None:
    """Text, JSON and HTML of fixed journals: tests/golden/stats.* (PI_RULES_UPDATE_GOLDEN=1 rewrites)."""
    from golden_files import check_golden
    from rules_core import Engine
    from rules_core.rule_tests.pytest_plugin import make_rules
    from rules_hosts.stats.read import collect
    from rules_hosts.stats.report import render_html, render_text, stats_json

    project = tmp_path / "project"
    make_rules(project, {name: RULES[name] for name in (".pi/rules/house.md", ".pi/rules/ref.md",
                                                         ".pi/rules/legacy.md")})
    now = 1_800_000_000
    journal = [
        {"type": "pi-rules/turn", "at": now - 60, "cwd": str(project), "active": ["house"], "listed": ["ref"],
         "tokens": {"house": 3, "ref": 4}},
        {"type": "pi-rules/delivery", "at": now - 60, "via": "section", "ids": ["house", "ref"], "pointers": ["ref"],
         "paths": {"ref": "/p/.pi/rules/ref.md"}, "tokens": {"house": 3, "ref": 4}},
        {"type": "pi-rules/read", "at": now - 50, "ids": ["ref"]},
        {"type": "pi-rules/stream", "at": now - 40, "fired": ["guard"], "denied": ["guard"]},
        {"type": "custom", "customType": "pi-rules-md/touched", "data": {"paths": ["never/counted.py"]}},
    ]
    path = tmp_path / "0000-session.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in journal))
    stats = collect([("claude-code", str(path))], str(project), 30, now=now)
    data = stats_json(stats, Engine(env={"HOME": str(tmp_path)}).discover(str(project)).rules)
    check_golden("stats.txt", render_text(data))
    check_golden("stats.json", json.dumps(data, indent=2, sort_keys=True) + "\n")
    check_golden("stats.html", render_html(data))
