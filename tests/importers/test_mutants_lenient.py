"""The importers' listing helpers (``rules_importers/_lenient.py``: ``list_flat``,
``single_file``, ``path_kind``, ``list_import_root``, ``enabled*``, ``rule_file_at``),
pinned where mutation testing found them unpinned (issue 32; docs/mutation.md, "Shared
importer helpers"). Each test is a real tree and what discovery answers.
"""

from __future__ import annotations

import os

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text  # noqa: F401 - rule_text: the rule_project fixture's module
from rules_importers.simple import SimpleFormat

from importer_helpers import deny_listing, discover


def test_third_party_formats_share_one_rank_whichever_helper_lists_them(rule_project):
    # Two third-party formats, one read recursively (list_import_root), one flat
    # (list_flat → rule_file_at): both rank 90, so only their files' names order them.
    deep = SimpleFormat(name="acme", summary="Acme", folders=(".acme",))
    flat = SimpleFormat(name="zeta", summary="Zeta", folders=(".zeta",), recursive=False)
    rule_project.write({".acme/b.md": "B.\n", ".acme/d.md": "D.\n", ".zeta/a.md": "A.\n", ".zeta/c.md": "C.\n"})
    found = discover(rule_project, plugins=[("acme", deep), ("zeta", flat)])
    assert [(r.id, r.file.plugin) for r in found.rules] == [
        ("a", "zeta"), ("b", "acme"), ("c", "zeta"), ("d", "acme")]


def test_a_flat_folder_that_failed_is_not_listed_again_until_it_changes(rule_project, monkeypatch):
    # RULE-SPEC §7: an unlistable directory is re-reported from the engine's listing cache,
    # not listed again, until its mtime or ctime changes.
    rule_project.write({".trae/rules/a.md": "A.\n"})
    folder = rule_project.cwd / ".trae/rules"
    engine, cwd = rule_project.engine(), str(rule_project.cwd)
    with monkeypatch.context() as denied:
        deny_listing(denied, folder)
        first = engine.discover(cwd, True)
    unreadable = [("trae", "source-unreadable", str(folder),
                   "cannot list this rules directory (Permission denied); fix its permissions or remove it — its "
                   "rules are not loaded")]
    assert [(e.plugin, e.kind, e.path, e.message) for e in first.errors] == unreadable
    again = engine.discover(cwd, True)  # listable now, but unchanged: the remembered error
    assert ([r.id for r in again.rules], [(e.plugin, e.kind, e.path, e.message) for e in again.errors]) == (
        [], unreadable)
    (folder / "b.md").write_text("B.\n")  # the folder changed: listed again
    changed = engine.discover(cwd, True)
    assert ([r.id for r in changed.rules], changed.errors) == (["a", "b"], ())


def test_a_flat_folders_links_are_judged_by_what_they_point_at(rule_project):
    # Each entry is followed: a link to a folder is passed over like a folder, a link to a
    # plain file is a rule, a link to a FIFO is no plain file (not a broken link), a link
    # loop is named with the system's reason; none stops the entries after it.
    rule_project.write({"real.md": "Real.\n", "folder/x.md": "X.\n", ".trae/rules/e-good.md": "Good.\n"})
    rules = rule_project.cwd / ".trae/rules"
    os.mkfifo(rule_project.cwd / "pipe")
    os.symlink("a-loop.md", rules / "a-loop.md")
    os.symlink("../../folder", rules / "b-folder.md")
    os.symlink("../../real.md", rules / "c-link.md")
    os.symlink("../../pipe", rules / "d-fifo.md")
    found = discover(rule_project)
    assert [(r.id, r.body) for r in found.rules] == [("c-link", "Real.\n"), ("e-good", "Good.\n")]
    assert [(e.plugin, e.kind, e.path, e.message) for e in found.errors] == [
        ("trae", "read-failure", str(rules / "a-loop.md"), "Too many levels of symbolic links"),
        ("trae", "read-failure", str(rules / "d-fifo.md"),
         "not a regular file (FIFO, socket or device); rule files must be plain files")]


def test_a_third_party_fixed_file_ranks_with_its_folders_files(rule_project):
    # single_file adds no rank of its own: a format's fixed file and another third-party
    # format's folder file share rank 90 and scope "00", so their names order them.
    fixed = SimpleFormat(name="acme", summary="Acme", files={"b.md": "acme-b"})
    folder = SimpleFormat(name="zeta", summary="Zeta", folders=(".zeta",))
    rule_project.write({"b.md": "B.\n", ".zeta/a.md": "A.\n", ".zeta/c.md": "C.\n"})
    found = discover(rule_project, plugins=[("acme", fixed), ("zeta", folder)])
    label = rule_project.cwd.name
    assert [(r.id, r.source) for r in found.rules] == [
        ("a", "project"), (f"{label}/acme-b", "project"), ("c", "project")]


def test_legacy_single_files_are_project_rules(rule_project):
    rule_project.write({".cursorrules": "Cursor.\n", ".windsurfrules": "Windsurf.\n"})
    assert sorted((r.id, r.file.plugin, r.source) for r in discover(rule_project).rules) == [
        ("cursorrules", "cursor", "project"), ("windsurfrules", "windsurf", "project")]


def test_the_users_own_imported_files_follow_the_users_selection_not_the_projects(rule_project):
    always = "---\nalwaysApply: true\n---\n"
    make_rules(rule_project.home, {".cursor/rules/a-mine.mdc": always + "Mine.\n"})
    rule_project.write({".cursor/rules/b-theirs.mdc": always + "Theirs.\n"})
    shown = lambda trusted=True: [  # noqa: E731
        (r.body, r.source) for r in discover(rule_project, trusted=trusted).rules]
    # The control, and the order: a project's imported files before the user's (global) ones.
    assert shown() == [("Theirs.\n", "project"), ("Mine.\n", "global")]
    assert shown(trusted=False) == [("Mine.\n", "global")]  # user-level files load whatever the trust
    rule_project.write({".pi/rules.toml": 'import = "none"\n'})  # the project's choice: its own files only
    assert shown() == [("Mine.\n", "global")]
    rule_project.env["PI_RULES_IMPORT"] = "claude"  # the user's choice: every Cursor file goes
    assert shown() == []


def test_a_working_directory_no_path_can_hold_is_named_by_each_fixed_file(rule_project):
    # A host's cwd is hostile input: with a NUL byte no file below it can be inspected;
    # the fixed files say why (a ValueError has no strerror) instead of failing their plugin.
    cwd = str(rule_project.cwd) + "\0x"
    errors = {(e.plugin, e.kind, e.path): e.message for e in rule_project.engine().discover(cwd, True).errors}
    inspected = "cannot be inspected (ValueError); fix or remove it"
    assert (errors[("zed", "read-failure", cwd + "/.rules")],
            errors[("junie", "read-failure", cwd + "/.junie/guidelines.md")]) == (inspected, inspected)
