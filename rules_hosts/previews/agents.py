"""How each agent judges its own files (docs/export.md, "Previews", cites each tool).

The importers already read every file as its tool does; a profile adds what only the
agent itself does — a file it never loads by itself (Cursor's and Windsurf's manual rules,
Copilot's files without ``applyTo``, Codex's files below cwd), its matcher where it differs
from the engine's (VS Code's ``applyTo``), its order and its caps.
"""

from __future__ import annotations

import os
import re

from rules_core.model import Facts, Outcome
from rules_core.discovery.reading import read_rule_text
from rules_importers._memory import is_folder_scoped
from rules_plugins.frontmatter import FrontmatterError, load_yaml, split_frontmatter

from .model import Entry, State

_LINE_KEY = re.compile(r"^([A-Za-z_]+)\s*:\s*(.*?)\s*$")


def entry(outcome: Outcome, state: State | None = None, reason: str = "") -> Entry:
    """The outcome as the agent sees it: active → loaded, on-demand → on-demand, else
    not loaded with pi-rules' reason — unless the profile says otherwise."""
    rule = outcome.rule
    if state is None:
        state = {"active": "loaded", "on-demand": "on-demand"}.get(outcome.status, "not-loaded")
        reason = reason or "; ".join(outcome.reasons) or ("always applied" if state == "loaded" else outcome.status)
    text = rule.body if state == "loaded" else ""
    return Entry(rule.file.path, rule.id, state, reason, text, len(rule.body.encode("utf-8")))


def frontmatter(path: str) -> dict[str, object]:
    """The file's frontmatter keys, as read as leniently as the tools read them: YAML,
    else ``key: value`` lines (Cursor's editor writes unquoted globs YAML refuses)."""
    text = read_rule_text(path, follow=False)
    if not isinstance(text, str):
        return {}
    try:
        block = split_frontmatter(text).yaml_text
    except FrontmatterError:
        return {}
    if block is None:
        return {}
    try:
        data = load_yaml(block)
        if isinstance(data, dict):
            return data
    except FrontmatterError:
        pass
    found: dict[str, object] = {}
    for line in block.split("\n"):
        match = _LINE_KEY.match(line)
        if match:
            found.setdefault(match.group(1), match.group(2).strip("'\""))
    return found


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value == []


# -- Cursor -------------------------------------------------------------------------------

CURSOR_MANUAL = "Manual rule (no alwaysApply, globs or description): Cursor loads it only when you @-mention it"


def cursor_judge(outcome: Outcome, facts: Facts) -> Entry:
    rule = outcome.rule
    if rule.file.plugin == "cursor" and outcome.status == "on-demand" and not rule.always_apply:
        keys = frontmatter(rule.file.path)
        if _blank(keys.get("description")) and _blank(keys.get("globs")) and keys.get("alwaysApply") not in (
                True, "true"):
            return entry(outcome, "manual", CURSOR_MANUAL)
        return entry(outcome, "on-demand", "Agent Requested: Cursor shows the description; the agent fetches it")
    return entry(outcome)


# -- Windsurf -----------------------------------------------------------------------------

WINDSURF_FILE_CAP = 6000  # characters per rule file (Windsurf docs, "Memories & Rules")
WINDSURF_TOTAL_CAP = 12000  # characters of global and workspace rules together, global first


def windsurf_judge(outcome: Outcome, facts: Facts) -> Entry:
    rule = outcome.rule
    if rule.file.plugin == "windsurf" and outcome.status == "on-demand":
        keys = frontmatter(rule.file.path)
        trigger = str(keys.get("trigger") or "").strip().lower()
        if trigger == "manual" or (not trigger and _blank(keys.get("globs")) and keys.get("alwaysApply") is not True):
            return entry(outcome, "manual", "manual rule: Windsurf loads it only when you @-mention it")
        return entry(outcome, "on-demand", "model_decision: Cascade sees the description and decides")
    found = entry(outcome)
    return Entry(found.path, found.rule_id, found.state, found.reason, found.text, len(rule.body))


def windsurf_finish(entries: list[Entry], facts: Facts) -> tuple[list[Entry], list[str], str]:
    """6,000 characters per file, 12,000 in all (global rules first), the rest truncated."""
    out: list[Entry] = []
    warnings: list[str] = []
    left = WINDSURF_TOTAL_CAP
    for item in entries:
        if item.state != "loaded":
            out.append(item)
            continue
        keep = min(len(item.text), WINDSURF_FILE_CAP, max(left, 0))
        left -= keep
        if keep < len(item.text):
            why = (f"Windsurf keeps {keep} of its {len(item.text)} characters: a rule file is cut at "
                   f"{WINDSURF_FILE_CAP}, all rules together at {WINDSURF_TOTAL_CAP}")
            warnings.append(f"Windsurf cuts {os.path.relpath(item.path, facts.cwd)}: {why}")
            item = Entry(item.path, item.rule_id, "cut", why, item.text[:keep], item.size)
        out.append(item)
    return out, warnings, "\n\n".join(e.text for e in out if e.state in ("loaded", "cut") and e.text)


# -- Codex --------------------------------------------------------------------------------

CODEX_MAX_BYTES = 32 * 1024  # project_doc_max_bytes' default (codex-rs/core/src/project_doc.rs)


