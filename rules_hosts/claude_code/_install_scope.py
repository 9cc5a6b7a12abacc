"""What a scope's files may name to start pi-rules, and whether the MCP entry belongs there.

The project scope's files (``.claude/settings.json``, ``.mcp.json``) are committed and shared,
so an absolute path into one developer's virtual environment breaks the hooks for every
teammate. There the commands are the bare ``pi-rules``, and only when it is on ``PATH``;
otherwise the install is refused with the advice to use ``--scope local``. The MCP server
is only written where the MCP SDK is installed, since Claude Code would show a server that
fails to start. See docs/hosts.md ("Install").
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import Mapping

from rules_core.safe import safe_line

from rules_hosts.cli.launch import SCRIPT, launcher

MCP_INSTALL = "pip install 'pi-rules[mcp]' (from a checkout: pip install -e '.[mcp]')"


class ScopeRefused(Exception):
    """The scope cannot be installed from here; the message says why and what to run."""


def scope_launch(scope: str, env: Mapping[str, str]) -> tuple[tuple[str, ...], str]:
    """The words that start pi-rules in this scope's files, and a note for the person."""
    if scope != "project":
        return launcher(), ""
    found = shutil.which(SCRIPT, path=env.get("PATH", ""))
    if not found:
        running = " ".join(launcher())
        raise ScopeRefused(
            "the project scope writes .claude/settings.json and .mcp.json, which are shared with your "
            f"teammates, and `{SCRIPT}` is not on PATH here (this one runs as {safe_line(running)}), so "
            "there is no command every teammate can run. For a virtual-environment install use "
            "`pi-rules hook claude-code --install --scope local` (your own files, this absolute path); "
            "or put pi-rules on PATH (pipx install pi-rules) and run the command again; no file was changed"
        )
    return (SCRIPT,), (
        f"pi-rules: note: the shared project files run the bare `{SCRIPT}` (on PATH here: "
        f"{safe_line(found)}); every teammate needs pi-rules on the PATH Claude Code starts with\n"
    )


def mcp_sdk_installed() -> bool:
    return importlib.util.find_spec("mcp") is not None


def skipped_mcp_note(scope: str, removed_from: str | None = None) -> str:
    """Why there is no MCP entry, and how to add it once the SDK is there; ``removed_from``:
    the file an earlier install's entry was just taken out of (it would fail to start)."""
    again = f"{MCP_INSTALL}, then run `pi-rules hook claude-code --install --scope {scope}` again"
    if removed_from is not None:
        return (
            "pi-rules: note: removed the MCP server entry (read_rule as a tool) an earlier install wrote to "
            f"{safe_line(removed_from)}: the MCP SDK is not installed here, so Claude Code would show a server "
            f"that fails to start (other servers are left as they are). To add it back: {again}\n"
        )
    return (
        "pi-rules: note: the MCP server (read_rule as a tool) was not added: the MCP SDK is not "
        f"installed here. To add it later: {again}\n"
    )
