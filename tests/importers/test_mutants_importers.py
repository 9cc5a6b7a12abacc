"""Importer mappings pinned where mutation testing found them unpinned (issue 32).

What a user sees: ``pi-rules plugins --json`` (each importer, whether it is on by default,
its summary), the rules discovery makes of a tool's files, and the errors it reports.
docs/mutation.md lists the mutants these kill and the ones left, explained.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text  # noqa: F401 - the rule_project fixture's module
from importer_helpers import BAD_AGENTS
from suite_helpers import count_listings, run_in, run_in_project

SUMMARIES = {
    "cursor": ("Cursor rules: .cursor/rules/**/*.{mdc,md} at cwd and in folders below it, .cursorrules, "
               "~/.cursor/rules (global)"),
    "copilot": ("GitHub Copilot: .github/copilot-instructions.md, .github/instructions/**/*.instructions.md "
                "(applyTo)"),
    "claude": "Claude Code: .claude/rules/**/*.md (paths)",
    "claude-md": "Claude Code memory: CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, ~/.claude/CLAUDE.md",
    "agents-md": "AGENTS.md (AGENTS.override.md, AGENT.md): cwd and ancestors, folders below cwd",
    "kiro": "Kiro steering: .kiro/steering/**/*.md, ~/.kiro/steering (global)",
    "windsurf": ("Windsurf rules: .windsurf/rules/*.md, .devin/rules/*.md, .windsurfrules, "
                 "~/.codeium/windsurf/memories/global_rules.md (global)"),
    "cline": "Cline: the nearest .clinerules (file or folder) and .cline/rules, up to the git root",
    "agents": ".agent(s)/rules, .omp/rules, .xcsh/rules and their RULES.md, in the project and in $HOME",
    "roo": "Roo Code: .roo/rules*, .roorules*, ~/.roo/rules* (global); rules-<mode> for --agent <mode>",
}


def test_plugins_lists_each_importer_with_its_default_and_summary(rule_project, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    code, out, _ = run_in_project(capsys, rule_project, "plugins", "--json")
    assert code == 0
    importers = {i["name"]: i for i in json.loads(out)["importers"]}
    for name, summary in SUMMARIES.items():
        assert (importers[name]["summary"], importers[name]["default"]) == (summary, True), name


def discover(project, cwd=None):
    return project.engine().discover(str(cwd or project.cwd))


def messages_by_file(found):
    return sorted((e.path.rsplit("/", 1)[-1], e.message) for e in found.errors)


# -- cursor -------------------------------------------------------------------------------

def test_tool_files_above_the_working_directory_get_a_cwd_only_warning(rule_project):
    rule_project.write({".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nStyle.\n",
                        ".cursorrules": "Legacy.\n", "sub/x.txt": "x",
                        ".github/copilot-instructions.md": "Repo.\n",
                        ".github/instructions/a.instructions.md": "A.\n",
                        ".claude/rules/c.md": "C.\n"})
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    warnings = sorted((w.plugin, w.code, w.path) for w in discover(rule_project, rule_project.cwd / "sub").warnings
                      if w.plugin in ("cursor", "copilot", "claude"))
    assert warnings == [("claude", "cwd-only", str(rule_project.cwd / ".claude/rules")),
                        ("copilot", "cwd-only", str(rule_project.cwd / ".github/copilot-instructions.md")),
                        ("copilot", "cwd-only", str(rule_project.cwd / ".github/instructions")),
                        ("cursor", "cwd-only", str(rule_project.cwd / ".cursor/rules")),
                        ("cursor", "cwd-only", str(rule_project.cwd / ".cursorrules"))]


def test_a_cursor_rule_folder_deep_in_groups_is_named_by_its_own_folder(rule_project):
    rule_project.write({".cursor/rules/team/backend/testing/RULE.md": "---\nalwaysApply: true\n---\nTest well.\n",
                        ".cursor/rules/team/backend/testing/example.md": "An example, not a rule.\n"})
    assert [r.id for r in discover(rule_project).rules] == ["testing"]


def test_an_always_cursor_rule_keeps_no_globs(rule_project):
    rule_project.write({".cursor/rules/a.mdc": "---\nalwaysApply: true\nglobs: src/**\n---\nAlways.\n"})
    rule = discover(rule_project).rules[0]
    assert (rule.always_apply, rule.globs, rule.load) == (True, (), "pinned")


def test_a_bad_peer_key_in_a_cursor_rule_is_reported_with_its_fix(rule_project):
    rule_project.write({".cursor/rules/a.mdc": "---\nalwaysApply: true\nagents: 5\n---\nAlways.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert [(e.kind, e.message) for e in found.errors] == [
        ("invalid-value", BAD_AGENTS)]


def test_a_nested_cursor_always_rule_applies_only_below_its_folder(rule_project):
    rule_project.write({"pkg/.cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nPackage style.\n"})
    engine = rule_project.engine()
    inside = engine.evaluate(rule_project.facts(touched=["pkg/src/a.ts"])).outcomes
    assert [(o.rule.id, o.status, o.reasons) for o in inside] == [("style", "active", ("touched pkg/src/a.ts",))]
    outside = engine.evaluate(rule_project.facts(touched=["lib/a.ts"])).outcomes
    assert [o.status for o in outside] == ["inactive"]


# -- copilot ------------------------------------------------------------------------------

def test_copilot_custom_dirs_load_as_global_rules_once_each_and_a_relative_one_is_an_error(rule_project):
    from rules_core.rule_tests.pytest_plugin import make_rules

    team, mine = rule_project.cwd.parent / "team", rule_project.home / "mine"
    make_rules(team, {".github/instructions/t.instructions.md": '---\napplyTo: "**"\n---\nTeam.\n'})
    make_rules(mine, {".github/instructions/m.instructions.md": '---\napplyTo: "src/**"\n---\nMine.\n'})
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = f" {team}, ,relative/dir,~/mine,{team}/ ,~"
    found = discover(rule_project)
    assert [(r.id, r.source, r.file.base, r.globs, r.always_apply) for r in found.rules] == [
        ("t", "global", str(rule_project.cwd), ("**",), True),
        ("m", "global", str(rule_project.cwd), ("src/**",), False),
    ]
    assert [(e.kind, e.path, e.message) for e in found.errors] == [(
        "invalid-value", "COPILOT_CUSTOM_INSTRUCTIONS_DIRS",
        "COPILOT_CUSTOM_INSTRUCTIONS_DIRS entry 'relative/dir' is not an absolute directory; write a full path "
        "such as /home/me/team-rules or ~/team-rules (it is skipped until then)")]


def test_copilot_instructions_are_named_by_their_file_wherever_they_lie(rule_project):
    rule_project.write({".github/instructions/a/b/ts.instructions.md": '---\napplyTo: "src/**/*.ts"\n---\nTS.\n'})
    assert [(r.id, r.globs) for r in discover(rule_project).rules] == [("ts", ("src/**/*.ts",))]


def test_a_copilot_repository_file_that_is_a_folder_is_reported(rule_project):
    rule_project.write({".github/copilot-instructions.md/x": "not a file"})
    found = discover(rule_project)
    assert [(e.kind, e.message) for e in found.errors] == [(
        "read-failure", "is a directory, but Copilot reads .github/copilot-instructions.md as one file")]


def test_copilot_apply_to_values_that_name_no_glob_say_how_to_write_them(rule_project):
    rule_project.write({
        ".github/instructions/empty.instructions.md": '---\napplyTo: ""\n---\nE.\n',
        ".github/instructions/list.instructions.md": "---\napplyTo: [src/**, ' docs/** ', 3]\n---\nL.\n",
        ".github/instructions/nolist.instructions.md": "---\napplyTo: []\n---\nL.\n",
        ".github/instructions/bad.instructions.md": "---\napplyTo: \"**\"\nagents: 5\n---\nL.\n",
    })
    found = discover(rule_project)
    assert found.rules == ()
    assert messages_by_file(found) == [
        ("bad.instructions.md", BAD_AGENTS),
        ("empty.instructions.md", 'applyTo \'\' names no glob; write applyTo: "**" for every file, globs such as '
                                  '"src/**/*.ts, docs/**", or remove the key'),
        ("list.instructions.md", 'applyTo must be one string of comma-separated globs, not a list; '
                                 'write applyTo: "src/**, docs/**"'),
        ("nolist.instructions.md", 'applyTo must be one string of comma-separated globs, not a list; '
                                   'write applyTo: "src/**/*.ts, docs/**"'),
    ]


# -- claude ---------------------------------------------------------------------------------

def test_bad_keys_in_a_claude_rule_are_reported_with_their_fix(rule_project):
    rule_project.write({".claude/rules/a.md": "---\nagents: 5\n---\nA.\n",
                        ".claude/rules/b.md": "---\npaths: 5\n---\nB.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert messages_by_file(found) == [
        ("a.md", BAD_AGENTS),
        ("b.md", "paths is a number (5), not a glob string or a list of glob strings; remove the key to apply "
                 "the rule always, or list globs such as 'src/**/*.ts'"),
    ]


def test_a_copilot_dir_under_home_without_a_home_is_reported_not_fatal(rule_project):
    from rules_core.engine import Engine

    rule_project.write({".github/instructions/a.instructions.md": '---\napplyTo: "**"\n---\nA.\n'})
    engine = Engine(env={"COPILOT_CUSTOM_INSTRUCTIONS_DIRS": "~/team"})  # no HOME at all
    found = engine.discover(str(rule_project.cwd))
    assert [r.id for r in found.rules] == ["a"]
    assert [e.message for e in found.errors] == [
        "COPILOT_CUSTOM_INSTRUCTIONS_DIRS entry '~/team' is not an absolute directory; write a full path "
        "such as /home/me/team-rules or ~/team-rules (it is skipped until then)"]


# -- the last Cursor and Copilot survivors (issue 32, second pass) ------------------------

ALWAYS = "---\nalwaysApply: true\n---\n{}\n"


def test_a_link_in_a_nested_cursor_rules_folder_that_leaves_the_project_is_refused(rule_project):
    # The nested folders are listed through the discovery context too: without it their
    # links would be followed out of the project (the containment lives on the context).
    secret = rule_project.home / "secret.mdc"
    secret.write_text(ALWAYS.format("Secret."))
    rule_project.write({"pkg/.cursor/rules/own.mdc": ALWAYS.format("Own.")})
    link = rule_project.cwd / "pkg/.cursor/rules/leak.mdc"
    link.symlink_to(secret)
    found = discover(rule_project)
    assert [r.id for r in found.rules] == ["own"]
    assert [(e.kind, e.path) for e in found.errors] == [("read-failure", str(link))]
    assert f"leads outside the project directory {rule_project.cwd}; not read" in found.errors[0].message


def test_nested_cursor_folders_order_their_rules_by_folder_before_file_name(rule_project):
    # RULE-SPEC §1: nested directories lexicographically at one depth, then files by path.
    rule_project.write({"b/.cursor/rules/a.mdc": ALWAYS.format("B's."),
                        "a/.cursor/rules/z.mdc": ALWAYS.format("A's.")})
    assert [(r.id, r.file.base) for r in discover(rule_project).rules] == [
        ("z", str(rule_project.cwd / "a")), ("a", str(rule_project.cwd / "b"))]


def test_a_fifo_at_the_copilot_repository_file_is_reported_as_not_a_regular_file(rule_project):
    (rule_project.cwd / ".github").mkdir()
    os.mkfifo(rule_project.cwd / ".github/copilot-instructions.md")
    found = discover(rule_project)
    assert [(e.kind, e.message) for e in found.errors] == [(
        "read-failure", "not a regular file (FIFO, socket or device); rule files must be plain files")]


def test_the_copilot_repository_file_comes_before_every_instructions_file(rule_project):
    # Even one whose name sorts before ".github/…" ('-' < '.'): the general text first,
    # then the path-specific files that refine it.
    rule_project.write({".github/copilot-instructions.md": "Repo.\n",
                        ".github/instructions/-first.instructions.md": "First.\n"})
    assert [r.id for r in discover(rule_project).rules] == ["project/copilot-instructions", "-first"]


def test_a_repeated_copilot_custom_dir_is_skipped_and_the_next_one_still_loads(rule_project):
    from rules_core.rule_tests.pytest_plugin import make_rules

    team, more = rule_project.cwd.parent / "team", rule_project.cwd.parent / "more"
    make_rules(team, {".github/instructions/t.instructions.md": "Team.\n"})
    make_rules(more, {".github/instructions/m.instructions.md": "More.\n"})
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = f"{team},{team}/,{more}"
    assert [r.id for r in discover(rule_project).rules] == ["t", "m"]


def test_an_unlistable_copilot_custom_dir_is_reported_again_without_being_listed_again(rule_project, monkeypatch):
    # RULE-SPEC §7: a source-unreadable outcome is cached until the directory changes —
    # the later pass re-reports it without listing it again.
    team = rule_project.cwd.parent / "team"
    (team / ".github").mkdir(parents=True)
    loop = team / ".github/instructions"
    loop.symlink_to(loop)  # ELOOP: cannot be listed
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = str(team)
    listed = count_listings(monkeypatch)
    engine = rule_project.engine()
    first = engine.discover(str(rule_project.cwd))
    assert [(e.kind, e.path) for e in first.errors] == [("source-unreadable", str(loop))]
    assert listed.count(str(loop)) == 1  # positive control: the first pass tried to list it
    again = engine.discover(str(rule_project.cwd))
    assert again.errors == first.errors
    assert listed.count(str(loop)) == 1


# -- the last Claude Code memory survivors ------------------------------------------------

MEMORY_FILES = ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "AGENT.md"]


@pytest.mark.parametrize("name", MEMORY_FILES + [None])
def test_an_untrusted_project_with_only_a_memory_file_is_said_to_hold_rules(tmp_path, name, capsys, monkeypatch):
    # The notice a host shows once ("this project has rules; trust it?") checks each
    # importer's declared markers: a project whose only rules are a memory file counts.
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    if name is not None:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("# Conventions\n\nUse tabs.\n")
    monkeypatch.setenv("HOME", str(home))
    request = json.dumps({"id": 1, "method": "trust_status"}) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(request.encode())))
    code, out, _ = run_in(capsys, project, "--trust-store", "serve")
    result = json.loads(out)["result"]
    assert (code, result["trusted"], result["project_rules"]) == (0, False, name is not None)  # None: the control


def test_a_nul_byte_inside_an_html_comment_still_makes_a_claude_md_binary(rule_project):
    # Comments are stripped only from text: a NUL byte anywhere means a binary file, even
    # one hidden in a comment Claude Code would not show.
    rule_project.write({"CLAUDE.md": "<!-- \x00 -->\n# Notes\n\nUse tabs.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert [(e.kind, e.message) for e in found.errors] == [(
        "read-failure", "the file contains NUL bytes, so it is binary, not markdown; delete it or save it as text")]


def test_a_project_claude_md_imports_from_home_when_the_file_lies_inside_the_project(tmp_path, monkeypatch):
    # ``@~/…`` is the user's home folder; a project that lives below home may import its
    # own files that way (they are inside the git root), and nothing else of home.
    from rules_core.rule_tests.pytest_plugin import RuleProject

    home = tmp_path / "home"
    project = RuleProject(cwd=home / "src" / "app", home=home)
    project.write({"CLAUDE.md": "# App\n\n@~/src/app/docs/style.md\n@~/private.md\n", "docs/style.md": "Use tabs.\n"})
    (home / "private.md").write_text("Secret.\n")
    subprocess.run(["git", "init", "-q", str(project.cwd)], check=True)
    monkeypatch.setenv("HOME", str(home))
    found = discover(project)
    assert [r.id for r in found.rules] == ["app/CLAUDE"]
    assert "Use tabs." in found.rules[0].body and "Secret." not in found.rules[0].body
    assert [e.message for e in found.errors] == [
        f"import @~/private.md: in your home folder, outside the git root {project.cwd}; not read — move the "
        "file inside it, or import it from your own ~/.claude/CLAUDE.md"]