def codex_judge(outcome: Outcome, facts: Facts) -> Entry:
    rule = outcome.rule
    name = os.path.basename(rule.file.path)
    if is_folder_scoped(rule.file):
        return entry(outcome, "not-loaded", "below the working directory: Codex reads AGENTS.md files from the "
                                            "git root down to cwd only")
    if name not in ("AGENTS.md", "AGENTS.override.md"):
        return entry(outcome, "not-loaded", f"Codex reads {name} only when project_doc_fallback_filenames names it")
    if rule.inactive_reason:
        return entry(outcome, "not-loaded", "empty: Codex skips a file with nothing but whitespace")
    return entry(outcome, "loaded", "AGENTS.md chain from the git root to cwd")


def codex_order(item: Entry) -> tuple:
    return (item.state != "loaded", item.path.count(os.sep), item.path)  # root first, cwd last


def codex_finish(entries: list[Entry], facts: Facts) -> tuple[list[Entry], list[str], str]:
    """Codex reads the chain root first with one byte budget: the file that overflows it
    is truncated, every file after it is left out — the cut falls on the leaf side."""
    out: list[Entry] = []
    warnings: list[str] = []
    parts: list[str] = []
    left = CODEX_MAX_BYTES
    total = sum(e.size for e in entries if e.state == "loaded")
    for item in entries:
        if item.state != "loaded":
            out.append(item)
            continue
        data = item.text.encode("utf-8")
        kept = data[:left].decode("utf-8", errors="replace") if left > 0 else ""
        if len(data) > left:
            why = (f"Codex keeps {max(left, 0)} of its {len(data)} bytes: the AGENTS.md chain is {total} bytes, over "
                   f"project_doc_max_bytes ({CODEX_MAX_BYTES}), and the files nearer the git root come first")
            warnings.append(f"Codex cuts {os.path.relpath(item.path, facts.cwd)}: {why}")
            item = Entry(item.path, item.rule_id, "cut", why, kept, item.size)
        left -= len(kept.encode("utf-8"))
        if item.text:
            parts.append(item.text)
        out.append(item)
    return out, warnings, "\n\n".join(parts)


# -- Copilot (VS Code) ----------------------------------------------------------------------

COPILOT_MANUAL = ("no applyTo: VS Code attaches it only when you add it to the chat (agent mode lists it, with "
                  "its description, for the model to read)")


def copilot_judge(outcome: Outcome, facts: Facts) -> Entry:
    from .vscode import apply_to_matches

    rule = outcome.rule
    if os.path.basename(rule.file.path) == "copilot-instructions.md":
        return entry(outcome)
    if rule.inactive_reason:
        return entry(outcome)
    apply_to = frontmatter(rule.file.path).get("applyTo")
    if not isinstance(apply_to, str) or not apply_to.strip():
        return entry(outcome, "manual", COPILOT_MANUAL)
    touched = [os.path.join(facts.cwd, path) for path in facts.touched]
    found = apply_to_matches(apply_to, touched)
    if found is None:
        return entry(outcome, "not-loaded", f"applyTo {apply_to!r} matches no file in the chat")
    pattern, path = found
    why = f"applyTo pattern {pattern!r} is always applied" if path is None else \
        f"applyTo pattern {pattern!r} matches {os.path.relpath(path, facts.cwd)}"
    return entry(outcome, "loaded", why)


def plain_finish(entries: list[Entry], facts: Facts) -> tuple[list[Entry], list[str], str]:
    return entries, [], "\n\n".join(e.text for e in entries if e.state == "loaded" and e.text)


# -- Gemini CLI ---------------------------------------------------------------------------


def gemini_judge(outcome: Outcome, facts: Facts) -> Entry:
    """Gemini CLI loads every GEMINI.md it finds at start — below cwd too — whatever is touched."""
    rule = outcome.rule
    if rule.inactive_reason:
        return entry(outcome)
    where = "below the working directory (Gemini CLI scans down at start)" if is_folder_scoped(rule.file) else \
        "global" if rule.source == "global" else "the working directory or above it"
    return entry(outcome, "loaded", f"GEMINI.md {where}")


def gemini_order(item: Entry) -> tuple:
    home = os.path.expanduser("~")
    return (not item.path.startswith(os.path.join(home, ".gemini") + os.sep), item.path.count(os.sep), item.path)


def gemini_finish(entries: list[Entry], facts: Facts) -> tuple[list[Entry], list[str], str]:
    # Gemini CLI frames each file with its path (packages/core/src/utils/memoryDiscovery.ts).
    parts = []
    for item in entries:
        if item.state == "loaded":
            shown = os.path.relpath(item.path, facts.cwd)
            parts.append(f"--- Context from: {shown} ---\n{item.text.strip()}\n--- End of Context from: {shown} ---")
    return entries, [], "\n\n".join(parts)


# -- Kiro ---------------------------------------------------------------------------------


def kiro_judge(outcome: Outcome, facts: Facts) -> Entry:
    if outcome.status == "inactive" and "manual steering file" in " ".join(outcome.reasons):
        return entry(outcome, "manual", "; ".join(outcome.reasons))
    return entry(outcome)
