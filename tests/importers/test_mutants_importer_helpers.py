"""The single-file formats, the importers' shared helpers and the skills, pinned where
mutation testing found them unpinned (issue 32).

What a user sees: ``pi-rules plugins --json`` (each importer's summary), the rules and
errors discovery makes of a tool's files and their order, the ``cwd-only`` warnings, what
``serve``'s ``trust_status`` reports about an untrusted project. docs/mutation.md lists
the mutants these kill and the ones left, explained.
"""

from __future__ import annotations

import json

from rules_core.rule_tests.pytest_plugin import rule_text  # noqa: F401 - the rule_project fixture's module
from rules_hosts.session.trust import has_project_rules, project_markers
from rules_importers.simple import SimpleFormat

from importer_helpers import cli  # noqa: F401 - pytest fixture
from importer_helpers import BAD_AGENTS, discover, git_init, text_with_front
from suite_helpers import run_in_project

# -- single-file formats (rules_importers/simple.py and the formats built on it) ------------------

SUMMARIES = {
    "amazonq": "Amazon Q Developer: .amazonq/rules/**/*.md",
    "junie": "JetBrains Junie: .junie/guidelines.md",
    "zed": "Zed: .rules",
    "trae": "Trae: .trae/rules/*.md (alwaysApply, globs, description)",
    "augment": ("Augment: .augment/rules/**/*.md (type: always_apply, agent_requested, manual), "
                "~/.augment/rules (global)"),
    "gemini-md": "Gemini CLI: GEMINI.md, ~/.gemini/GEMINI.md",
}


def test_plugins_lists_each_single_file_format_with_its_summary(rule_project, cli):
    importers = {i["name"]: (i["summary"], i["default"]) for i in json.loads(cli(rule_project, "--json", "plugins")[1])
                 ["importers"]}
    assert {name: importers[name] for name in SUMMARIES} == {name: (summary, True) for name, summary in SUMMARIES.items()}


def acme(**fields) -> SimpleFormat:
    return SimpleFormat(name="acme", summary="Acme", **fields)


def acme_found(project, fmt: SimpleFormat, cwd=None):
    found = discover(project, cwd, plugins=[("acme", fmt)])
    return ([r for r in found.rules if r.file.plugin == "acme"], [e for e in found.errors if e.plugin == "acme"],
            [w for w in found.warnings if w.plugin == "acme"])


def test_each_format_warns_of_its_files_above_the_working_directory(rule_project):
    rule_project.write({".amazonq/rules/a.md": "A.\n", ".junie/guidelines.md": "J.\n", ".rules": "Z.\n",
                        ".trae/rules/t.md": "T.\n", ".augment/rules/g.md": "G.\n", "sub/x.txt": "x"})
    git_init(rule_project.cwd)
    warnings = sorted((w.plugin, w.path) for w in discover(rule_project, rule_project.cwd / "sub").warnings
                      if w.code == "cwd-only")
    assert warnings == sorted((plugin, str(rule_project.cwd / path)) for plugin, path in [
        ("amazonq", ".amazonq/rules"), ("junie", ".junie/guidelines.md"), ("zed", ".rules"),
        ("trae", ".trae/rules"), ("augment", ".augment/rules")])


def test_a_format_declaring_no_cwd_only_paths_warns_of_none(rule_project):
    rule_project.write({".acme/rules/a.md": "A.\n", "sub/x.txt": "x"})
    git_init(rule_project.cwd)
    sub = rule_project.cwd / "sub"
    assert [w.path for w in acme_found(rule_project, acme(folders=(".acme/rules",)), sub)[2]
            if w.code == "cwd-only"] == [str(rule_project.cwd / ".acme/rules")]  # positive control
    assert [w for w in acme_found(rule_project, acme(folders=(".acme/rules",), cwd_only=()), sub)[2]
            if w.code == "cwd-only"] == []


