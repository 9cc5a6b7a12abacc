"""The delivery audit (issue 24, part 1): replay one scripted session over a real layout and
compare what reached the model with what ``pi-rules report`` admits, step by step.

A layout is a folder of tests/fixtures/delivery/ (rule files from a real repository, see
its SOURCE). The session — start, a prompt, a read and writes in three packages, a second
prompt, a compaction, more tool calls — is replayed through a host:

- ``claude-code``: ``pi-rules hook claude-code`` as a real subprocess per event, with the
  payload shapes the real client sends (tests/fixtures/claude_code_payloads/);
- ``pi``: one ``pi-rules serve --host pi`` process fed JSON lines (docs/protocol.md);
- ``none``: ``pi-rules render`` at each step (no host reads anything by itself).

At each step the *view* — the text the model holds from pi-rules plus the rule files the
host reads by itself — is checked against ``report --host H --json`` for the same facts.
Texts are recognised by their canary lines: the lines of a rule's body that no other rule
body has. Every problem is a ``Finding`` naming layout, host, step, rule and what was wrong.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delivery_hosts import ClaudeHost, PiHost
from delivery_layouts import HOSTS, LAYOUTS, Project, Step, layouts, make_project, report, script

__all__ = ["HOSTS", "LAYOUTS", "Finding", "Project", "Step", "audit", "check_step", "layouts", "make_project", "report",
           "summary"]

# A canary must be long enough not to occur by chance in unrelated text.
_CANARY_MIN = 24
_INDEX_LINE = re.compile(r"^- (?P<ref>\S+) — .*\((?:fetch with the read_rule tool|read it with the Read tool)\)$")
_STOPPED_LINE = re.compile(r"^- (?P<id>\S+) no longer applies ")
# The reasons report gives a file the host's agent reads by itself (hosts/natives).
_NATIVE_REASON = re.compile(r"reads this file")
# What a finding is about: the view disagrees with the report (``agreement``); the budget
# left a rule out and the model is not told (``silent-drop``); a rule points at another that
# the same delivery does not carry (``dangling-pointer``); a touched package's own memory
# file did not reach the model whole (``package-memory``).
KINDS = ("agreement", "silent-drop", "dangling-pointer", "package-memory")
_MEMORY_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
_POINTER = re.compile(r"\((?P<name>[^()\s]+) reaches you as a rule of its own\)")


@dataclass(frozen=True)
class Finding:
    kind: str
    layout: str
    host: str
    step: int
    action: str
    rule: str
    problem: str

    def __str__(self) -> str:
        return f"{self.layout} [{self.host}] step {self.step} ({self.action}): {self.rule}: {self.problem}"


# -- the comparison -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Texts:
    """Rule bodies grouped by identical text (a link and its target, byte-identical copies),
    each group with the canary lines no other group has."""

    group_of: dict[str, int]  # rule path -> group
    canaries: dict[int, list[str]]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _texts(bodies: dict[str, str]) -> _Texts:
    distinct = sorted(set(bodies.values()))
    group_of = {path: distinct.index(body) for path, body in bodies.items()}
    per_group = [Counter(_lines(body)) for body in distinct]
    seen = Counter(line for counts in per_group for line in counts)
    canaries = {g: [line for line, n in counts.items() if n == 1 and seen[line] == 1 and len(line) >= _CANARY_MIN]
                for g, counts in enumerate(per_group)}
    return _Texts(group_of, canaries)


def _count(view: Counter[str], canaries: list[str]) -> int:
    """How many times a text is in the view: its least-seen canary line (a text cut short or
    sent twice shows in its canaries)."""
    return min(view[line] for line in canaries)


def _indexed(view_lines: list[str], rule: dict[str, Any], root: Path) -> int:
    refs = {rule["path"], rule["relativePath"], os.path.relpath(rule["path"], root)}
    return sum(1 for line in view_lines if (m := _INDEX_LINE.match(line)) and m["ref"] in refs)


def check_step(project: Project, host: str, number: int, step: Step, facts: dict[str, Any],
               delivered: str, stale_ok: bool = False, pointer_ok: bool = False) -> list[Finding]:
    """``delivered`` is what the model holds from pi-rules at this step. ``stale_ok``: a text
    delivered earlier that the report no longer admits may still be there (Claude Code keeps
    what it was given until the next prompt withdraws it; Pi's section is replaced only at
    the next turn). ``pointer_ok``: an admitted rule may come as its reference line (Pi's
    mid-run attachment, RULE-SPEC §6: the next turn's section sends the text)."""
    rules = facts["rules"]
    texts = _texts({r["path"]: project.bodies[r["path"]] for r in rules if r["path"] in project.bodies})
    native = [r for r in rules if r["status"] == "inactive" and any(_NATIVE_REASON.search(x) for x in r["reasons"])]
    # What the host reads by itself is in the model's context as it is on disk, once per file.
    native_text = "\n".join({os.path.realpath(r["path"]): project.bodies.get(r["path"], "") for r in native}.values())
    view_lines = _lines(native_text + "\n" + delivered)
    view = Counter(view_lines)
    stopped = {m["id"] for line in _lines(delivered) if (m := _STOPPED_LINE.match(line))}
    found: list[Finding] = []

    def bad(rule: str, problem: str, kind: str = "agreement") -> None:
        found.append(Finding(kind, project.name, host, number, str(step), rule, problem))

    groups: dict[int, list[dict[str, Any]]] = {}
    for rule in rules:
        groups.setdefault(texts.group_of.get(rule["path"], -1), []).append(rule)
    for group, members in groups.items():
        canaries = texts.canaries.get(group, [])
        names = ", ".join(r["id"] for r in members)
        seen = _count(view, canaries) if canaries else None
        wanted = any(r["delivery"] == "section" for r in members) or any(r in native for r in members)
        pointers = sum(_indexed(view_lines, r, project.root) for r in members)
        for rule in members:
            if rule["delivery"] == "index" and _indexed(view_lines, rule, project.root) != 1:
                bad(rule["id"], f"report lists it as an index line; the model got "
                                f"{_indexed(view_lines, rule, project.root)} index lines for it")
        if seen is None:
            continue
        if wanted and seen == 0 and not (pointer_ok and pointers):
            how = "as a pointer only" if pointers else "not at all"
            bad(names, f"report admits it ({_statuses(members)}) but its text reached the model {how}")
        elif seen > 1:
            bad(names, f"its text reached the model {seen} times ({_statuses(members)})")
        elif not wanted and seen == 1 and not stale_ok and not any(r["id"] in stopped for r in members):
            bad(names, f"report does not admit it ({_statuses(members)}) but its text reached the model")
        if seen and pointers:
            bad(names, f"its text reached the model and an index line offers it again ({_statuses(members)})")
        for rule in members:
            if rule["status"] == "dropped" and rule["cause"] == "budget" and not seen and not pointers:
                bad(rule["id"], f"the budget left it out ({rule['tokens']} tokens) and the model is not told "
                                "(no index line)", "silent-drop")
    _dangling(project, rules, native, view, view_lines, texts, bad)
    if step.kind in ("read", "write"):
        _package_memory(project, rules, step.arg, (view, view_lines), texts, bad, pointer_ok)
    return found


def _dangling(project: Project, rules: list[dict[str, Any]], native: list[dict[str, Any]], view: Counter[str],
              view_lines: list[str], texts: _Texts, bad: Any) -> None:
    """A delivered text that says another file "reaches you as a rule of its own" must be
    beside that file's text or index line in the same view (issue 24, part 5)."""
    by_path = {r["path"]: r for r in rules}
    for rule in rules:
        if rule["delivery"] != "section":
            continue
        for match in _POINTER.finditer(project.bodies.get(rule["path"], "")):
            target = by_path.get(str(Path(rule["path"]).parent / match["name"]))
            canaries = texts.canaries.get(texts.group_of.get(target["path"], -1), []) if target else []
            if target is None or (canaries and _count(view, canaries)) or _indexed(view_lines, target, project.root):
                continue
            if target in native:
                continue
            bad(rule["id"], f"says {match['name']} reaches the model as a rule of its own, but "
                            f"{target['id']} is {target['status']}/{target['delivery']} and not in the delivery",
                "dangling-pointer")


def _package_memory(project: Project, rules: list[dict[str, Any]], touched: str,
                    views: tuple[Counter[str], list[str]], texts: _Texts, bad: Any, pointer_ok: bool) -> None:
    """Touching a file in a package brings that package's own memory files (every
    AGENTS.md, CLAUDE.md or GEMINI.md in a folder between the project root and the file)
    whole, from pi-rules or from the host (issue 24, "Done when"); under Pi mid-run, its
    reference line will do (the next turn's section sends the text)."""
    view, view_lines = views
    folders = [str(project.root / parent) for parent in Path(touched).parents if str(parent) != "."]
    for rule in rules:
        path = Path(rule["path"])
        if path.name not in _MEMORY_FILES or str(path.parent) not in folders:
            continue
        canaries = texts.canaries.get(texts.group_of.get(rule["path"], -1), [])
        if not canaries:
            continue
        if pointer_ok and _count(view, canaries) == 0 and _indexed(view_lines, rule, project.root) == 1:
            continue
        if _count(view, canaries) != 1:
            bad(rule["id"], f"touching {touched} should bring this package memory file whole; it reached the "
                            f"model {_count(view, canaries)} times ({_statuses([rule])})", "package-memory")


def summary(findings: list[Finding]) -> str:
    """One line per layout, host, rule and problem, naming every step it was seen at."""
    steps: dict[tuple[str, str, str, str], list[str]] = {}
    for f in findings:
        steps.setdefault((f.layout, f.host, f.rule, f.problem), []).append(f"{f.step} ({f.action})")
    return "\n".join(f"{layout} [{host}] {rule}: {problem} — at step {', '.join(at)}"
                     for (layout, host, rule, problem), at in steps.items())


def _statuses(members: list[dict[str, Any]]) -> str:
    return "; ".join(f"{r['id']}: {r['status']}/{r['delivery']}"
                     + (f" ({r['reasons'][0][:80]})" if r["status"] == "inactive" and r["reasons"] else "")
                     for r in members)


def audit(project: Project, host: str) -> list[Finding]:
    """Replay the script through ``host`` and check the view after every step."""
    drivers = {"claude-code": ClaudeHost, "pi": PiHost}
    driver = drivers[host](project) if host in drivers else None
    touched: list[str] = []
    segment, turn = "", ""
    found: list[Finding] = []
    try:
        for number, step in enumerate(script(project), 1):
            if step.kind in ("read", "write") and step.arg not in touched:
                touched.append(step.arg)
            # Mid-run evaluations use no prompt (docs/session.md); a prompt step uses its own.
            prompt = step.arg if step.kind == "prompt" else ""
            facts = report(project, host, touched, prompt)
            if driver is None:
                done = project.cli("render", "--prompt", prompt, *[a for p in touched for a in ("--touched", p)])
                found += check_step(project, host, number, step, facts, done.stdout)
                continue
            said = driver.run(step)
            if isinstance(driver, ClaudeHost):
                # Deliver-once: the conversation since the start or the last compaction.
                segment = said if step.kind == "compact" else segment + "\n" + said
                found += check_step(project, host, number, step, facts, segment,
                                    stale_ok=step.kind in ("read", "write"))
            else:
                # Pi: the turn's section plus what this turn's tool results attached.
                turn = "" if step.kind == "prompt" else turn + "\n" + said
                if step.kind in ("start", "compact"):
                    continue  # Pi has no section before its first turn; compaction keeps it
                mid_run = step.kind in ("read", "write")
                found += check_step(project, host, number, step, facts, driver.section + "\n" + turn,
                                    stale_ok=mid_run, pointer_ok=mid_run)
    finally:
        if driver is not None:
            driver.close()
    return found
