"""The ``previews`` host plugin: declares ``codex``, ``cursor``, ``copilot``, ``gemini``,
``kiro`` and ``windsurf`` for ``--host`` (CONTRACT §7). pi-rules drives none of them, so
their ``reads`` leaves nothing out; ``report``, ``render`` and ``map`` show their preview
instead of an evaluation (``rules_hosts.previews.output``)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import Facts, HostInfo, Rule

PREVIEWS = {
    "codex": "preview: the AGENTS.md chain Codex loads (git root → cwd, 32 KiB)",
    "cursor": "preview: the .cursor/rules, .cursorrules and AGENTS.md Cursor loads",
    "copilot": "preview: the Copilot instructions VS Code attaches (its applyTo matcher)",
    "gemini": "preview: the GEMINI.md files Gemini CLI loads at start",
    "kiro": "preview: the steering files Kiro includes",
    "windsurf": "preview: the Windsurf rules and AGENTS.md Cascade loads (6,000/12,000 characters)",
}


def _reads_nothing(rule: Rule, facts: Facts) -> str | None:
    return None


@hookimpl
def pi_rules_hosts() -> list[HostInfo]:
    return [HostInfo(name, summary, _reads_nothing) for name, summary in PREVIEWS.items()]
