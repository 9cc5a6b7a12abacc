"""Each rule delivered once per Claude Code conversation, and the Read-tool reference lines.

SessionStart injects the whole section; a prompt adds only the rules the conversation
lacks (the attachment's block shape) and one line per delivered rule that stopped
applying. Real subprocesses, real files (claude_driver.py); golden files for the bytes
(``PI_RULES_UPDATE_GOLDEN=1`` refreshes them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_driver import ClaudeDriver, ids
from golden_files import check_golden
from rules_core.rule_tests.pytest_plugin import rule_text

PROMPT_HEADING = "## Rules newly activated by this prompt\n\n"


@pytest.fixture
def claude(tmp_path: Path) -> ClaudeDriver:
    driver = ClaudeDriver(tmp_path)
    driver.write({
        ".pi/rules/always.md": rule_text("Be kind to reviewers.", alwaysApply=True),
        ".pi/rules/ts.md": rule_text("Use strict TypeScript.", description="TypeScript", globs=["src/**/*.ts"]),
        ".pi/rules/py.md": rule_text("Type every function.", description="Python", globs=["**/*.py"],
                                     enforcement="enforce"),
    })
    return driver


def test_a_prompt_adds_only_rules_the_conversation_lacks(claude: ClaudeDriver) -> None:
    assert ids(claude.start()) == ["always"]
    assert claude.prompt("hello") is None  # the section is in the transcript already
    assert ids(claude.tool("Read", {"file_path": claude.path("src/a.ts")})) == ["ts"]
    assert claude.prompt("thanks") is None  # ts came with the Read: not again
    # Grep names a path but never attaches: its rule waits for the prompt.
    claude.send("PreToolUse", tool_name="Grep", tool_input={"pattern": "x", "path": claude.path("lib/b.py")})
    block = claude.prompt("and the python side?")
    assert block is not None and block.startswith(PROMPT_HEADING)
    check_golden("claude-prompt-block.md", claude.portable(block))
    assert claude.prompt("once more") is None


def test_a_rule_that_stops_applying_gets_one_line_and_comes_back_in_full(claude: ClaudeDriver) -> None:
    claude.start()
    claude.tool("Read", {"file_path": claude.path("src/a.ts")})
    ts = (claude.cwd / ".pi/rules/ts.md").read_text()
    claude.write({".pi/rules/ts.md": rule_text("Use strict TypeScript.", description="TypeScript",
                                               globs=["web/**/*.ts"])})
    claude.send("PreToolUse", tool_name="Grep", tool_input={"pattern": "x", "path": claude.path("lib/b.py")})
    update = claude.prompt("next") or ""
    check_golden("claude-prompt-stopped.md", claude.portable(update))
    assert claude.prompt("again") is None  # said once
    (claude.cwd / ".pi/rules/ts.md").write_text(ts)
    back = claude.prompt("the old globs are back") or ""
    assert ids(back) == ["ts"] and "Use strict TypeScript." in back
    (claude.cwd / ".pi/rules/py.md").unlink()
    assert claude.prompt("gone") == "- py no longer applies (its rule file is gone)\n"


def test_the_first_delivery_without_a_session_start_is_the_whole_section(claude: ClaudeDriver) -> None:
    first = claude.prompt("hello") or ""
    assert first.startswith("# Rules\n") and ids(first) == ["always"]
    assert claude.prompt("again") is None


def test_compaction_and_clear_forget_what_was_delivered(claude: ClaudeDriver) -> None:
    claude.start()
    claude.tool("Read", {"file_path": claude.path("src/a.ts")})
    (claude.cwd / ".pi/rules/ts.md").unlink()
    # The compacted transcript holds only what the new section says: nothing to withdraw.
    assert ids(claude.start("compact")) == ["always"]
    assert claude.prompt("go on") is None
    claude.write({".pi/rules/ts.md": rule_text("Use strict TypeScript.", description="TypeScript",
                                               globs=["src/**/*.ts"])})
    assert ids(claude.start("clear")) == ["always"]  # the touched path is forgotten too
    assert ids(claude.tool("Read", {"file_path": claude.path("src/a.ts")})) == ["ts"]  # delivered again


def test_resume_keeps_what_the_restored_transcript_holds(claude: ClaudeDriver) -> None:
    claude.start()
    claude.tool("Read", {"file_path": claude.path("src/a.ts")})
    (claude.cwd / ".pi/rules/ts.md").unlink()
    assert ids(claude.start("resume")) == ["always"]
    # The resumed transcript still carries ts from before: the model is told to drop it.
    assert claude.prompt("go on") == "- ts no longer applies (its rule file is gone)\n"


def test_a_prompt_adds_a_rule_report_admits_whole(claude: ClaudeDriver) -> None:
    # always (6 tokens) and py (5) fit 12 together: report admits both, so py comes whole
    # — the conversation holds 6 of the 12 — not as a pointer (issue 24, part 2).
    claude.env["PI_RULES_MAX_TOKENS"] = "12"
    claude.start()
    claude.send("PreToolUse", tool_name="Grep", tool_input={"pattern": "x", "path": claude.path("b.py")})
    block = claude.prompt("next") or ""
    assert block == PROMPT_HEADING + "## py\n> Triggered by: touched b.py\n> Level: MUST\n\nType every function.\n"


def test_a_prompt_names_a_rule_over_the_budget_by_its_reference_line(claude: ClaudeDriver) -> None:
    claude.env.update(PI_RULES_MAX_TOKENS="8", PI_RULES_OVERFLOW="index")  # room for "always" only
    claude.start()
    claude.send("PreToolUse", tool_name="Grep", tool_input={"pattern": "x", "path": claude.path("src/a.ts")})
    block = claude.prompt("next") or ""
    # Over the budget and listed in the index: its reference line, for Claude's own Read tool.
    assert block == PROMPT_HEADING + f"- {claude.path('.pi/rules/ts.md')} — TypeScript (read it with the Read tool)\n"


# -- reference lines (CONTRACT §6) ------------------------------------------------------


def test_on_demand_lines_name_the_file_for_the_read_tool(claude: ClaudeDriver) -> None:
    claude.write({".pi/rules/api.md": rule_text("API details.", description="API conventions", alwaysApply=True,
                                                load="on-demand")})
    section = claude.start() or ""
    check_golden("claude-section-read-tool.md", claude.portable(section))
    assert "(fetch with the read_rule tool)" not in section


def test_degraded_attachment_names_the_file_for_the_read_tool(claude: ClaudeDriver) -> None:
    claude.env.update(PI_RULES_MAX_TOKENS="8", PI_RULES_OVERFLOW="index")  # ts does not fit: listed
    claude.start()
    block = claude.tool("Read", {"file_path": claude.path("src/a.ts")}) or ""
    check_golden("claude-attach-read-tool.md", claude.portable(block))


def test_other_hosts_keep_the_read_rule_line(claude: ClaudeDriver) -> None:
    import subprocess
    import sys

    claude.write({".pi/rules/api.md": rule_text("API.", description="API conventions", alwaysApply=True,
                                                load="on-demand")})
    render = [sys.executable, "-m", "rules_hosts", "--cwd", str(claude.cwd), "render", "--no-branch"]
    pi = subprocess.run([*render, "--host", "pi"], capture_output=True, text=True, env=claude.env, check=True)
    assert "- api.md — API conventions (fetch with the read_rule tool)" in pi.stdout
    cc = subprocess.run([*render, "--host", "claude-code"], capture_output=True, text=True, env=claude.env, check=True)
    assert f"- {claude.path('.pi/rules/api.md')} — API conventions (read it with the Read tool)" in cc.stdout
