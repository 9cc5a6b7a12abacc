"""The six previewed agents (CONTRACT §7 host names)."""

from __future__ import annotations

import os

from .agents import (codex_finish, codex_judge, codex_order, copilot_judge, cursor_judge, gemini_finish,
                     gemini_judge, gemini_order, kiro_judge, plain_finish, windsurf_finish, windsurf_judge)
from .model import Entry, Profile
from .plugin import PREVIEWS


def _global_first(item: Entry) -> tuple:
    # Windsurf's global rules come first; sorting is stable, so the rest keeps discovery's order.
    return (not item.path.startswith(os.path.join(os.path.expanduser("~"), ".codeium") + os.sep),)


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("codex", "Codex", PREVIEWS["codex"], ("agents-md",),
            codex_judge, codex_finish, codex_order),
    Profile("cursor", "Cursor", PREVIEWS["cursor"],
            ("cursor", "agents-md"), cursor_judge, plain_finish),
    Profile("copilot", "GitHub Copilot (VS Code)", PREVIEWS["copilot"], ("copilot",),
            copilot_judge, plain_finish),
    Profile("gemini", "Gemini CLI", PREVIEWS["gemini"], ("gemini-md",),
            gemini_judge, gemini_finish, gemini_order),
    Profile("kiro", "Kiro", PREVIEWS["kiro"], ("kiro",), kiro_judge, plain_finish),
    Profile("windsurf", "Windsurf", PREVIEWS["windsurf"],
            ("windsurf", "agents-md"), windsurf_judge, windsurf_finish, _global_first, "chars"),
)}
