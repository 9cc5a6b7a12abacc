"""Reading one skill: its ``SKILL.md`` frontmatter (leniently, as skill clients do), and
the other files of its folder, listed — never read — for ``read_rule``.

Frontmatter is strict YAML first, then the ``oh-my-pi`` recovery (a value holding ``: ``
is quoted: ``description: Use when: …`` is common in real skills), then a last, loose
reading of top-level ``key: value`` lines, as clients that split on the first colon do.
Only a block that not even the loose reading accounts for stays a ``yaml-syntax`` error.
"""

from __future__ import annotations

import os
import re
from types import MappingProxyType
from typing import Any, Mapping

from rules_core.model import RuleError, RuleFile
from rules_plugins.frontmatter import FrontmatterError, split_frontmatter

from ._recovery import Document, read_document

MAX_LISTED = 40
MAX_DEPTH = 4
MAX_VISITED = 2_000
_TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*)\Z")
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})


def read_skill(rule_file: RuleFile, text: str) -> Document | RuleError:
    document = read_document(rule_file, text, dialect="oh-my-pi")
    if not isinstance(document, RuleError):
        return document
    loose = _loose(text)
    return document if loose is None else loose


def _loose(text: str) -> Document | None:
    """Top-level ``key: value`` lines, quotes stripped; indented lines continue the value
    above them (a folded description); a list item or anything else gives up."""
    try:
        split = split_frontmatter(text)
    except FrontmatterError:
        return None
    if split.yaml_text is None:
        return None
    data: dict[str, Any] = {}
    last = ""
    for line in split.yaml_text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[:1] in (" ", "\t") and last:
            data[last] = (str(data[last]) + " " + line.strip()).strip()
            continue
        match = _TOP_KEY.match(line.rstrip())
        if match is None:
            return None
        last, value = match.group(1), match.group(2).strip()
        if value in (">", "|", ">-", "|-"):
            value = ""
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        data[last] = True if value == "true" else False if value == "false" else value
    return Document(MappingProxyType(data), split.body, True)


def folder_files(skill_dir: str) -> tuple[list[str], int, list[str]]:
    """The skill folder's other files (relative, sorted, at most ``MAX_LISTED``), how many
    there are in all, and the folders looked at (a change to one re-lists them). Never
    through symbolic links or hidden folders, at most ``MAX_DEPTH`` levels."""
    files: list[str] = []
    folders: list[str] = []
    visited = 0
    pending = [(skill_dir, "", 0)]
    while pending and visited < MAX_VISITED:
        folder, prefix, depth = pending.pop()
        folders.append(folder)
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in listed:
            visited += 1
            relative = prefix + entry.name
            try:
                if entry.is_symlink():
                    files.append(relative)  # named, never followed
                elif entry.is_dir():
                    if depth + 1 < MAX_DEPTH and not entry.name.startswith(".") and entry.name not in _SKIPPED_DIRS:
                        pending.append((entry.path, relative + "/", depth + 1))
                elif entry.is_file() and relative != "SKILL.md":
                    files.append(relative)
            except OSError:
                continue
    files.sort()
    return files[:MAX_LISTED], len(files), folders


def with_files(body: str, skill_dir: str, files: list[str], total: int, *, bound: str, user: bool) -> str:
    """The body ``read_rule`` returns: SKILL.md's body, then where the skill's folder is
    (``~/…`` for a user skill, from the repository root for a project one: the same
    words on every machine) and what else it holds (names only; the agent reads one when
    the body calls for it)."""
    if not files:
        return body
    more = f"\n- … and {total - len(files)} more" if total > len(files) else ""
    listing = "\n".join(f"- {name}" for name in files)
    relative = os.path.relpath(skill_dir, bound).replace(os.sep, "/") if bound else skill_dir
    where = f"~/{relative}" if user else f"{relative} (from the repository root)"
    return (f"{body.rstrip()}\n\n---\n\nThis skill's folder is {where}; its other files (not loaded — "
            f"read one when the instructions above call for it):\n\n{listing}{more}\n")


def text_value(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else None


def is_true(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key)
    return value is True or isinstance(value, str) and value.strip().lower() == "true"
