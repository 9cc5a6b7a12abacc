"""The ``markdown`` renderer: the system-prompt section and its pieces (RULE-SPEC §6).

Kinds: ``section`` (data: ``{"active": [Outcome], "on_demand": [Outcome]}``), ``entry``
(one ``Outcome``), ``index-line`` (one ``Rule``) and ``attachment`` (data: ``{"parts":
[str]}``, the mid-run attachment block: a heading, then ``entry`` and ``index-line``
parts, so its bytes equal the section's). A host that appends the block to a tool's
output puts its own separator before it.

``on_demand`` is every line of the index, in order: the on-demand rules, then — with
``overflow = "index"`` (CONTRACT §6) — the pinned rules the budget left out, whose
outcomes keep status ``dropped``. One list, so a renderer that replaces this one lists
them too without knowing the setting.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from rules_core import hookimpl
from rules_core.model import Outcome, Rule
from rules_core.safe import reveal_invisible, safe_line

HEADER = "# Rules"
FRAMING = (
    "These project rules apply to the current task. Follow them; "
    "a rule marked MUST is mandatory, SHOULD is strongly recommended."
)
INDEX_HEADING = "## Reference rules available on demand"
BLOCK_HEADING = "## Rules newly activated by this tool result"
SEPARATOR = "\n\n---\n\n"
LEVELS = {"enforce": "MUST", "recommend": "SHOULD"}
# Lines of a body that would read as the section's own framing (docs/format.md, "What a
# body may contain"); a leading backslash, markdown's escape, turns each into plain text.
_FRAMING_LINES = frozenset({HEADER, INDEX_HEADING, BLOCK_HEADING})
_ENTRY_HEAD = ("> Triggered by:", "> Level:")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@hookimpl(trylast=True)
def pi_rules_render(kind: str, data: Any) -> str | None:
    if kind == "section":
        return render_section(data["active"], data["on_demand"])
    if kind == "entry":
        return render_entry(data)
    if kind == "index-line":
        return render_index_line(data)
    if kind == "attachment":
        return render_attachment(data["parts"])
    return None


def render_section(active: Sequence[Outcome], on_demand: Sequence[Outcome]) -> str:
    text = f"{HEADER}\n\n{FRAMING}"
    if active:
        text += "\n\n" + SEPARATOR.join(render_entry(o) for o in active)
    if on_demand:
        lines = "\n".join(render_index_line(o.rule) for o in on_demand)
        text += f"\n\n{INDEX_HEADING}\n\n{lines}"
    return text.rstrip("\n") + "\n"


def render_attachment(parts: Sequence[str]) -> str:
    """``## Rules newly activated…``, a blank line, the parts; one trailing newline."""
    body = SEPARATOR.join(parts).rstrip("\n")
    return f"{BLOCK_HEADING}\n\n{body}\n"


def render_entry(outcome: Outcome) -> str:
    rule = outcome.rule
    # Ids (file stems), reasons (paths) and descriptions are one line each: a file named
    # "x\n## y.md" must not add a heading to the section.
    lines = [f"## {safe_line(rule.id)}"]
    if outcome.reasons:
        lines.append("> Triggered by: " + safe_line("; ".join(outcome.reasons)))
    level = LEVELS.get(rule.enforcement)
    if level:
        lines.append(f"> Level: {level}")
    head = "\n".join(lines)
    # Invisible characters (ASCII smuggling) are shown as escapes: the model reads exactly
    # what a person reviewing the rule can see.
    return f"{head}\n\n{reveal_invisible(guard_body(rule.body))}" if rule.body else head


def render_index_line(rule: Rule) -> str:
    description = safe_line(" ".join(rule.description.split()))
    reference = rule.reference or rule.relative_path  # a rule made outside discovery has none
    return f"- {safe_line(reference)} — {description} (fetch with the read_rule tool)"


def guard_body(body: str) -> str:
    """The body as injected: unchanged, except that (outside fenced code) a line reading
    as the section's framing — ``# Rules`` and the two block headings, an entry separator
    ``---`` that opens a ``## `` heading, a ``## `` heading carrying ``> Triggered by:``
    or ``> Level:`` lines — gets a leading backslash, and a fence left open is closed
    so it cannot swallow the entries after it. A pure function of the body, so equal
    bodies stay equal (dedupe) and the section and attachments agree byte for byte."""
    lines = body.split("\n")
    fence = ""
    for i, line in enumerate(lines):
        if fence:
            if line.strip() == fence[0] * len(line.strip()) and len(line.strip()) >= len(fence):
                fence = ""
            continue
        if opened := _FENCE.match(line):
            fence = opened.group(1)
            continue
        if _forges(lines, i):
            lines[i] = "\\" + line
    if fence:
        lines.append(fence)
    return "\n".join(lines)


def _forges(lines: list[str], i: int) -> bool:
    text = lines[i].strip()
    if text in _FRAMING_LINES:
        return True
    after = [line.strip() for line in lines[i + 1 : i + 3]] + ["", ""]
    if text == "---":
        return after[0] == "" and after[1].startswith("## ")
    return text.startswith("## ") and after[0].startswith(_ENTRY_HEAD)
