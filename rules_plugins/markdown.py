"""The ``markdown`` renderer: the system-prompt section and its pieces (RULE-SPEC §6).

Kinds: ``section`` (data: ``{"active": [Outcome], "on_demand": [Outcome]}``), ``entry``
(one ``Outcome``) and ``index-line`` (one ``Rule``). The attachment block reuses
``entry`` and ``index-line`` so its bytes equal the section's.
"""

from __future__ import annotations

from typing import Any, Sequence

from rules_core import hookimpl
from rules_core.model import Outcome, Rule

HEADER = "# Rules"
FRAMING = (
    "These project rules apply to the current task. Follow them; "
    "a rule marked MUST is mandatory, SHOULD is strongly recommended."
)
INDEX_HEADING = "## Reference rules available on demand"
SEPARATOR = "\n\n---\n\n"
LEVELS = {"enforce": "MUST", "recommend": "SHOULD"}


@hookimpl(trylast=True)
def pi_rules_render(kind: str, data: Any) -> str | None:
    if kind == "section":
        return render_section(data["active"], data["on_demand"])
    if kind == "entry":
        return render_entry(data)
    if kind == "index-line":
        return render_index_line(data)
    return None


def render_section(active: Sequence[Outcome], on_demand: Sequence[Outcome]) -> str:
    text = f"{HEADER}\n\n{FRAMING}"
    if active:
        text += "\n\n" + SEPARATOR.join(render_entry(o) for o in active)
    if on_demand:
        lines = "\n".join(render_index_line(o.rule) for o in on_demand)
        text += f"\n\n{INDEX_HEADING}\n\n{lines}"
    return text.rstrip("\n") + "\n"


def render_entry(outcome: Outcome) -> str:
    rule = outcome.rule
    lines = [f"## {rule.id}"]
    if outcome.reasons:
        lines.append("> Triggered by: " + "; ".join(outcome.reasons))
    level = LEVELS.get(rule.enforcement)
    if level:
        lines.append(f"> Level: {level}")
    head = "\n".join(lines)
    return f"{head}\n\n{rule.body}" if rule.body else head


def render_index_line(rule: Rule) -> str:
    description = " ".join(rule.description.split())
    return f"- {rule.relative_path} — {description} (fetch with the read_rule tool)"
