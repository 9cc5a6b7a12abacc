"""The ``markdown`` renderer: the system-prompt section and its pieces (RULE-SPEC §6).

Kinds: ``section`` (data: ``{"active": [Outcome], "on_demand": [Outcome], "reference":
str}``), ``entry`` (one ``Outcome``), ``index-line`` (one ``Rule``, or ``{"rule": Rule,
"reference": str}``), ``attachment`` (data: ``{"parts": [str], "origin": str}``, the
mid-run attachment block: a heading, then ``entry`` and ``index-line`` parts, so its
bytes equal the section's; ``origin`` ``prompt`` names the prompt in the heading, anything
else the tool result) and ``stopped-line`` (data: ``{"id": str, "reason": str}``, the line
saying a delivered rule no longer applies). A host that appends the block to a tool's
output puts its own separator before it.

``reference`` is the host's ``HostInfo.reference``: ``read-tool`` lists a rule by its
absolute path for the agent's own Read tool (Claude Code, CONTRACT §6); anything else
keeps the spec's ``(fetch with the read_rule tool)`` line.

``on_demand`` is every line of the index, in order: the on-demand rules, then — with
``overflow = "index"`` (CONTRACT §6) — the pinned rules the budget left out, whose
outcomes keep status ``dropped``. One list, so a renderer that replaces this one lists
them too without knowing the setting.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

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
PROMPT_HEADING = "## Rules newly activated by this prompt"
READ_TOOL = "read-tool"  # HostInfo.reference of a host whose agent reads files itself
MAX_STOPPED_REASON = 200  # a mismatch reason may list many paths; one line stays short
SEPARATOR = "\n\n---\n\n"
LEVELS = {"enforce": "MUST", "recommend": "SHOULD"}
# Lines of a body that would read as the section's own framing (docs/format.md, "What a
# body may contain"); a leading backslash, markdown's escape, turns each into plain text.
_FRAMING_LINES = frozenset({HEADER, INDEX_HEADING, BLOCK_HEADING, PROMPT_HEADING})
_ENTRY_HEAD = ("> Triggered by:", "> Level:")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@hookimpl(trylast=True)
def pi_rules_render(kind: str, data: Any) -> str | None:
    if kind == "section":
        return render_section(data["active"], data["on_demand"], data.get("reference", ""))
    if kind == "entry":
        return render_entry(data)
    if kind == "index-line":
        if isinstance(data, Mapping):
            return render_index_line(data["rule"], data.get("reference", ""))
        return render_index_line(data)
    if kind == "attachment":
        heading = PROMPT_HEADING if data.get("origin") == "prompt" else BLOCK_HEADING
        return render_attachment(data["parts"], heading)
    if kind == "stopped-line":
        return render_stopped_line(data["id"], data["reason"])
    return None


def render_section(active: Sequence[Outcome], on_demand: Sequence[Outcome], reference: str = "") -> str:
    text = f"{HEADER}\n\n{FRAMING}"
    if active:
        text += "\n\n" + SEPARATOR.join(render_entry(o) for o in active)
    if on_demand:
        lines = "\n".join(render_index_line(o.rule, reference) for o in on_demand)
        text += f"\n\n{INDEX_HEADING}\n\n{lines}"
    return text.rstrip("\n") + "\n"


def render_attachment(parts: Sequence[str], heading: str = BLOCK_HEADING) -> str:
    """``heading`` (``## Rules newly activated…``), a blank line, the parts; one trailing newline."""
    body = SEPARATOR.join(parts).rstrip("\n")
    return f"{heading}\n\n{body}\n"


def render_stopped_line(rule_id: str, reason: str) -> str:
    """``- <id> no longer applies (<reason>)``: one line, however long or odd the reason."""
    shown = safe_line(" ".join(reason.split()))
    if len(shown) > MAX_STOPPED_REASON:
        shown = shown[: MAX_STOPPED_REASON - 1] + "…"
    return f"- {safe_line(rule_id)} no longer applies ({shown})"


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


def render_index_line(rule: Rule, reference: str = "") -> str:
    description = safe_line(" ".join(rule.description.split()))
    if reference == READ_TOOL and rule.file.path:
        # No read_rule tool under this host: the agent opens the file itself.
        return f"- {safe_line(rule.file.path)} — {description} (read it with the Read tool)"
    name = rule.reference or rule.relative_path  # a rule made outside discovery has none
    return f"- {safe_line(name)} — {description} (fetch with the read_rule tool)"


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
