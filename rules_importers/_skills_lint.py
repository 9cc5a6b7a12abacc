"""``check`` warnings for skills, against the Agent Skills specification
(https://agentskills.io/specification; docs/lint.md lists the codes).

A skill that breaks one of these still loads (pi-rules reads skills leniently, as their
clients do); the warning says what another client may refuse or cut. The missing-file
check is the one place a linter looks at the disk itself: it asks whether a file a
skill's body links to exists, only inside that skill's own folder, never reading it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext, position
from rules_core.model import Discovery, Rule, RuleError, RuleWarning
from rules_core.model.places import Place, frontmatter_keys

from ._skills_find import NAME
from ._skills_read import read_skill, text_value

SPEC = "https://agentskills.io/specification"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_TOKENS = 5000
MAX_CHECKED_LINKS = 200
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
# A markdown link's target, and a code span naming a file in one of the spec's folders.
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SPAN = re.compile(r"`((?:scripts|references|assets)/[^`\s]+)`")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    found: list[RuleWarning] = []
    for rule in discovery.rules:
        if rule.file.plugin != NAME:
            continue
        text = context.read_text(rule)
        if text is None:
            continue
        keys = frontmatter_keys(text)
        for code, message in _check(rule, text, context):
            line, column = _place(code, message, text, keys)
            found.append(RuleWarning(code, rule.file.path, message, NAME, line, column))
    return found


# The key each check is about: its warning points at the key's value (issue 34).
_KEY_OF = {"skill-name": "name", "skill-description": "description", "skill-compatibility": "compatibility"}
_NAMED = re.compile(r"the body names (.+?), which is not in the skill's folder")


def _place(code: str, message: str, text: str, keys: dict[str, Place]) -> tuple[int | None, int | None]:
    """Where a skill warning points: the key's value, the missing file's name in the body,
    or nowhere (the file as a whole: no frontmatter, a shadowed copy, the body's size)."""
    if code in _KEY_OF:
        place = keys.get(_KEY_OF[code])
        return (place[2], place[3]) if place else (None, None)
    named = _NAMED.match(message) if code == "skill-missing-file" else None
    if named is None:
        return None, None
    end = text.find("\n---", 3) if text.startswith("---") else -1
    index = text.find(named.group(1), end + 1 if end > 0 else 0)
    return position(text, index) if index >= 0 else (None, None)


def _check(rule: Rule, text: str, context: LintContext) -> list[tuple[str, str]]:
    document = read_skill(rule.file, text)
    if isinstance(document, RuleError):
        return []  # damaged frontmatter is a yaml-syntax error already
    data, body = document.data, document.body
    folder = os.path.basename(os.path.dirname(rule.file.path))
    out: list[tuple[str, str]] = []
    if not document.has_frontmatter:
        out.append(("skill-no-frontmatter", "SKILL.md has no frontmatter; the specification requires one with "
                    f"name and description — start the file with ---, name: {folder}, description: …, ---"))
    elif rule.file.elsewhere:
        out.append(("skill-shadowed", f"skill {folder!r} is also at {rule.file.elsewhere[0]}, found first; "
                    "this one is not offered — rename one of them or remove the copy"))
    if document.has_frontmatter:
        out += _name(text_value(data, "name"), folder)
        out += _description(text_value(data, "description"))
    compatibility = text_value(data, "compatibility")
    if compatibility is not None and len(compatibility) > MAX_COMPATIBILITY:
        out.append(("skill-compatibility", f"compatibility is {len(compatibility)} characters; the specification "
                    f"allows {MAX_COMPATIBILITY} — keep it to the environment the skill needs"))
    tokens = context.tokens(dataclasses.replace(rule, body=body))
    if tokens > MAX_BODY_TOKENS:
        out.append(("skill-body-size", f"the body is ~{tokens} tokens; the specification recommends under "
                    f"{MAX_BODY_TOKENS} — move detail to references/ files the body links to"))
    out += _missing(body, os.path.dirname(rule.file.path))
    return out


def _name(name: str | None, folder: str) -> list[tuple[str, str]]:
    if not name:
        return [("skill-name", f"no name; the specification requires one equal to the folder: name: {folder}")]
    problems = []
    if len(name) > MAX_NAME:
        problems.append(f"is {len(name)} characters (at most {MAX_NAME})")
    if not _NAME.match(name):
        problems.append("may hold only lower-case letters, digits and single hyphens, not at either end")
    if name != folder:
        problems.append(f"differs from its folder {folder!r} (they must be equal)")
    return [("skill-name", f"name {name!r} {'; '.join(problems)}")] if problems else []


def _description(description: str | None) -> list[tuple[str, str]]:
    if not description:
        return [("skill-description", "no description; the specification requires one (what the skill does and "
                 "when to use it) — it is all the model sees until the skill is read")]
    if len(description) > MAX_DESCRIPTION:
        return [("skill-description", f"description is {len(description)} characters; the specification allows "
                 f"{MAX_DESCRIPTION}")]
    return []


def _missing(body: str, skill_dir: str) -> list[tuple[str, str]]:
    """Relative links and ``scripts/…``-style code spans whose file is not in the folder."""
    targets = [m.group(1) for m in _LINK.finditer(body)] + [m.group(1) for m in _SPAN.finditer(body)]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for target in targets[:MAX_CHECKED_LINKS]:
        path = target.split("#", 1)[0].split("?", 1)[0]
        if not path or path in seen or _SCHEME.match(path) or path.startswith(("/", "~", "$", "{")):
            continue
        seen.add(path)
        normal = os.path.normpath(path)
        if normal == ".." or normal.startswith(".." + os.sep):
            continue  # outside the skill's folder: not this check's business
        if not os.path.lexists(os.path.join(skill_dir, normal)):
            out.append(("skill-missing-file", f"the body names {path}, which is not in the skill's folder; "
                        "add the file or fix the reference"))
    return out
