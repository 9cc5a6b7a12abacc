"""The ``lint-formats`` plugin: what another tool's rule file means to that tool
(docs/lint.md): ``ignored-key``, ``ignored-file`` and ``size-cap`` warnings.

pi-rules reads other tools' files leniently (docs/importers.md), so a file can work here
and silently not in the tool it was written for — or be cut short there. Each warning
names the tool's own rule and the docs/importers.md section that quotes it:

- ``ignored-key``: a key the file's own tool ignores (``globs:`` in ``.claude/rules``,
  ``paths:`` in a Copilot file, a Windsurf file with ``alwaysApply``/``globs`` but no
  ``trigger``, Cursor's ``alwaysApply: "true"`` as text);
- ``ignored-file``: a plain ``.md`` file in ``.cursor/rules``, where Cursor reads ``.mdc``
  (rule folders, ``<name>/RULE.md``, are Cursor 2.2's own layout and pass), or a ``.md``
  file in ``.github/instructions`` without the ``.instructions.md`` suffix Copilot needs;
- ``manual-attach``: a Copilot ``.instructions.md`` without ``applyTo``: always on by
  RULE-SPEC, attached only by hand in VS Code;
- ``double-frontmatter``: a second frontmatter block right after the first (its keys do
  nothing, its lines are sent as text);
- ``size-cap``: a file over its tool's documented size (Windsurf's characters per rule
  file, Codex's 32 KiB of ``AGENTS.md`` text from the git root down).

Frontmatter keys are read line by line (top-level ``key: value`` lines), not as YAML:
the files this looks at are often not valid YAML, and those that are broken are
``yaml-syntax`` errors already.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Mapping, Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext, position
from rules_core.model.places import frontmatter_keys as key_places
from rules_core.model import Discovery, Rule, RuleWarning

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(.*)\Z")
_QUOTED_TRUE = re.compile(r"""(["'])\s*true\s*\1""", re.IGNORECASE)
PLUGIN = "lint-formats"
CLAUDE = 'docs/importers.md, "The claude importer"'
COPILOT = 'docs/importers.md, "The copilot importer"'
CURSOR = 'docs/importers.md, "The cursor importer"'
WINDSURF = 'docs/importers.md, "The windsurf importer"'
AGENTS_MD = 'docs/importers.md, "The agents-md importer"'
# Documented caps: Windsurf's Memories & Rules page (characters per workspace rule file,
# and for global_rules.md), Codex's project_doc_max_bytes (bytes of AGENTS.md, together).
WINDSURF_CHARS = 12_000
WINDSURF_GLOBAL_CHARS = 6_000
CODEX_BYTES = 32 * 1024
_STRAY_ENTRIES = 2_000  # entries of .github/instructions looked at for misnamed files

# (code, message, the key at fault — None: the whole file)
Finding = tuple[str, str, "str | None"]
# (the rule, its frontmatter keys, its text) -> findings
Check = Callable[[Rule, Mapping[str, str], str], list[Finding]]


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    found: list[RuleWarning] = []
    for rule in discovery.rules:
        check = _CHECKS.get(rule.file.plugin)
        if check is None or not check[0](rule):
            continue
        text = context.read_text(rule)
        if text is None:
            continue  # vanished or unreadable since discovery: nothing to say about it
        places = key_places(text)
        for code, message, key in check[1](rule, frontmatter_keys(text), text):
            line, column = places[key][:2] if key in places else (None, None)  # the key's own line
            found.append(RuleWarning(code, rule.file.path, message, PLUGIN, line, column))
    found.extend(_codex_size(discovery.rules))
    found.extend(_second_frontmatter(discovery.rules, context))
    if context.trusted:
        found.extend(_stray_copilot_files(context.cwd))
    return found


def _second_frontmatter(rules: Sequence[Rule], context: LintContext) -> list[RuleWarning]:
    """A file whose frontmatter block is followed by another one: only the first is read as
    frontmatter (by pi-rules and by the tools), so the second one's keys do nothing and its
    lines reach the model as text."""
    found = []
    for rule in rules:
        if not rule.body.lstrip("\n").startswith("---"):
            continue  # the cheap test first: most bodies start with text
        text = context.read_text(rule)
        end = _block_end(text) if text is not None else None
        if end is None:
            continue
        rest = text[end:].lstrip("\n")  # type: ignore[index]
        keys = frontmatter_keys(rest)
        if keys:
            line, column = position(text, len(text) - len(rest))  # type: ignore[arg-type]  # its opening ---
            found.append(RuleWarning("double-frontmatter", rule.file.path, (
                f"a second frontmatter block follows the first ({', '.join(list(keys)[:5])}): only the first block "
                "at the top of the file is frontmatter, so these keys do nothing and their lines are sent to the "
                "model as text — merge them into the first block"
            ), PLUGIN, line, column))
    return found


def _block_end(text: str) -> int | None:
    """Where the text after a leading ``---`` block starts, or None without one."""
    if not text.startswith("---\n"):
        return None
    close = text.find("\n---\n", 3)
    if close == -1:
        return None
    return close + len("\n---\n")


def _stray_copilot_files(cwd: str) -> list[RuleWarning]:
    """Markdown files in ``.github/instructions`` that do not end in ``.instructions.md``:
    Copilot reads only those (so does pi-rules), so these are read by neither. Listed
    below cwd only, never through a symbolic link, at most ``_STRAY_ENTRIES`` entries."""
    root = os.path.join(cwd, ".github", "instructions")
    if any(os.path.islink(p) for p in (os.path.dirname(root), root)):
        return []
    found, pending, seen = [], [root], 0
    while pending and seen < _STRAY_ENTRIES:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                listed = sorted(entries, key=lambda e: e.name)[:_STRAY_ENTRIES]
        except OSError:
            continue
        for entry in listed:
            seen += 1
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.name.endswith(".md") and not entry.name.endswith(".instructions.md"):
                fixed = entry.name[: -len(".md")] + ".instructions.md"
                found.append(RuleWarning("ignored-file", entry.path, (
                    f"GitHub Copilot reads only *.instructions.md files in .github/instructions, so this file is "
                    f"read neither by Copilot nor by pi-rules — rename it to {fixed} ({COPILOT})"
                ), PLUGIN))
    return sorted(found, key=lambda w: w.path)


def frontmatter_keys(text: str) -> dict[str, str]:
    """Top-level ``key: value`` lines of a leading ``---`` block, first occurrence each,
    values raw (stripped); empty without a closed block."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}
    keys: dict[str, str] = {}
    for line in lines[1:]:
        if line.rstrip() == "---":
            return keys
        match = _KEY.match(line)
        if match:
            keys.setdefault(match.group(1), match.group(2).strip())
    return {}


def _claude(rule: Rule, keys: Mapping[str, str], text: str) -> list[Finding]:
    scoped = "paths" in keys
    found = []
    for key in ("globs", "applyTo"):
        if key in keys:
            effect = ("paths decides, so remove it" if scoped else
                      "without paths the rule applies to every file, in Claude Code and here — rename it to paths")
            found.append(("ignored-key", f"Claude Code ignores '{key}:' and reads only 'paths:'; {effect} ({CLAUDE})", key))
    if "alwaysApply" in keys:
        effect = "paths decides, so remove it" if scoped else "a rule without paths applies always anyway — remove it"
        found.append(("ignored-key", f"Claude Code ignores 'alwaysApply:'; {effect} ({CLAUDE})", "alwaysApply"))
    return found


def _copilot(rule: Rule, keys: Mapping[str, str], text: str) -> list[Finding]:
    scoped = "applyTo" in keys
    found = []
    if not scoped:
        found.append(("manual-attach", (
            "this instructions file has no applyTo: RULE-SPEC reads it as applyTo: \"**\", so pi-rules sends it in "
            "every session, but VS Code applies an instructions file without applyTo only when it is attached to a "
            f"chat by hand — write applyTo: \"**\" so both agree, or a glob if it is meant for some files ({COPILOT})"
        ), None))
    for key in ("globs", "paths", "alwaysApply"):
        if key in keys:
            effect = ("applyTo decides, so remove it" if scoped else
                      "without applyTo the file applies to every request, in Copilot and here — "
                      "write applyTo: \"<globs>\" instead")
            found.append(("ignored-key", f"GitHub Copilot ignores '{key}:' in instructions files and reads only "
                                         f"'applyTo:'; {effect} ({COPILOT})", key))
    return found


def _cursor(rule: Rule, keys: Mapping[str, str], text: str) -> list[Finding]:
    found = []
    name = rule.relative_path.rsplit("/", 1)[-1]
    if name.endswith(".md") and name != "RULE.md":
        found.append(("ignored-file", (
            f"Cursor's rules are .mdc files, and its rules page says a plain .md file in .cursor/rules is ignored "
            f"(only newer versions read it; pi-rules does) — rename it to {name[:-3]}.mdc ({CURSOR})"
        ), None))
    if _QUOTED_TRUE.fullmatch(keys.get("alwaysApply", "")):
        found.append(("ignored-key", (
            f"alwaysApply: {keys['alwaysApply']} is text: Cursor applies the rule always only for the boolean, "
            f"while pi-rules reads the text as true — write alwaysApply: true, unquoted ({CURSOR})"
        ), "alwaysApply"))
    for key in ("paths", "applyTo", "trigger"):
        if key in keys:
            found.append(("ignored-key", f"Cursor ignores '{key}:' and reads globs, alwaysApply and description; "
                                         f"remove it or write globs: instead ({CURSOR})", key))
    return found


def _windsurf(rule: Rule, keys: Mapping[str, str], text: str) -> list[Finding]:
    if rule.source == "global" or rule.relative_path == ".windsurfrules":
        cap = WINDSURF_GLOBAL_CHARS if rule.source == "global" else WINDSURF_CHARS
        return _windsurf_size(text, cap)
    found = _windsurf_size(text, WINDSURF_CHARS)
    trigger = keys.get("trigger", "").strip("'\" ").lower()
    if not trigger:
        for key, fix in (("alwaysApply", "trigger: always_on"), ("globs", "trigger: glob")):
            if key in keys:
                found.append(("ignored-key", (
                    f"Windsurf ignores '{key}:' and reads 'trigger:'; without a trigger Windsurf applies this "
                    f"rule only when it is @mentioned, while pi-rules honours {key} as the peers do — add {fix} "
                    f"({WINDSURF})"
                ), key))
    else:
        if "globs" in keys and trigger != "glob":
            found.append(("ignored-key", f"'globs:' is ignored unless trigger: glob, by Windsurf and here — remove "
                                         f"it or write trigger: glob ({WINDSURF})", "globs"))
        if "alwaysApply" in keys:
            found.append(("ignored-key", f"'alwaysApply:' is ignored when a trigger is set, by Windsurf and here — "
                                         f"remove it ({WINDSURF})", "alwaysApply"))
    for key in ("paths", "applyTo"):
        if key in keys:
            found.append(("ignored-key", f"Windsurf ignores '{key}:' — write trigger: glob and globs: instead "
                                         f"({WINDSURF})", key))
    return found


def _windsurf_size(text: str, cap: int) -> list[Finding]:
    if len(text) <= cap:
        return []
    return [("size-cap", (
        f"the file has {len(text):,} characters: Windsurf reads at most {cap:,} of a rule file and cuts the rest, "
        f"while pi-rules sends it whole — split it into smaller rules ({WINDSURF}; Windsurf's \"Memories & Rules\")"
    ), None)]


def _codex_size(rules: Sequence[Rule]) -> list[RuleWarning]:
    """Codex concatenates AGENTS.md files from the git root down to the folder it works
    in and stops at ``project_doc_max_bytes`` together: a file past that point is cut
    or skipped there. Checked for each file's own folder chain, in discovery order
    (general to specific, as Codex reads them)."""
    files = [r for r in rules if r.file.plugin == "agents-md" and r.source == "project"]
    found = []
    for rule in files:
        folder = os.path.dirname(rule.file.path)
        chain = [r for r in files if _holds(os.path.dirname(r.file.path), folder) and r.index <= rule.index]
        before = sum(len(r.body.encode("utf-8")) for r in chain if r is not rule)
        size = len(rule.body.encode("utf-8"))
        if before + size <= CODEX_BYTES:
            continue
        fate = "skips this file" if before >= CODEX_BYTES else f"reads only its first {CODEX_BYTES - before:,} bytes"
        found.append(RuleWarning("size-cap", rule.file.path, (
            f"Codex reads AGENTS.md files from the git root down to this folder and stops at 32 KiB together "
            f"(project_doc_max_bytes): with the {before:,} bytes before it this file ({size:,} bytes) ends at "
            f"{before + size:,}, so Codex {fate}, while pi-rules sends it whole — shorten it or move text into "
            f"scoped rules ({AGENTS_MD})"
        ), PLUGIN))
    return found


def _holds(ancestor: str, folder: str) -> bool:
    return folder == ancestor or folder.startswith(ancestor.rstrip(os.sep) + os.sep)


def _is_copilot_scoped(rule: Rule) -> bool:
    return rule.relative_path.endswith(".instructions.md")  # not the repository-wide file


def _is_cursor_rule(rule: Rule) -> bool:
    return rule.source == "project" and rule.relative_path != ".cursorrules"


def _always(rule: Rule) -> bool:
    return True


# plugin -> (which of its files to look at, the check)
_CHECKS: Mapping[str, tuple[Callable[[Rule], bool], Check]] = {
    "claude": (_always, _claude),
    "copilot": (_is_copilot_scoped, _copilot),
    "cursor": (_is_cursor_rule, _cursor),
    "windsurf": (_always, _windsurf),
}