def project_rules(project, *plugins) -> bool:
    """What ``serve``'s ``trust_status`` says of an untrusted project: does it hold rules?"""
    return has_project_rules(str(project.cwd), project_markers(project.engine(plugins=list(plugins)).hooks.importers()))


def test_an_untrusted_project_with_only_a_gemini_md_is_said_to_hold_rules(rule_project):
    assert not project_rules(rule_project)  # positive control: an empty project holds none
    rule_project.write({"GEMINI.md": "Context.\n"})
    assert project_rules(rule_project)


def test_a_formats_folders_mark_a_project_even_when_it_declares_no_cwd_only_paths(rule_project):
    fmt = acme(folders=(".acme/rules",), cwd_only=())
    assert not project_rules(rule_project, ("acme", fmt))
    rule_project.write({".acme/rules/a.md": "A.\n"})
    assert project_rules(rule_project, ("acme", fmt))


def test_a_lossy_format_reads_a_damaged_byte_as_a_replacement_character(rule_project):
    rule_project.write({".acme/rules/a.md": b"caf\xff\n"})
    rules, errors, warnings = acme_found(rule_project, acme(folders=(".acme/rules",), lossy_utf8=True))
    assert [r.body for r in rules] == ["caf\ufffd\n"] and errors == []
    assert [w.code for w in warnings] == ["invalid-utf8"]
    rules, errors, _ = acme_found(rule_project, acme(folders=(".acme/rules",)))  # strict by default
    assert rules == [] and [e.kind for e in errors] == ["read-failure"]


def test_gemini_md_reads_a_damaged_byte_as_a_replacement_character(rule_project):
    rule_project.write({"GEMINI.md": b"caf\xff\n"})
    found = discover(rule_project)
    assert [r.body for r in found.rules if r.file.plugin == "gemini-md"] == ["caf\ufffd\n"]
    assert [w.code for w in found.warnings if w.plugin == "gemini-md"] == ["invalid-utf8"]


def test_folders_keep_their_declared_order_before_the_files_whatever_the_names(rule_project):
    fmt = acme(folders=(".zz/rules", ".aa/rules"), files={".acme-first": "first"},
               home_folders=(".zz/rules", ".aa/rules"))
    rule_project.write({".zz/rules/b.md": "B.\n", ".aa/rules/a.md": "A.\n", ".acme-first": "F.\n"})
    (rule_project.home / ".zz" / "rules").mkdir(parents=True)
    (rule_project.home / ".aa" / "rules").mkdir(parents=True)
    (rule_project.home / ".zz" / "rules" / "d.md").write_text("D.\n")
    (rule_project.home / ".aa" / "rules" / "c.md").write_text("C.\n")
    rules = acme_found(rule_project, fmt)[0]
    assert [(r.id, r.source) for r in rules] == [
        ("b", "project"), ("a", "project"), ("project/first", "project"), ("d", "global"), ("c", "global")]


def test_a_flat_formats_folders_keep_their_order_and_its_home_folder_is_global(rule_project):
    fmt = acme(folders=(".zz/rules", ".aa/rules"), home_folders=(".acme",), recursive=False)
    rule_project.write({".zz/rules/b.md": "B.\n", ".aa/rules/a.md": "A.\n"})
    (rule_project.home / ".acme").mkdir()
    (rule_project.home / ".acme" / "mine.md").write_text("Mine.\n")
    rules = acme_found(rule_project, fmt)[0]
    assert [(r.id, r.source) for r in rules] == [("b", "project"), ("a", "project"), ("mine", "global")]


def test_a_folder_with_a_space_in_its_name_is_read(rule_project):
    rule_project.write({".acme rules/a.md": "A.\n", ".acme/rules b/b.md": "B.\n"})
    rules = acme_found(rule_project, acme(folders=(".acme rules", ".acme/rules b")))[0]
    assert [r.id for r in rules] == ["a", "b"]


