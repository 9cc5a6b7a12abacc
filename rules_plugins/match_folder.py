"""The ``folder-scope`` matcher: an on-demand rule from a folder below the working
directory is listed only while the agent works in that folder.

A nested ``.pi/rules`` or ``.cursor/rules`` folder (and any source that gives its files a
base below cwd) belongs to one package. Its pinned rules are already confined by their
globs, which are relative to that base; its on-demand rules have no globs, so without this
matcher a test fixture six folders deep would be offered in every prompt. The rule stays
readable with ``read_rule`` wherever the agent works.
"""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.model import MatchContext, Rule, Verdict

RANK = 15
CONDITION = "folder"


@hookimpl
def pi_rules_match(rule: Rule, context: MatchContext) -> list[Verdict]:
    if rule.load != "on-demand" or rule.source != "project":
        return []
    cwd = (context.cwd or context.facts.cwd).rstrip("/") or "/"
    base = rule.file.base.rstrip("/")
    if not base.startswith(cwd.rstrip("/") + "/"):
        return []  # cwd's own rules and its ancestors' apply wherever the agent works
    folder = base[len(cwd.rstrip("/")) + 1 :]
    for touched in context.touched:
        if touched == folder or touched.startswith(folder + "/"):
            return [Verdict(CONDITION, True, (f"touched {touched} in {folder}/",), RANK)]
    reason = f"no touched path lies under {folder}/ (this rule belongs to that folder)"
    return [Verdict(CONDITION, False, (reason,), RANK)]
