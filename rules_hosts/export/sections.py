"""The targets that are one memory file every session reads whole: a generated section
inside ``AGENTS.md`` (Codex, and the agents that read it) or ``GEMINI.md`` (Gemini CLI).

The section sits between two marker comments; text outside them is the user's and is
never changed. A file without markers gets the section appended; a file that does not
exist is created holding only the section. Such a file is always loaded, so only always
rules go there (``--lossy`` adds the rest, each with a sentence naming what it needed).
"""

from __future__ import annotations

from dataclasses import dataclass

from .files import MARKER, Exported, body_text

BEGIN = f"<!-- {MARKER}: begin (from the rules named below; edit them, then run `pi-rules export`) -->"
END = f"<!-- {MARKER}: end -->"


@dataclass(frozen=True)
class SectionTarget:
    name: str
    title: str
    file: str

    def section(self, rules: list[Exported]) -> str:
        parts = [f"<!-- from {rule.source} -->\n{body_text(rule, self.title)}" for rule in rules]
        return BEGIN + "\n" + "\n".join(parts) + END + "\n"


def merged(existing: str | None, section: str) -> str | None:
    """``existing`` with its marked section replaced by ``section`` (appended when it has
    none); None when its markers are broken (a begin without an end, or the reverse)."""
    if existing is None or not existing.strip():
        return section
    begin, end = existing.find(BEGIN), existing.find(END)
    if begin < 0 and end < 0:
        return existing.rstrip("\n") + "\n\n" + section
    if begin < 0 or end < begin or existing.count(BEGIN) != 1 or existing.count(END) != 1:
        return None
    tail = existing[end + len(END):]
    return existing[:begin] + section.rstrip("\n") + (tail if tail.strip() else "\n")


SECTION_TARGETS: dict[str, SectionTarget] = {t.name: t for t in (
    SectionTarget("agents-md", "AGENTS.md", "AGENTS.md"),
    SectionTarget("gemini-md", "GEMINI.md", "GEMINI.md"),
)}
