"""Which skills folders a host's agent reads itself (docs/hosts.md, "Files a host reads
natively"): one row per host, so a new host or version is one line.

Each entry is ``(marker, where)``: the skills folder ``<marker>/skills`` and where that
host looks for it — ``walked`` (cwd and each folder up to the git root), ``nested``
(folders below cwd), ``global`` (the home folder). A skill found there is left out for
that host, inactive with the reason, so its catalogue is not sent twice.
"""

from __future__ import annotations

import os

from rules_core.model import Rule

from ._skills_find import NAME, is_nested, is_walked

# Claude Code reads .claude/skills of the project, of the folders it works in, and of the
# user (code.claude.com/docs/en/skills). Pi 0.73.1 reads .agents/skills from cwd up to the
# git root and ~/.agents/skills (dist/core/package-manager.js: collectAncestorAgentsSkillDirs,
# userAgentsSkillsDir), besides its own .pi/skills and ~/.pi/agent/skills, which are not ours.
HOST_SKILL_FOLDERS: dict[str, tuple[tuple[str, str], ...]] = {
    "claude-code": ((".claude", "walked"), (".claude", "nested"), (".claude", "global")),
    "pi": ((".agents", "walked"), (".agents", "global")),
}
READ_BY = "{host} reads {folder} itself; pi-rules leaves this skill out so its catalogue line is not sent twice"
_NAMES = {"claude-code": "Claude Code", "pi": "Pi"}


def host_reads_skill(host: str, rule: Rule) -> str | None:
    """Why ``host``'s agent already has ``rule`` (a skill), or None."""
    if rule.file.plugin != NAME:
        return None
    marker = os.path.basename(os.path.dirname(rule.file.rules_root.rstrip(os.sep)))
    where = "global" if rule.source == "global" else "nested" if is_nested(rule.file) else \
        "walked" if is_walked(rule.file) else ""
    if (marker, where) in HOST_SKILL_FOLDERS.get(host, ()):
        shown = f"~/{marker}/skills" if where == "global" else f"{marker}/skills"
        return READ_BY.format(host=_NAMES.get(host, host), folder=shown)
    return None