def test_a_binary_file_is_a_read_failure_naming_the_file(rule_project):
    rule_project.write({".amazonq/rules/x.md": "a\x00b\n", ".augment/rules/y.md": "a\x00b\n"})
    errors = sorted((e.plugin, e.kind, e.path) for e in discover(rule_project).errors)
    assert errors == [("amazonq", "read-failure", str(rule_project.cwd / ".amazonq/rules/x.md")),
                      ("augment", "read-failure", str(rule_project.cwd / ".augment/rules/y.md"))]


def test_a_heading_with_a_closing_run_describes_the_rule_without_it(rule_project):
    rule_project.write({".amazonq/rules/a.md": "# Code Style ##\n\nTabs.\n",
                        ".augment/rules/b.md": text_with_front("type: always_apply\n", "## Testing #\n\nTest.\n")})
    found = {r.id: r.description for r in discover(rule_project).rules}
    assert (found["a"], found["b"]) == ("Code Style", "Testing")


def test_a_bad_agents_key_in_a_trae_or_augment_rule_is_invalid_value(rule_project):
    rule_project.write({".trae/rules/t.md": text_with_front("agents: 5\n"),
                        ".augment/rules/a.md": text_with_front("agents: 5\n")})
    found = discover(rule_project)
    assert found.rules == ()
    message = BAD_AGENTS
    assert sorted((e.plugin, e.kind, e.message) for e in found.errors) == [
        ("augment", "invalid-value", message), ("trae", "invalid-value", message)]


def test_trae_globs_that_are_no_globs_are_invalid_value_with_the_fix(rule_project):
    rule_project.write({".trae/rules/t.md": text_with_front("globs: 5\n")})
    found = discover(rule_project)
    assert found.rules == ()
    assert [(e.kind, e.message) for e in found.errors] == [
        ("invalid-value", 'globs must be a comma-separated string or a list of glob strings, got the number 5; '
                          'write globs: "src/**/*.ts, docs/**" or one quoted pattern per list item')]


def test_augment_non_text_type_names_the_value_to_write(rule_project):
    rule_project.write({".augment/rules/x.md": text_with_front("type: 3\n")})
    assert [e.message for e in discover(rule_project).errors] == [
        "type must be one of always_apply, agent_requested, manual, got the number 3; write type: always_apply"]


def test_a_global_gemini_md_names_a_missing_import_in_the_home_folder(rule_project):
    (rule_project.home / ".gemini").mkdir()
    (rule_project.home / ".gemini" / "GEMINI.md").write_text("Mine.\n@./missing.md\n@../../outside.md\n")
    found = discover(rule_project)
    assert [r.id for r in found.rules] == ["~/.gemini/GEMINI"]
    assert [(e.kind, e.message) for e in found.errors] == [
        ("invalid-value", "import @./missing.md: no such file ~/.gemini/missing.md; create it or correct the path"),
        ("invalid-value", f"import @../../outside.md: {rule_project.home.parent / 'outside.md'} is outside your home "
                          f"folder {rule_project.home}; not read — move the file inside it")]


# -- the shared helpers: _lenient.py ----------------------------------------------------------------


def skill_errors(project) -> list[tuple[str, str, str, str]]:
    return [(e.kind, e.path, e.message, e.plugin) for e in discover(project).errors if e.plugin == "skills"]


