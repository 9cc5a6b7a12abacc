"""Native and global sources: order, ids, trust, what is scanned, hostile entries, cache."""

from __future__ import annotations

import os
import time

from rules_core.rule_tests.pytest_plugin import rule_text

RULE = rule_text(globs=["src/**"])


def ids(discovery):
    return [r.id for r in discovery.rules]


def test_cwd_rules_sorted_by_path_then_global_last(rule_project):
    rule_project.write({".pi/rules/b.md": RULE, ".pi/rules/a.md": RULE, ".pi/rules/sub/c.md": RULE})
    rule_project.write_global({"g.md": RULE})
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert [r.relative_path for r in discovery.rules] == ["a.md", "b.md", "sub/c.md", "g.md"]
    assert [r.index for r in discovery.rules] == [0, 1, 2, 3]
    assert [r.source for r in discovery.rules] == ["project"] * 3 + ["global"]
    assert [r.file.plugin for r in discovery.rules] == ["native"] * 3 + ["global"]


def test_colliding_stems_get_numbered_ids_in_discovery_order(rule_project):
    rule_project.write({".pi/rules/a.md": RULE, ".pi/rules/x/a.md": RULE, ".pi/rules/y/a.md": RULE})
    rule_project.write_global({"a.md": RULE})
    assert ids(rule_project.engine().discover(str(rule_project.cwd))) == ["a", "a-2", "a-3", "a-4"]


def test_generated_id_never_reuses_an_existing_stem(rule_project):
    rule_project.write({".pi/rules/a-2.md": RULE, ".pi/rules/x/a.md": RULE, ".pi/rules/y/a.md": RULE})
    assert ids(rule_project.engine().discover(str(rule_project.cwd))) == ["a-2", "a", "a-3"]


def test_untrusted_project_loads_only_global_rules(rule_project):
    rule_project.write({".pi/rules/a.md": RULE})
    rule_project.write_global({"g.md": RULE})
    assert ids(rule_project.engine().discover(str(rule_project.cwd), trusted=False)) == ["g"]


def test_non_md_files_git_and_node_modules_are_ignored(rule_project):
    rule_project.write(
        {
            ".pi/rules/a.md": RULE,
            ".pi/rules/notes.txt": "x",
            ".pi/rules/a.md.bak": "x",
            ".pi/rules/.git/b.md": RULE,
            ".pi/rules/node_modules/c.md": RULE,
        }
    )
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(discovery) == ["a"] and discovery.errors == ()


def test_missing_rules_directory_is_not_an_error(rule_project):
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert discovery.rules == () and discovery.errors == ()


def test_directory_named_like_a_rule_is_walked_not_read(rule_project):
    rule_project.write({".pi/rules/x.md/inner.md": RULE})
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(discovery) == ["inner"] and discovery.errors == ()


def test_fifo_is_reported_without_blocking(rule_project):
    rules_dir = rule_project.write({".pi/rules/a.md": RULE}) / ".pi" / "rules"
    os.mkfifo(rules_dir / "pipe.md")
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(discovery) == ["a"]
    assert [(e.kind, os.path.basename(e.path)) for e in discovery.errors] == [("read-failure", "pipe.md")]
    assert "not a regular file" in discovery.errors[0].message


def test_dangling_symlink_is_reported(rule_project):
    rules_dir = rule_project.write({".pi/rules/a.md": RULE}) / ".pi" / "rules"
    (rules_dir / "gone.md").symlink_to(rules_dir / "nowhere.md")
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert [e.kind for e in discovery.errors] == ["read-failure"]
    assert "broken symbolic link" in discovery.errors[0].message


def test_symlinked_rule_file_is_read(rule_project):
    rule_project.write({"shared/style.md": RULE, ".pi/rules/keep.md": RULE})
    (rule_project.cwd / ".pi/rules/style.md").symlink_to(rule_project.cwd / "shared/style.md")
    assert ids(rule_project.engine().discover(str(rule_project.cwd))) == ["keep", "style"]


def test_oversized_file_is_reported_not_read(rule_project):
    rule_project.write({".pi/rules/big.md": rule_text("x" * (2 * 1024 * 1024), globs=["a"])})
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert discovery.rules == ()
    assert discovery.errors[0].kind == "read-failure" and "limit" in discovery.errors[0].message


def test_unchanged_file_is_not_reparsed_and_changed_file_is(rule_project):
    path = rule_project.write({".pi/rules/a.md": rule_text("one", globs=["a"])}) / ".pi/rules/a.md"
    calls = []

    from rules_core import hookimpl

    class Spy:
        @hookimpl(tryfirst=True)
        def pi_rules_parse(self, rule_file, text, extra_keys):
            calls.append(rule_file.path)

    engine = rule_project.engine(plugins=[("spy", Spy())])
    engine.discover(str(rule_project.cwd))
    engine.discover(str(rule_project.cwd))
    assert len(calls) == 1
    path.write_text(rule_text("two, longer", globs=["a"]))
    os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert engine.discover(str(rule_project.cwd)).rules[0].body == "two, longer"
    assert len(calls) == 2


def test_vanished_file_drops_out(rule_project):
    path = rule_project.write({".pi/rules/a.md": RULE, ".pi/rules/b.md": RULE}) / ".pi/rules/a.md"
    engine = rule_project.engine()
    assert ids(engine.discover(str(rule_project.cwd))) == ["a", "b"]
    path.unlink()
    assert ids(engine.discover(str(rule_project.cwd))) == ["b"]


def test_global_rules_need_no_trust_and_no_project(rule_project):
    rule_project.write_global({"nested/g.md": RULE})
    discovery = rule_project.engine().discover(str(rule_project.cwd), trusted=False)
    assert [(r.id, r.relative_path, r.file.base) for r in discovery.rules] == [
        ("g", "nested/g.md", str(rule_project.cwd))
    ]


def test_file_deleted_between_listing_and_reading_is_skipped_silently(rule_project):
    from rules_core import RuleFile, hookimpl

    rule_project.write({".pi/rules/a.md": RULE})

    class Ghost:
        @hookimpl
        def pi_rules_sources(self, context):
            path = str(rule_project.cwd / "ghost.md")
            return [RuleFile(path, str(rule_project.cwd), "ghost.md", str(rule_project.cwd), "ghost", "v1",
                             "project", (0, 1, "", "ghost.md"))]

    discovery = rule_project.engine(plugins=[("ghost", Ghost())]).discover(str(rule_project.cwd))
    assert ids(discovery) == ["a"] and discovery.errors == ()
