"""What Claude Code reads itself (docs/hosts.md, "Files a host reads natively").

Claude Code loads its memory files — ``CLAUDE.md``, ``.claude/CLAUDE.md``,
``CLAUDE.local.md`` from the working directory up, nested ones when it works in their
folder, ``~/.claude/CLAUDE.md`` — ``.claude/rules`` and its skills folders ``.claude/skills``
(project, nested, user; the table in ``rules_importers/_skill_hosts.py``). Whether it also reads
``AGENTS.md`` is the user's choice since 2.1.277, its project-instructions mode
(``instructions.py``): by default (``claude-md-or-agents-md``) only where no CLAUDE file
(``CLAUDE.md``, ``.claude/CLAUDE.md``, ``CLAUDE.local.md``) is in the working directory or
above it, so an ``AGENTS.md`` counts as Claude's own only when none sits in its folder or
in any folder from cwd up to the git root; ``claude-md-and-agents-md`` reads every
``AGENTS.md``; ``claude-md`` none; ``managed-only`` reads none of the project's or the
user's files at all, so pi-rules sends them. An ``AGENTS.md`` that a CLAUDE file on the
way imports (``@AGENTS.md``, the usual bridge) reaches Claude through that import, so it
is Claude's own too. When in doubt the file is sent: a rule read twice costs tokens, a
rule lost costs more.
"""

from __future__ import annotations

import os

from rules_core.model import Facts, Rule
from rules_core.discovery.reading import file_signature, read_rule_text
from rules_importers._includes import import_targets
from rules_importers._skill_hosts import host_reads_skill

from .instructions import BOTH, FALLBACK, MANAGED_ONLY, instruction_mode

READ_BY_CLAUDE = "Claude Code reads this file itself; pi-rules leaves it out so it is not sent twice"
READ_AGENTS = ("Claude Code reads AGENTS.md itself where no CLAUDE.md is in the way; pi-rules leaves it "
               "out so it is not sent twice")
READ_AGENTS_BOTH = (f"Claude Code reads AGENTS.md itself beside CLAUDE.md (its project-instructions mode is {BOTH}); "
                    "pi-rules leaves it out so it is not sent twice")
IMPORTED = "Claude Code reads this file through the @import in {}; pi-rules leaves it out so it is not sent twice"
_CLAUDE_FILES = ("CLAUDE.md", os.path.join(".claude", "CLAUDE.md"))
_IMPORTING_FILES = (*_CLAUDE_FILES, "CLAUDE.local.md")
_MAX_CACHED = 64
# (path, signature) -> the paths that file's imports name: read once per file version.
_targets: dict[tuple[str, object], tuple[str, ...]] = {}


def claude_reads(rule: Rule, facts: Facts) -> str | None:
    plugin = rule.file.plugin
    if plugin == "skills":  # skills are not instruction files: no mode governs them
        return host_reads_skill("claude-code", rule)
    if plugin not in ("claude", "claude-md", "agents-md"):
        return None
    # The user's mode, read per call from their settings files (each parsed once per
    # version): the hook server sets the caller's environment for each call.
    mode = instruction_mode(os.environ)
    if mode == MANAGED_ONLY:
        return None  # Claude Code loads none of the project's or the user's own files
    if plugin in ("claude", "claude-md"):
        return READ_BY_CLAUDE
    if plugin != "agents-md":
        return None
    folders = [rule.file.base, *_cwd_and_above(os.path.abspath(facts.cwd), rule.file.rules_root)]
    if os.path.basename(rule.file.path) == "AGENTS.md":
        if mode == BOTH:
            return READ_AGENTS_BOTH
        if mode == FALLBACK and not any(
            os.path.isfile(os.path.join(folder, name)) for folder in folders for name in _IMPORTING_FILES
        ):
            return READ_AGENTS
    for folder in dict.fromkeys(folders):
        for name in _IMPORTING_FILES:
            importer = os.path.join(folder, name)
            if rule.file.path in _imports_of(importer):
                return IMPORTED.format(os.path.relpath(importer, rule.file.rules_root))
    return None


def _imports_of(path: str) -> tuple[str, ...]:
    """What the memory file at ``path`` imports (nothing when it is absent or unreadable)."""
    signature = file_signature(path)
    if signature is None:
        return ()
    key = (path, signature)
    if key not in _targets:
        text = read_rule_text(path, follow=False)
        found = import_targets(text, path=path, home=None, syntax="claude") if isinstance(text, str) else ()
        if len(_targets) >= _MAX_CACHED:
            _targets.pop(next(iter(_targets)))
        _targets[key] = found
    return _targets[key]


def _cwd_and_above(cwd: str, top: str) -> list[str]:
    """cwd and each folder above it up to ``top`` (the git root); cwd alone when ``top`` is not above."""
    folders = [cwd]
    current = cwd
    while current != top and current.startswith(top.rstrip("/") + "/"):
        current = os.path.dirname(current)
        folders.append(current)
    return folders
