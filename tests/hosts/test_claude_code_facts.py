"""Claude Code payloads as facts: tool_name, SessionStart's model, sub-agents, the branch.

Every test drives ``pi-rules hook claude-code`` as a real subprocess (claude_driver.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from claude_driver import ClaudeDriver, ids
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.claude_code.payload import agent_of, tool_fact


@pytest.fixture
def claude(tmp_path: Path) -> ClaudeDriver:
    driver = ClaudeDriver(tmp_path)
    driver.write({".pi/rules/always.md": rule_text("Be kind.", alwaysApply=True)})
    return driver


def test_write_tool_fact_fires_a_tools_rule_on_the_writes_attachment(claude: ClaudeDriver) -> None:
    claude.write({".pi/rules/writes.md": rule_text("Keep files small.", description="Writing", tools=["write"])})
    assert ids(claude.start()) == ["always"]
    assert claude.tool("Read", {"file_path": claude.path("a.txt")}) is None  # Read is not write
    block = claude.tool("Write", {"file_path": claude.path("b.txt"), "content": "x"})
    assert block is not None and ids(block) == ["writes"]
    assert "> Triggered by: tool write" in block
    assert claude.prompt("next") is None  # no tool at a prompt, yet nothing is withdrawn


def test_unknown_tools_are_their_own_lower_cased_names() -> None:
    assert tool_fact("Write") == ("write",) and tool_fact("MultiEdit") == ("edit",)
    assert tool_fact("WebFetch") == ("webfetch",) and tool_fact("mcp__x__y") == ("mcp__x__y",)
    assert tool_fact(["Write"]) == () and tool_fact("") == () and tool_fact("a\nb") == ()


def test_model_from_session_start_holds_for_later_tool_results_and_prompts(claude: ClaudeDriver) -> None:
    claude.write({
        ".pi/rules/opus.md": rule_text("Think twice.", description="Opus", model="claude-opus-*"),
        ".pi/rules/opus-ts.md": rule_text("Opus TS.", description="Opus TS", model="claude-opus-*",
                                          globs=["src/**/*.ts"]),
    })
    section = claude.start(model="claude-opus-4-1")
    assert ids(section) == ["always", "opus"] and "> Triggered by: model claude-opus-4-1" in (section or "")
    assert {"type": "pi-rules/model", "model": "claude-opus-4-1"} in claude.records()
    block = claude.tool("Write", {"file_path": claude.path("src/a.ts"), "content": ""})
    assert ids(block) == ["opus-ts"]  # the later process knew the model
    # A later start with another model replaces it; the prompt withdraws the opus rules.
    assert ids(claude.start("resume", model="claude-sonnet-4-5")) == ["always"]
    stopped = claude.prompt("go on") or ""
    assert "- opus no longer applies (model mismatch: session model claude-sonnet-4-5" in stopped


def test_sub_agent_events_evaluate_as_the_sub_agent(claude: ClaudeDriver) -> None:
    claude.write({
        ".pi/rules/main-only.md": rule_text("Main.", alwaysApply=True, agents=["main"]),
        ".pi/rules/any-sub.md": rule_text("Any sub-agent.", alwaysApply=True, agents=["sub"]),
        ".pi/rules/explorer.md": rule_text("Explorers.", alwaysApply=True, agents=["explore"]),
    })
    assert ids(claude.start()) == ["always", "main-only"]
    read = {"file_path": claude.path("a.txt")}
    # A sub-agent's transcript has none of the main one's rules: its first result brings its own.
    explore = claude.tool("Read", read, agent_id="agent-1", agent_type="Explore")
    assert ids(explore) == ["always", "any-sub", "explorer"]
    assert claude.tool("Read", read, agent_id="agent-1", agent_type="Explore") is None  # once per transcript
    assert ids(claude.tool("Read", read, agent_id="agent-2", agent_type="general-purpose")) == ["always", "any-sub"]
    assert ids(claude.tool("Read", read, agent_id="agent-3")) == ["always", "any-sub"]  # no type: "sub"
    # The main thread (a `claude --agent` session carries agent_type alone) is unaffected.
    assert claude.tool("Read", read, agent_type="Explore") is None
    assert claude.prompt("next") is None


def test_agent_of_reads_only_sub_agent_events() -> None:
    assert agent_of({"agent_type": "Explore"}) == (None, "main")
    assert agent_of({"agent_id": "a", "agent_type": "Main"}) == ("a", "sub")  # never passes for main
    agent_id, agent = agent_of({"agent_id": "x" * 10_000, "agent_type": 3})
    assert agent == "sub" and agent_id is not None and len(agent_id) < 100


def test_branch_comes_from_git_in_the_payloads_cwd(claude: ClaudeDriver) -> None:
    claude.write({".pi/rules/feature.md": rule_text("Feature work.", description="Feature", branch="feature/*")})
    git = ["git", "-C", str(claude.cwd), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    assert ids(claude.start()) == ["always"]
    subprocess.run([*git, "checkout", "-q", "-b", "feature/x"], check=True)
    block = claude.prompt("continue") or ""
    assert ids(block) == ["feature"] and "> Triggered by: branch feature/x" in block
