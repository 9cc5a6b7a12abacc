"""What Claude Code reads itself (docs/hosts.md, "Files a host reads natively").

Claude Code loads its memory files — ``CLAUDE.md``, ``.claude/CLAUDE.md``,
``CLAUDE.local.md`` from the working directory up, nested ones when it works in their
folder, ``~/.claude/CLAUDE.md`` — and ``.claude/rules``. Since 2.1.277 it also reads
``AGENTS.md``, but only when no ``CLAUDE.md`` is in the working directory or above it: so
an ``AGENTS.md`` counts as Claude's own only when no ``CLAUDE.md`` (or
``.claude/CLAUDE.md``) sits in its folder or in any folder from cwd up to the git root.
When in doubt the file is sent: a rule read twice costs tokens, a rule lost costs more.
"""

from __future__ import annotations

import os

from rules_core.model import Facts, Rule

READ_BY_CLAUDE = "Claude Code reads this file itself; pi-rules leaves it out so it is not sent twice"
READ_AGENTS = ("Claude Code reads AGENTS.md itself where no CLAUDE.md is in the way; pi-rules leaves it "
               "out so it is not sent twice")
_CLAUDE_FILES = ("CLAUDE.md", os.path.join(".claude", "CLAUDE.md"))


def claude_reads(rule: Rule, facts: Facts) -> str | None:
    plugin = rule.file.plugin
    if plugin in ("claude", "claude-md"):
        return READ_BY_CLAUDE
    if plugin == "agents-md" and os.path.basename(rule.file.path) == "AGENTS.md":
        folders = {rule.file.base, *_cwd_and_above(os.path.abspath(facts.cwd), rule.file.rules_root)}
        if not any(os.path.isfile(os.path.join(folder, name)) for folder in folders for name in _CLAUDE_FILES):
            return READ_AGENTS
    return None


def _cwd_and_above(cwd: str, top: str) -> list[str]:
    """cwd and each folder above it up to ``top`` (the git root); cwd alone when ``top`` is not above."""
    folders = [cwd]
    current = cwd
    while current != top and current.startswith(top.rstrip("/") + "/"):
        current = os.path.dirname(current)
        folders.append(current)
    return folders
