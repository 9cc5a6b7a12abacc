"""The ``skills`` importer: Agent Skills (``<folder>/SKILL.md``) as on-demand rules
(docs/importers.md, "The skills importer"; CONTRACT §7 "Skills").

Project skills (trusted projects only): ``.agents/skills``, ``.claude/skills``,
``.cursor/skills``, ``.gemini/skills``, ``.kiro/skills`` in cwd and each folder up to the
git root, and the same folders below cwd (folder-scoped, like nested memory files). User
skills: ``~/.agents/skills``, ``~/.claude/skills`` (global rules). Where they are and how
they are named is ``_skills_find``; reading one is ``_skills_read``; the warnings against
the specification are ``_skills_lint``.

A skill is an on-demand rule: its index line is ``- <name> — <description>``, and
``read_rule <name>`` returns the body plus the names of the folder's other files.
``paths:`` (Claude Code's key) makes it a touched rule, listed only while a touched path
matches; ``disable-model-invocation: true`` keeps it out of the index (inactive, with that
reason); a skill whose name an earlier one took is inactive and warned about.
"""

from __future__ import annotations

import os
from typing import Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import enabled, enabled_globally, finish, first_heading, glob_list, imported_rule, invalid
from ._skills_find import GLOBAL_ROOTS, NAME, skill_files
from ._skills_lint import pi_rules_lint  # noqa: F401 - the plugin's linter (docs/lint.md)
from ._skills_read import folder_files, is_true, read_skill, text_value, with_files

MAX_DEPENDS = 32
USER_ONLY = ("disable-model-invocation: true — only the user starts this skill (/{name}); it is never "
             "offered to the model")
SHADOWED = "shadowed by the skill of the same name at {winner}, found first ({why})"


@hookimpl
def pi_rules_importers() -> list[ImporterInfo]:
    return [ImporterInfo(NAME, default=True, summary=(
        "Agent Skills: <folder>/SKILL.md in .agents/skills, .claude/skills, .cursor/skills, .gemini/skills, "
        ".kiro/skills (cwd, ancestors, folders below cwd), ~/.agents/skills, ~/.claude/skills (global)"
    ), markers=(".agents/skills", ".claude/skills", ".cursor/skills", ".gemini/skills", ".kiro/skills"))]


@hookimpl
def pi_rules_sources(context: DiscoveryContext) -> list[RuleFile | RuleError]:
    project, user = enabled(context, NAME), enabled_globally(context, NAME)
    if not project and not user:
        return []
    return skill_files(context, project=project, user=user)


@hookimpl(trylast=True)
def pi_rules_parse(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
    if rule_file.schema != NAME:
        return None
    if "\x00" in text:
        message = "SKILL.md contains NUL bytes, so it is binary, not markdown; save it as text"
        return ParseResult(None, (RuleError("read-failure", rule_file.path, message, NAME),))
    document = read_skill(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (document,))
    data, folder = document.data, os.path.dirname(rule_file.path)
    name = text_value(data, "name") or rule_file.relative_path
    problems: list[str] = []
    description = _description(data, document.body, name, problems)
    globs = glob_list(data, "paths", problems) if "paths" in data else ()
    if "paths" in data and not globs and not problems:
        problems.append("paths names no glob; remove the key or write paths: \"src/**/*.ts\"")
    if problems:
        return invalid(rule_file, *problems)
    files, total, folders = folder_files(folder)
    reason = None
    if rule_file.elsewhere:
        reason = SHADOWED.format(winner=rule_file.elsewhere[0], why=_why(rule_file, rule_file.elsewhere[0]))
    elif is_true(data, "disable-model-invocation"):
        reason = USER_ONLY.format(name=name)
    rule = imported_rule(
        rule_file, description=description, body=with_files(document.body, folder, files, total, bound=rule_file.bound, user=rule_file.source == "global"),
        globs=globs, load="on-demand", inactive_reason=reason,
    )
    result = finish(rule)
    return ParseResult(result.rule, result.errors, tuple(folders[:MAX_DEPENDS]))


def _description(data: Mapping[str, object], body: str, name: str, problems: list[str]) -> str:
    value = data.get("description")
    if value is not None and not isinstance(value, str):
        problems.append(f"description must be text, got {type(value).__name__}; write description: \"…\" in quotes")
        return ""
    text = " ".join(value.split()) if isinstance(value, str) else ""
    return text or first_heading(body, closing=True) or f"the {name} skill"


def _why(rule_file: RuleFile, winner: str) -> str:
    user_winner = any(winner.startswith(os.path.join(rule_file.bound, marker, "skills") + os.sep)
                      for marker in GLOBAL_ROOTS)
    if rule_file.source == "global" and not user_winner:
        return "a project skill shadows a user skill of the same name, as the Agent Skills specification says"
    return "the nearest folder first, and in one folder .agents before .claude, .cursor, .gemini, .kiro"