def test_a_skill_md_that_is_a_fifo_a_broken_link_or_a_folder(rule_project):
    import os

    rule_project.write({".agents/skills/good/SKILL.md": "---\nname: good\ndescription: Good.\n---\nBody.\n"})
    for name in ("fifo", "broken", "folder", "none"):
        (rule_project.cwd / ".agents/skills" / name).mkdir()
    os.mkfifo(rule_project.cwd / ".agents/skills/fifo/SKILL.md")
    os.symlink("gone.md", rule_project.cwd / ".agents/skills/broken/SKILL.md")
    (rule_project.cwd / ".agents/skills/folder/SKILL.md").mkdir()
    skills = rule_project.cwd / ".agents/skills"
    assert sorted(skill_errors(rule_project)) == [
        ("read-failure", str(skills / "broken/SKILL.md"),
         "broken symbolic link; point it at an existing file or delete it", "skills"),
        ("read-failure", str(skills / "fifo/SKILL.md"),
         "not a regular file (FIFO, socket or device); SKILL.md must be a plain file", "skills")]
    assert [r.id for r in discover(rule_project).rules if r.file.plugin == "skills"] == ["good"]


def continue_rule(project, front: str):
    project.write({".continue/rules/r.md": text_with_front(front)})
    return discover(project)


def test_a_copilot_apply_to_of_the_wrong_kind_is_shown_whole_up_to_60_characters(rule_project):
    rule_project.write({  # {'k': '…'} is 9 characters and the text: 60, then 61
        ".github/instructions/a.instructions.md": text_with_front(f"applyTo: {{k: {'a' * 51}}}\n"),
        ".github/instructions/b.instructions.md": text_with_front(f"applyTo: {{k: {'b' * 52}}}\n"),
        ".github/instructions/c.instructions.md": text_with_front("applyTo: !!binary aGVsbG8=\n"),
    })
    start, fix = "applyTo must be a string of comma-separated globs, got", "; quote it"
    assert sorted(e.message for e in discover(rule_project).errors) == [
        f"{start} a mapping ({{'k': '{'a' * 51}'}}){fix}",
        f"{start} a mapping ({{'k': '{'b' * 50}...){fix}",
        f"{start} bytes (b'hello'){fix}"]  # a type YAML's tags make, named by Python


def test_a_kind_worded_problem_names_only_the_kind(rule_project):
    rule_project.write({".clinerules/a.md": text_with_front("paths: 5\n"),
                        ".agents/rules/b.md": text_with_front("globs: 5\n")})
    assert sorted(e.message for e in discover(rule_project).errors) == [
        "globs must be a glob string or a list of them, got a number",
        "paths must be a list of glob strings, got a number"]


def test_an_unknown_choice_that_is_not_text_suggests_nothing(rule_project):
    rule_project.write({".agents/rules/b.md": text_with_front("trigger: 5\n")})
    assert [e.message for e in discover(rule_project).errors] == [
        "unknown trigger 5; use one of always_on, glob, model_decision, manual"]


def test_a_legacy_single_file_is_described_by_its_heading_without_a_closing_run(rule_project):
    rule_project.write({".cursorrules": "# Legacy Style ##\n\nTabs.\n"})
    [rule] = [r for r in discover(rule_project).rules if r.file.plugin == "cursor"]
    assert rule.description == "Legacy Style"


# -- the shared helpers: dialects.py ----------------------------------------------------------------

# Continue's globs are minimatch's: an escaped extglob character starts no group (so its
# parentheses are plain characters, escaped for picomatch), an escaped backslash escapes
# nothing; a `]` first in a class is a member, also after `!` and `^`.
ESCAPES = {
    r"a\+(b).md": r"a\+\(b\).md",
    r"\+(b).md": r"\+\(b\).md",
    r"a\\+(b).md": r"a\\+(b).md",
    "\\+(x)\\": "\\+\\(x\\)\\",
    r"\\\+(b)": r"\\\+\(b\)",
    "[X]+]": r"[X]\+]",
    "[!]+]": "[^]+]",
    "[^]+]": "[^]+]",
    "a[!b]+c": r"a[^b]\+c",
    "x[]+]": "x[]+]",
    "[]+a]": "[]+a]",
    "[+]": "[+]",
    r"[\]+]": r"[\]+]",
    r"[\]]+]": r"[\]]\+]",
    r"a\(": r"a\(",
    "(a)*": r"\(a\)*",
    "@(a|+(b|c)).md": "@(a|+(b|c)).md",
    "!(a)": "!(a)",
    "X.md": "X.md",
    "a+(": "a+(",
}


