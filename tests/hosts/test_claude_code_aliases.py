"""Through the Claude Code hook: vercel/ai's ``CLAUDE.md -> AGENTS.md`` (tests/fixtures/
layouts/vercel-ai/SOURCE). Claude Code reads the root text through the link, so the hook
never sends it; the package's ``AGENTS.md`` (which Claude does not read in a project with
a CLAUDE.md) arrives once, with the Read of a file below it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from claude_driver import ClaudeDriver

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "layouts" / "vercel-ai"
ROOT_LINE = "This file provides context for AI coding assistants"
PACKAGE_LINE = "AI SDK Usage"


def _session(tmp_path: Path) -> ClaudeDriver:
    claude = ClaudeDriver(tmp_path)
    shutil.copytree(FIXTURE, claude.cwd, symlinks=True, dirs_exist_ok=True)
    os.unlink(claude.cwd / "SOURCE")
    claude.env.update(CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"),
                      CLAUDE_CODE_MANAGED_SETTINGS_PATH=str(tmp_path / "managed"),
                      XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    return claude


def _delivered(claude: ClaudeDriver) -> str:
    parts = [claude.start()]
    parts.append(claude.tool("Read", {"file_path": claude.path("packages/ai/src/index.ts")}))
    parts.append(claude.prompt("Add a provider option."))
    return "\n".join(p for p in parts if p)


def test_the_linked_root_text_is_left_to_claude_and_the_package_text_arrives_once(tmp_path: Path) -> None:
    claude = _session(tmp_path)
    assert (claude.cwd / "CLAUDE.md").is_symlink()
    delivered = _delivered(claude)
    assert ROOT_LINE not in delivered
    assert delivered.count(PACKAGE_LINE) == 1


def test_a_claude_md_of_its_own_makes_the_hook_send_the_root_text(tmp_path: Path) -> None:
    """The control: the same session sees the root text when Claude does not read it."""
    claude = _session(tmp_path)
    # The root text alone is over the default budget; what the budget admits is another test's.
    claude.env["PI_RULES_MAX_TOKENS"] = "20000"
    os.unlink(claude.cwd / "CLAUDE.md")
    (claude.cwd / "CLAUDE.md").write_text("# Notes\n\nKeep changes small.\n")
    delivered = _delivered(claude)
    assert delivered.count(ROOT_LINE) == 1
    assert delivered.count(PACKAGE_LINE) == 1
