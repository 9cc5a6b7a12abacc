"""What reaches the model on real monorepo layouts (issue 24, parts 2, 3 and 5).

The layouts are real repositories' memory files and rules, kept byte for byte under
tests/fixtures/delivery/<name>/ (each folder's SOURCE names owner/name@commit). Every test
copies one into a fresh git repository and runs the CLI (or the Claude Code hook, as a
real subprocess) with default settings, as a new user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claude_driver import ClaudeDriver
from golden_files import check_golden
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.cli import main

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
INDEX_HEADING = "## Reference rules available on demand"
RUN = [sys.executable, "-m", "rules_hosts"]


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``layout(name)``: the fixture as a git repository of its own, with the user's
    settings, HOME and environment of a fresh account."""
    for key in list(os.environ):
        if key.startswith(("PI_RULES_", "XDG_CONFIG")) and key not in ("PI_RULES_HOOK_SERVER", "PI_RULES_UPDATE_GOLDEN"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()

    def make(name: str) -> Path:
        project = tmp_path / name
        shutil.copytree(FIXTURES / name, project, symlinks=True)
        (project / "SOURCE").unlink()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        return project

    return make


def report(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> dict:
    assert main(["--cwd", str(project), "--json", "report", "--no-branch", *args]) == 0
    return json.loads(capsys.readouterr().out)


def text_report(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> str:
    assert main(["--cwd", str(project), "report", "--no-branch", *args]) == 0
    return capsys.readouterr().out


def rule_at(data: dict, project: Path, relative: str) -> dict:
    return next(r for r in data["rules"] if r["path"] == str(project / relative))


def canary(project: Path, relative: str) -> str:
    """The file's longest line found in no other file of the layout: said twice only when
    the file's text is."""
    others = "\n".join(p.read_text(errors="replace") for p in project.rglob("*")
                       if p.is_file() and not p.is_symlink() and ".git" not in p.parts and p != project / relative)
    text = (project / relative).read_text()
    return max((line for line in text.splitlines() if line not in others and text.count(line) == 1), key=len)


# -- part 3: memory files budgeted as the agents budget them ------------------------------

PACKAGE_FILES = [
    ("workers-sdk", "packages/wrangler/src/index.ts", "packages/wrangler/AGENTS.md"),
    ("workers-sdk", "packages/workers-auth/src/index.ts", "packages/workers-auth/AGENTS.md"),
    ("workers-sdk", "packages/create-cloudflare/src/cli.ts", "packages/create-cloudflare/AGENTS.md"),
    ("trigger.dev", "apps/webapp/app/root.tsx", "apps/webapp/CLAUDE.md"),
    ("trigger.dev", "internal-packages/database/prisma/schema.prisma", "internal-packages/database/CLAUDE.md"),
    ("trigger.dev", "packages/core/src/index.ts", "packages/core/CLAUDE.md"),
    ("vercel-ai", "packages/ai/src/index.ts", "packages/ai/AGENTS.md"),
    ("inbox-zero", "apps/web/app/layout.tsx", "apps/web/AGENTS.md"),
]


@pytest.mark.parametrize(("name", "touched", "memory"), PACKAGE_FILES)
def test_touching_a_package_file_delivers_its_memory_file_whole(layout, capsys, name, touched, memory) -> None:
    project = layout(name)
    data = report(capsys, project, "--touched", touched)
    rule = rule_at(data, project, memory)
    assert (rule["status"], rule["delivery"]) == ("active", "section"), f"{name}: {memory} is {rule['status']}"
    assert (project / memory).read_text().rstrip("\n") in data["section"]
    assert data["section"].count(canary(project, memory)) == 1
    # ...and the root memory file too, each once: the repository's main instructions.
    root = rule_at(data, project, "AGENTS.md")
    assert root["status"] == "active" or root.get("duplicateOf"), f"{name}: root AGENTS.md is {root['status']}"
    assert data["section"].count(canary(project, "AGENTS.md")) == 1


def test_every_kiro_always_file_is_sent_with_nothing_touched(layout, capsys) -> None:
    # gitgov: seven `inclusion: always` steering files, ~6600 tokens; the section's 2000 held two.
    project = layout("gitgov")
    data = report(capsys, project)
    always = [r for r in data["rules"] if r["plugin"] == "kiro" and r["status"] != "inactive"]
    assert len(always) == 7 and {r["status"] for r in always} == {"active"}
    for rule in always:
        relative = os.path.relpath(rule["path"], project)
        assert data["section"].count(canary(project, relative)) == 1, relative
    assert data["budget"]["used"] == 0 and data["pinned"]["pools"][0]["used"] == sum(r["tokens"] for r in always)


def test_the_memory_pool_leaves_the_section_budget_to_the_other_rules(layout, capsys) -> None:
    project = layout("trigger.dev")
    data = report(capsys, project, "--touched", "apps/webapp/app/root.tsx")
    memory = [r for r in data["rules"] if r["plugin"] in ("agents-md", "claude-md", "copilot")
              and r["status"] == "active" and not r["path"].endswith(".instructions.md")]
    pool = next(p for p in data["pinned"]["pools"] if p["name"] == "memory")
    assert pool == {"name": "memory", "used": sum(r["tokens"] for r in memory), "limit": 8192,
                    "summary": pool["summary"]}
    # The section's budget (RULE-SPEC) counts the other rules only, as before.
    others = [r for r in data["rules"] if r["status"] == "active" and r not in memory]
    assert data["budget"] == {"used": sum(r["tokens"] for r in others), "limit": 2000}
    assert others and data["budget"]["used"] <= 2000


def test_the_farthest_memory_file_is_left_out_first_and_named_in_the_index(layout, capsys) -> None:
    project = layout("workers-sdk")
    touched = ["packages/workers-auth/src/index.ts", "packages/wrangler/src/index.ts",
               "packages/miniflare/src/index.ts", "packages/create-cloudflare/src/cli.ts"]
    data = report(capsys, project, *(arg for path in touched for arg in ("--touched", path)))
    nested = [rule_at(data, project, p.split("/src/")[0] + "/AGENTS.md") for p in touched]
    assert [r["status"] for r in nested] == ["active"] * 4  # every package's own file, whole
    root = rule_at(data, project, "AGENTS.md")
    assert (root["status"], root["cause"], root["delivery"]) == ("dropped", "budget", "index")
    index = data["section"].split(INDEX_HEADING, 1)[1]
    assert "- AGENTS.md — AGENTS.md (fetch with the read_rule tool)" in index
    assert canary(project, "AGENTS.md") not in data["section"]
    # Positive control: with fewer packages touched the root file fits and is sent.
    fewer = report(capsys, project, "--touched", touched[1])
    assert fewer["section"].count(canary(project, "AGENTS.md")) == 1


def test_report_shows_the_pool_beside_the_section_budget(layout, capsys) -> None:
    project = layout("workers-sdk")
    out = text_report(capsys, project, "--touched", "packages/wrangler/src/index.ts", "--touched",
                      "packages/workers-auth/src/index.ts", "--touched", "packages/miniflare/src/index.ts",
                      "--touched", "packages/create-cloudflare/src/cli.ts")
    lines = out.splitlines()
    assert lines[-2:] == ["budget: 0/2000 estimated tokens", lines[-1]] and lines[-1].startswith("section: ~")
    assert ("pool memory: 6085/8192 estimated tokens — memory files (AGENTS.md, CLAUDE.md, GEMINI.md, …), "
            "nearest folder first") in lines
    assert ("  AGENTS.md · 2287 tokens, not sent; listed in the index instead (the memory pool is full)") in lines
    assert ("  over budget: needs 2287 tokens, 2149 of 8192 left in the memory pool when selection reached it "
            "(nearest folder first)") in lines


def test_report_and_section_bytes_with_the_pool(layout, capsys) -> None:
    project = layout("workers-sdk")
    touched = ("--touched", "packages/wrangler/src/index.ts", "--touched", "packages/workers-auth/src/index.ts",
               "--touched", "packages/miniflare/src/index.ts", "--touched", "packages/create-cloudflare/src/cli.ts")
    check_golden("report-memory-pool.txt", text_report(capsys, project, *touched))
    data = report(capsys, project, *touched)
    check_golden("report-memory-pool.json", json.dumps(data["pinned"], indent=2) + "\n")
    index = data["section"][data["section"].index(INDEX_HEADING):]
    check_golden("section-memory-pool-index.md", index)


def test_check_names_memory_files_their_pool_cannot_hold(layout, capsys) -> None:
    project = layout("vercel-ai")
    # A third always-read file: with AGENTS.md (~3353) the pool's 8192 cannot hold both.
    (project / "GEMINI.md").write_text("# Gemini\n\n" + "Prefer small, reviewed changes. " * 800 + "\n")
    assert main(["--cwd", str(project), "check"]) == 0  # warnings alone
    check_golden("check-memory-pool.txt", capsys.readouterr().out)
    data = report(capsys, project)
    gemini = rule_at(data, project, "GEMINI.md")
    assert (gemini["status"], gemini["delivery"]) == ("dropped", "index")
    assert "- GEMINI.md — Gemini (fetch with the read_rule tool)" in data["section"]


def test_native_rules_keep_the_spec_budget_beside_memory_files(layout, capsys) -> None:
    project = layout("vercel-ai")
    (project / ".pi/rules").mkdir(parents=True)
    # 1900 tokens: with the 3353-token AGENTS.md in the same budget it could not be sent.
    (project / ".pi/rules/big.md").write_text(rule_text("x" * 7600, alwaysApply=True))
    (project / ".pi/rules/small.md").write_text(rule_text("y" * 800, alwaysApply=True))
    data = report(capsys, project, "--touched", "packages/ai/src/index.ts")
    assert rule_at(data, project, ".pi/rules/big.md")["status"] == "active"
    small = rule_at(data, project, ".pi/rules/small.md")
    assert (small["status"], small["cause"], small["room"]) == ("dropped", "budget", 100)  # RULE-SPEC's arithmetic
    assert data["budget"] == {"used": 1900, "limit": 2000}
    assert data["section"].count(canary(project, "AGENTS.md")) == 1  # through its pool


# -- part 5: pointers only to what is delivered -------------------------------------------

POINTER = "(AGENTS.md reaches you as a rule of its own)"


def test_a_claude_md_bridge_points_to_agents_md_sent_in_the_same_section(layout, capsys) -> None:
    project = layout("trigger.dev")
    data = report(capsys, project, "--touched", "apps/webapp/app/root.tsx")
    assert rule_at(data, project, "CLAUDE.md")["status"] == rule_at(data, project, "AGENTS.md")["status"] == "active"
    assert data["section"].count(POINTER) == 1
    assert data["section"].count(canary(project, "AGENTS.md")) == 1


def test_a_bridge_to_a_muted_agents_md_carries_its_text_instead(layout, capsys) -> None:
    project = layout("trigger.dev")
    agents = rule_at(report(capsys, project), project, "AGENTS.md")["id"]
    data = report(capsys, project, "--mute", agents)
    claude = rule_at(data, project, "CLAUDE.md")
    assert claude["status"] == "active" and claude["tokens"] > 3000  # 3 tokens as a pointer
    assert POINTER not in data["section"]
    assert data["section"].count(canary(project, "AGENTS.md")) == 1  # through CLAUDE.md


def test_a_bridge_to_a_disabled_agents_md_carries_its_text_instead(layout, capsys) -> None:
    project = layout("inbox-zero")
    (project / ".pi").mkdir()
    (project / ".pi/rules.toml").write_text('disable = ["AGENTS.md"]\n')
    data = report(capsys, project)
    assert rule_at(data, project, "AGENTS.md")["status"] == "inactive"
    assert POINTER not in data["section"]
    assert data["section"].count(canary(project, "AGENTS.md")) == 1


def test_a_nested_bridge_points_to_its_folders_agents_md(layout, capsys) -> None:
    project = layout("inbox-zero")
    data = report(capsys, project, "--touched", "apps/web/app/layout.tsx")
    assert rule_at(data, project, "apps/web/CLAUDE.md")["status"] == "active"
    assert "(apps/web/AGENTS.md reaches you as a rule of its own)" in data["section"]
    assert data["section"].count(canary(project, "apps/web/AGENTS.md")) == 1
    muted = rule_at(data, project, "apps/web/AGENTS.md")["id"]
    alone = report(capsys, project, "--touched", "apps/web/app/layout.tsx", "--mute", muted)
    assert "(apps/web/AGENTS.md reaches you" not in alone["section"]
    assert alone["section"].count(canary(project, "apps/web/AGENTS.md")) == 1  # inlined in CLAUDE.md


def test_a_pointer_stands_while_its_rule_is_an_index_line(layout, capsys) -> None:
    project = layout("workers-sdk")
    touched = ["packages/workers-auth/src/index.ts", "packages/wrangler/src/index.ts",
               "packages/miniflare/src/index.ts", "packages/create-cloudflare/src/cli.ts"]
    data = report(capsys, project, *(arg for path in touched for arg in ("--touched", path)))
    assert rule_at(data, project, "AGENTS.md")["delivery"] == "index"
    assert POINTER in data["section"] and "- AGENTS.md — " in data["section"]


def test_a_bridge_to_a_file_pi_reads_itself_keeps_the_pointer(layout, capsys) -> None:
    project = layout("trigger.dev")
    data = report(capsys, project, "--host", "pi")
    assert rule_at(data, project, "AGENTS.md")["status"] == "inactive"  # Pi reads it itself
    assert POINTER in data["section"] and canary(project, "AGENTS.md") not in data["section"]


# -- part 2: Claude Code attachments agree with report ------------------------------------


def minimal(driver: ClaudeDriver) -> None:
    """The issue's minimal case: rules of 25 and 18 tokens, budget 60."""
    driver.env["PI_RULES_MAX_TOKENS"] = "60"
    driver.write({
        ".pi/rules/base.md": rule_text("b" * 100, alwaysApply=True),
        ".pi/rules/ts.md": rule_text("t" * 72, description="TypeScript", globs=["src/**"]),
    })


def test_claude_code_attaches_a_rule_report_admits_whole(tmp_path: Path) -> None:
    claude = ClaudeDriver(tmp_path)
    minimal(claude)
    assert "b" * 100 in (claude.start() or "")
    block = claude.tool("Read", {"file_path": claude.path("src/a.ts")}) or ""
    assert "## ts\n> Triggered by: touched src/a.ts\n\n" + "t" * 72 in block
    assert "(read it with the Read tool)" not in block
    listed = subprocess.run(
        [*RUN, "--cwd", str(claude.cwd), "--json", "report", "--host", "claude-code", "--touched", "src/a.ts"],
        capture_output=True, text=True, env=claude.env, check=True)
    assert {r["id"]: r["status"] for r in json.loads(listed.stdout)["rules"]} == {"base": "active", "ts": "active"}


def test_pi_keeps_the_spec_arithmetic_for_the_same_case(tmp_path: Path) -> None:
    # RULE-SPEC §6: the fresh pinned sum includes the new rule, so 60 - 43 leaves 17 < 18 —
    # a pointer, since Pi's next turn sends the section (with the text) anyway.
    claude = ClaudeDriver(tmp_path)  # only for its project and environment
    minimal(claude)
    lines = "\n".join(json.dumps(e) for e in (
        {"id": 1, "method": "before_agent_start", "params": {"prompt": "go", "branch": None}},
        {"id": 2, "method": "tool_start", "params": {"tool": "read", "args": {"path": "src/a.ts"}}},
        {"id": 3, "method": "tool_result", "params": {"tool": "read", "content": [{"type": "text", "text": "x"}]}},
    )) + "\n"
    served = subprocess.run([*RUN, "--cwd", str(claude.cwd), "serve", "--host", "pi"], input=lines,
                            capture_output=True, text=True, env=claude.env, timeout=60, check=True)
    text = json.loads(served.stdout.splitlines()[-1])["result"]["content"][-1]["text"]
    assert "- ts.md — TypeScript (fetch with the read_rule tool)" in text and "t" * 72 not in text


def test_claude_code_attaches_a_package_agents_md_whole_in_workers_sdk(tmp_path: Path) -> None:
    # The first report: report admits packages/wrangler/AGENTS.md (1244 tokens), the
    # hook used to attach only its pointer.
    claude = ClaudeDriver(tmp_path)
    shutil.copytree(FIXTURES / "workers-sdk", claude.cwd, symlinks=True, dirs_exist_ok=True)
    claude.start()
    block = claude.tool("Read", {"file_path": claude.path("packages/wrangler/src/index.ts")}) or ""
    wrangler = (claude.cwd / "packages/wrangler/AGENTS.md").read_text().rstrip("\n")
    assert wrangler in block and "(read it with the Read tool)" not in block
    assert claude.tool("Read", {"file_path": claude.path("packages/wrangler/src/index.ts")}) is None  # once