def test_continue_globs_with_escapes_and_classes_are_translated_as_minimatch_reads_them(rule_project):
    quoted = ", ".join("'" + glob + "'" for glob in ESCAPES)
    [rule] = [r for r in continue_rule(rule_project, f"globs: [{quoted}]\n").rules if r.file.plugin == "continue"]
    assert dict(zip(ESCAPES, rule.globs)) == ESCAPES


def test_check_says_where_continues_minimatch_differs_and_nowhere_else(rule_project, capsys):
    rule_project.write({".continue/rules/r.md": text_with_front(
        "globs: ['[!x].md', '!(a)b', '!(a)/x.md', '!(a)', '[!y]+.md']\n")})
    git_init(rule_project.cwd)
    code, out, _ = run_in_project(capsys, rule_project, "check", "--json")
    found = [w for w in json.loads(out)["warnings"] if w["code"] == "glob-dialect"]
    # Each placed on its glob's entry in the frontmatter, as dead-glob places its warning.
    assert sorted((w["path"], w["line"], w["column"]) for w in found) == [
        (str(rule_project.cwd / ".continue/rules/r.md"), 2, column) for column in (10, 21, 51)]
    warnings = sorted(w["message"] for w in found)
    start = "means something else in minimatch, the matcher continue uses, than in pi-rules' picomatch"
    assert warnings == [
        f"glob '!(a)b' of rule r {start} (!(…) followed by more of the segment excludes only the whole segment "
        "in minimatch; picomatch reads it differently and pi-rules cannot translate it); pi-rules reads it as "
        "picomatch does — rewrite it without that construct",
        f"glob '[!x].md' of rule r {start} ([!…] is a negated class in minimatch, the set {{!, …}} in picomatch); "
        "pi-rules reads it as continue does, as '[^x].md' — write '[^x].md' so every tool reads it alike",
        f"glob '[!y]+.md' of rule r {start} ([!…] is a negated class in minimatch, the set {{!, …}} in picomatch; "
        "'+' is a plain character in minimatch outside an extglob, syntax in picomatch); pi-rules reads it as "
        "continue does, as '[^y]\\+.md' — write '[^y]\\+.md' so every tool reads it alike"]


def test_what_a_fixed_file_or_a_flat_folders_entry_is_decides_its_error(rule_project):
    import os

    rule_project.write({".trae/rules/good.md": "Good.\n", ".trae/rules/folder.md/inner.md": "Inner.\n"})
    os.mkfifo(rule_project.cwd / ".trae/rules/fifo.md")
    os.symlink("gone.md", rule_project.cwd / ".trae/rules/broken.md")
    os.mkfifo(rule_project.cwd / ".rules")
    os.symlink("gone.md", rule_project.cwd / ".amazonq")  # a broken link where a folder is expected: nothing
    (rule_project.cwd / ".junie").mkdir()
    os.symlink("guidelines.md", rule_project.cwd / ".junie/guidelines.md")  # a loop
    found = discover(rule_project)
    assert [r.id for r in found.rules] == ["good"]
    cwd = rule_project.cwd
    assert sorted((e.plugin, e.kind, e.path, e.message) for e in found.errors) == [
        ("junie", "read-failure", str(cwd / ".junie/guidelines.md"),
         "cannot be inspected (Too many levels of symbolic links); fix or remove it"),
        ("trae", "read-failure", str(cwd / ".trae/rules/broken.md"),
         "broken symbolic link; point it at an existing file or delete it"),
        ("trae", "read-failure", str(cwd / ".trae/rules/fifo.md"),
         "not a regular file (FIFO, socket or device); rule files must be plain files"),
        ("zed", "read-failure", str(cwd / ".rules"),
         "not a regular file (FIFO, socket or device); rule files must be plain files")]


