"""What Pi reads itself (docs/hosts.md, "Files a host reads natively").

Pi 0.73 loads one context file per folder — ``AGENTS.md``, else ``CLAUDE.md`` — from the
working directory and every folder above it, plus ``~/.pi/agent/AGENTS.md``. pi-rules reads
memory files only up to the git root, so each walked-up ``AGENTS.md`` (and a ``CLAUDE.md``
in a folder without one) is already in Pi's prompt. Folder-scoped files below cwd,
``AGENTS.override.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` are not. Pi also
reads the skills of ``.agents/skills`` from cwd up and of ``~/.agents/skills``
(``rules_importers/_skill_hosts.py``).
"""

from __future__ import annotations

import os

from rules_core.model import Facts, Rule
from rules_importers._memory import is_folder_scoped
from rules_importers._skill_hosts import host_reads_skill

READ_BY_PI = "Pi reads this file itself (one AGENTS.md or CLAUDE.md per folder from cwd up); not sent twice"


def pi_reads(rule: Rule, facts: Facts) -> str | None:
    if rule.file.plugin == "skills":
        return host_reads_skill("pi", rule)
    if rule.source != "project" or is_folder_scoped(rule.file):
        return None
    name = os.path.basename(rule.file.path)
    if rule.file.plugin == "agents-md" and name == "AGENTS.md":
        return READ_BY_PI
    if rule.file.plugin == "claude-md" and name == "CLAUDE.md" and rule.file.path == os.path.join(rule.file.base, name):
        if not os.path.isfile(os.path.join(rule.file.base, "AGENTS.md")):
            return READ_BY_PI
    return None