def test_a_fixed_file_that_is_a_folder_or_a_broken_link_is_named(rule_project):
    import os

    (rule_project.cwd / ".rules").mkdir()
    (rule_project.cwd / ".junie").mkdir()
    os.symlink("gone.md", rule_project.cwd / ".junie/guidelines.md")
    cwd = rule_project.cwd
    assert sorted((e.plugin, e.kind, e.path, e.message) for e in discover(rule_project).errors) == [
        ("junie", "read-failure", str(cwd / ".junie/guidelines.md"),
         "broken symbolic link; point it at an existing file or delete it"),
        ("zed", "read-failure", str(cwd / ".rules"),
         "is a directory, but this file is read as one rule; move the rules inside it to the rules directory")]


def test_a_flat_folder_that_cannot_be_listed_is_named_with_the_fix(rule_project, monkeypatch):
    from importer_helpers import deny_listing

    rule_project.write({".trae/rules/a.md": "A.\n"})
    deny_listing(monkeypatch, rule_project.cwd / ".trae/rules")
    found = discover(rule_project)
    assert [(e.plugin, e.kind, e.path, e.message) for e in found.errors] == [
        ("trae", "source-unreadable", str(rule_project.cwd / ".trae/rules"),
         "cannot list this rules directory (Permission denied); fix its permissions or remove it — its rules are "
         "not loaded")]


def test_the_glob_dialect_warning_is_the_glob_dialects_plugins(rule_project):
    from rules_core.lint.check import lint

    rule_project.write({".continue/rules/r.md": text_with_front("globs: '[!x].md'\n")})
    engine = rule_project.engine()
    found = lint(engine, engine.discover(str(rule_project.cwd)), cwd=str(rule_project.cwd))
    assert [(w.code, w.plugin) for w in found if w.code == "glob-dialect"] == [("glob-dialect", "glob-dialects")]


def test_a_clinerules_file_is_a_project_rule_before_the_cline_rules_folder(rule_project):
    # "-first.md" sorts before ".clinerules" by name: the rank alone puts the lone file first.
    rule_project.write({".clinerules": "Legacy.\n", ".cline/rules/-first.md": "New.\n"})
    git_init(rule_project.cwd)
    assert [(r.id, r.source) for r in discover(rule_project).rules] == [
        ("clinerules", "project"), ("-first", "project")]


def test_a_comma_inside_nested_braces_splits_no_glob(rule_project):
    rule_project.write({".trae/rules/t.md": text_with_front('globs: "src/{{b,c},a}/*.ts, docs/**"\n')})
    [rule] = discover(rule_project).rules
    assert rule.globs == ("src/{{b,c},a}/*.ts", "docs/**")


def test_a_heading_keeps_or_drops_its_closing_run_as_its_tool_reads_it(rule_project):
    rule_project.write({".claude/rules/c.md": "# Claude Title ##\n\nBody.\n",  # Claude Code keeps the run
                        ".amazonq/rules/crlf.md": "# Code Style #\r\n\r\nTabs.\r\n",
                        ".amazonq/rules/x.md": "# X-Ray rules #\n\nBody.\n",
                        # Any trailing white space goes before the closing run (a no-break space here).
                        ".amazonq/rules/nbsp.md": "# Wide #\u00a0\n\nBody.\n"})
    found = {r.id: r.description for r in discover(rule_project).rules}
    assert (found["c"], found["crlf"], found["x"], found["nbsp"]) == (
        "Claude Title ##", "Code Style", "X-Ray rules", "Wide")


def test_only_the_spec_importers_rules_vanish_when_the_budget_drops_them(rule_project):
    rule_project.write({".amazonq/rules/a.md": "A.\n", ".claude/rules/c.md": "C.\n"})
    overflow = {r.file.plugin: r.overflow for r in discover(rule_project).rules}
    assert overflow == {"amazonq": "index", "claude": None}
