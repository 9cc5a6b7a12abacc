"""The ``cursor`` importer (docs/importers.md (the cursor importer)): Cursor's rules read in place."""

from __future__ import annotations

from rules_core.model import Facts

import json
import os

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import FIXTURES, by_id, copy_fixture, deny_listing, discover, relative_errors, statuses
from importer_helpers import text_with_front as cursor_rule

FIXTURE = FIXTURES / "cursor"
rules = by_id
errors = relative_errors
outcomes = statuses


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped Cursor repository, as a git repository."""
    return copy_fixture(rule_project, "cursor", git=True)


# -- the fixture repository ---------------------------------------------------------------


def test_fixture_discovery_order_ids_reference_and_real_paths(repo):
    found = discover(repo)
    assert found.errors == ()
    rows = [(r.id, r.relative_path, r.file.plugin, r.source, os.path.relpath(r.file.path, repo.cwd))
            for r in found.rules]
    assert rows == [
        ("api-trpc", "api-trpc/RULE.md", "cursor", "project", ".cursor/rules/api-trpc/RULE.md"),
        ("db-migrations", "db-migrations.mdc", "cursor", "project", ".cursor/rules/db-migrations.mdc"),
        ("react", "frontend/react.mdc", "cursor", "project", ".cursor/rules/frontend/react.mdc"),
        ("no-console", "no-console.mdc", "cursor", "project", ".cursor/rules/no-console.mdc"),
        ("project-core", "project-core.mdc", "cursor", "project", ".cursor/rules/project-core.mdc"),
        ("release-checklist", "release-checklist.mdc", "cursor", "project", ".cursor/rules/release-checklist.mdc"),
        ("style-notes", "style-notes.md", "cursor", "project", ".cursor/rules/style-notes.md"),
        ("testing", "testing/RULE.md", "cursor", "project", ".cursor/rules/testing/RULE.md"),
        ("typescript", "typescript.mdc", "cursor", "project", ".cursor/rules/typescript.mdc"),
        ("cursorrules", ".cursorrules", "cursor", "project", ".cursorrules"),
        ("api", "api.mdc", "cursor", "project", "packages/api/.cursor/rules/api.mdc"),
        ("components", "components.mdc", "cursor", "project", "packages/web/.cursor/rules/components.mdc"),
        ("ui-policy", "ui-policy/RULE.md", "cursor", "project", "packages/web/.cursor/rules/ui-policy/RULE.md"),
    ]


def test_always_apply_true_is_an_always_rule(repo):
    rule = rules(repo)["project-core"]
    assert rule.always_apply and rule.load == "pinned" and rule.globs == ()
    result, _ = outcomes(repo)
    assert result["project-core"] == ("active", ())


def test_unquoted_globs_as_cursor_users_write_them_are_touched_globs(repo):
    rule = rules(repo)["typescript"]  # `globs: **/*.ts, **/*.tsx` is not valid YAML
    assert rule.globs == ("**/*.ts", "**/*.tsx") and rule.match == "touched" and not rule.always_apply
    assert rule.description == "TypeScript conventions for this repository"
    assert outcomes(repo, touched=["src/lib/a.ts"])[0]["typescript"] == ("active", ("touched src/lib/a.ts",))
    assert outcomes(repo, touched=["README.md"])[0]["typescript"][0] == "inactive"


def test_globs_are_never_matched_by_existence_only_by_touch(repo):
    assert outcomes(repo)[0]["typescript"][0] == "inactive"  # src/lib/a.ts exists


def test_description_only_is_on_demand_and_fetched_with_read_rule(repo):
    result, evaluation = outcomes(repo)
    assert result["db-migrations"][0] == "on-demand"
    assert ("- db-migrations.mdc — Use when writing or reviewing database migrations "
            "(fetch with the read_rule tool)") in evaluation.section
    engine = repo.engine()
    assert engine.read_rule(Facts(cwd="."), rules=engine.discover(str(repo.cwd)).rules, name="db-migrations.mdc").body == (
        "Migrations are append-only: never edit one that has been merged.\n"
    )


def test_no_activation_at_all_is_manual_so_on_demand_never_dropped(repo):
    rule = rules(repo)["release-checklist"]
    assert rule.load == "on-demand" and rule.globs == () and not rule.always_apply
    assert rule.description == "Release checklist"  # the first heading, Cursor's UI left it blank
    assert outcomes(repo)[0]["release-checklist"][0] == "on-demand"


def test_plain_md_without_frontmatter_is_a_manual_rule_with_its_whole_text(repo):
    rule = rules(repo)["style-notes"]
    assert rule.load == "on-demand" and rule.description == "Style notes"
    assert rule.body == "# Style notes\n\nKeep modules small and named after what they export.\n"


def test_yaml_list_globs_with_a_negation(repo):
    rule = rules(repo)["react"]
    assert rule.globs == ("src/components/**/*.tsx", "!src/**/*.test.tsx")
    assert outcomes(repo, touched=["src/components/Nav.tsx"])[0]["react"][0] == "active"
    assert outcomes(repo, touched=["src/components/Nav.test.tsx"])[0]["react"][0] == "inactive"


def test_always_apply_as_the_string_true_is_read_as_true(repo):
    assert rules(repo)["no-console"].always_apply


def test_always_apply_as_the_string_false_is_read_as_false(rule_project):
    rule_project.write({".cursor/rules/x.mdc": cursor_rule('alwaysApply: "FALSE"\nglobs: src/**\n')})
    rule = rules(rule_project)["x"]
    assert not rule.always_apply and rule.globs == ("src/**",)


def test_peer_stream_keys_are_validated(repo):
    rule = rules(repo)["no-console"]
    assert dict(rule.extra) == {
        "condition": ("console\\.log\\(",),
        "scope": ("tool:edit(*.ts)", "tool:write(*.ts)"),
        "interruptMode": "tool-only",
        "agents": ("main",),
    }


def test_legacy_cursorrules_is_one_always_rule_with_its_text_verbatim(repo):
    rule = rules(repo)["cursorrules"]
    assert rule.always_apply and rule.relative_path == ".cursorrules"
    assert rule.body == (FIXTURE / ".cursorrules").read_text()
    assert rule.file.path == str(repo.cwd / ".cursorrules")


def test_imported_bodies_are_kept_verbatim_blank_edges_included(repo):
    assert rules(repo)["project-core"].body.startswith("\n# Project core\n")


def test_nested_rules_globs_are_relative_to_their_folder(repo):
    rule = rules(repo)["components"]
    assert rule.file.base == str(repo.cwd / "packages" / "web")
    touched = "packages/web/src/components/Button.tsx"
    assert outcomes(repo, touched=[touched])[0]["components"] == ("active", (f"touched {touched}",))
    assert outcomes(repo, touched=["src/components/Button.tsx"])[0]["components"][0] == "inactive"


def test_nested_always_rule_applies_only_to_files_of_its_folder(repo):
    assert outcomes(repo)[0]["api"][0] == "inactive"
    assert outcomes(repo, touched=["packages/api/src/h.ts"])[0]["api"] == ("active", ("touched packages/api/src/h.ts",))
    assert outcomes(repo, touched=["packages/web/src/h.ts"])[0]["api"][0] == "inactive"


def test_nested_folder_rules_run_from_that_folder_are_cwd_rules(repo):
    found = rules(repo, cwd=repo.cwd / "packages" / "api")
    assert list(found) == ["api"] and found["api"].always_apply  # the parent's .cursor is never read


def test_nested_search_is_bounded_shallow_first_and_skips_hidden_vendor_and_symlinks(rule_project, tmp_path):
    outside = tmp_path / "outside"
    (outside / "pkg/.cursor/rules").mkdir(parents=True)
    (outside / "pkg/.cursor/rules/leak.mdc").write_text("x")
    rule_project.write({
        "b/.cursor/rules/b.mdc": "x", "a/z/.cursor/rules/az.mdc": "x", "c/.cursor/rules/c.mdc": "x",
        "a/b/c/d/e/f/.cursor/rules/six.mdc": "x", "a/b/c/d/e/f/g/.cursor/rules/seven.mdc": "x",
        "node_modules/m/.cursor/rules/m.mdc": "x", ".venv/p/.cursor/rules/v.mdc": "x",
        ".git/x/.cursor/rules/g.mdc": "x",
    })
    (rule_project.cwd / "linked").symlink_to(outside, target_is_directory=True)
    (rule_project.cwd / "loop").symlink_to(rule_project.cwd, target_is_directory=True)
    assert list(rules(rule_project)) == ["b", "c", "az", "six"]


def test_nested_search_is_cached_until_the_engine_is_told_the_tree_changed(rule_project):
    rule_project.write({"a/.cursor/rules/a.mdc": "x"})
    engine = rule_project.engine()
    assert [r.id for r in engine.discover(str(rule_project.cwd)).rules] == ["a"]
    rule_project.write({"b/.cursor/rules/b.mdc": "x"})
    assert [r.id for r in engine.discover(str(rule_project.cwd)).rules] == ["a"]
    engine.invalidate_scans()
    assert [r.id for r in engine.discover(str(rule_project.cwd)).rules] == ["a", "b"]


def test_comma_strings_split_only_outside_braces(rule_project):
    rule_project.write({".cursor/rules/x.mdc": cursor_rule("globs: src/**/*.{ts,tsx}, docs/**\n")})
    assert rules(rule_project)["x"].globs == ("src/**/*.{ts,tsx}", "docs/**")


def test_fallback_reads_flow_lists_quotes_and_comments(rule_project):
    rule_project.write({".cursor/rules/x.mdc": cursor_rule(
        "description: 'Scripts: shell and JS'\nglobs: [*.sh, \"**/*.js\"]  # scripts only\nalwaysApply: false\n"
    ), ".cursor/rules/y.mdc": cursor_rule("globs:\n  - *.md\n  - docs/**\n")})
    found = rules(rule_project)
    assert found["x"].globs == ("*.sh", "**/*.js") and found["x"].description == "Scripts: shell and JS"
    assert found["y"].globs == ("*.md", "docs/**")


def test_empty_globs_is_no_globs_not_an_error(rule_project):
    rule_project.write({".cursor/rules/x.mdc": cursor_rule("description: d\nglobs: ''\n")})
    assert rules(rule_project)["x"].load == "on-demand" and errors(rule_project) == []


def test_description_falls_back_to_the_first_heading_then_the_stem(rule_project):
    rule_project.write({
        ".cursor/rules/h.mdc": cursor_rule("description: '  '\n", "Intro\n## Deep heading ##\n# Later\n"),
        ".cursor/rules/s.mdc": cursor_rule("alwaysApply: true\n", "no heading\n"),
    })
    found = rules(rule_project)
    assert found["h"].description == "Deep heading" and found["s"].description == "s"


def test_user_level_cursor_rules_are_global_after_native_global_rules(rule_project):
    rule_project.write_global({"mine.md": rule_text(globs=["x"])})
    (rule_project.home / ".cursor/rules").mkdir(parents=True)
    (rule_project.home / ".cursor/rules/mine.mdc").write_text(cursor_rule("globs: src/**\n"))
    found = discover(rule_project).rules
    assert [(r.id, r.file.plugin, r.source) for r in found] == [("mine", "global", "global"), ("mine-2", "cursor", "global")]
    assert found[1].file.base == str(rule_project.cwd)


def test_one_id_namespace_with_native_rules(rule_project):
    rule_project.write({".pi/rules/typescript.md": rule_text(globs=["x"]),
                        ".cursor/rules/typescript.mdc": cursor_rule("globs: x\n"),
                        "pkg/.cursor/rules/typescript.mdc": cursor_rule("globs: x\n")})
    assert [(r.id, r.file.plugin) for r in discover(rule_project).rules] == [
        ("typescript", "native"), ("typescript-2", "cursor"), ("typescript-3", "cursor"),
    ]


def test_an_uncompilable_glob_loads_the_rule_and_is_reported(rule_project):
    rule_project.write({".cursor/rules/x.mdc": cursor_rule("globs: ./, src/**\n")})
    assert rules(rule_project)["x"].globs == ("./", "src/**")
    assert [(k, p) for k, p, *_ in errors(rule_project)] == [("invalid-value", ".cursor/rules/x.mdc")]


# -- rule folders: .cursor/rules/<name>/RULE.md -------------------------------------------


def test_fixture_rule_folders_are_named_by_their_folder_never_rule(repo):
    found = rules(repo)
    assert {"api-trpc", "testing", "ui-policy"} <= set(found)
    assert not [i for i in found if i.startswith("RULE")]
    assert (found["testing"].always_apply, found["testing"].load) == (True, "pinned")
    assert found["testing"].body == (FIXTURE / ".cursor/rules/testing/RULE.md").read_text().split("---\n", 2)[2]


def test_a_rule_folder_without_a_description_or_heading_is_described_by_its_name(repo):
    assert rules(repo)["api-trpc"].description == "api-trpc"


def test_other_files_in_a_rule_folder_are_its_material_not_rules(repo):
    paths = {r.file.path for r in discover(repo).rules}
    assert str(repo.cwd / ".cursor/rules/api-trpc/example-router.md") not in paths
    assert "example-router" not in rules(repo)


def test_a_nested_rule_folder_is_scoped_to_its_package(repo):
    rule = rules(repo)["ui-policy"]
    assert rule.file.base == str(repo.cwd / "packages/web") and rule.globs == ("**",)
    touched = "packages/web/src/components/Button.tsx"
    assert outcomes(repo, touched=[touched])[0]["ui-policy"] == ("active", (f"touched {touched}",))
    assert outcomes(repo, touched=["src/lib/a.ts"])[0]["ui-policy"][0] == "inactive"


def test_rule_folders_are_read_by_their_reference_path(repo, cli):
    code, out = cli(repo, "read", "api-trpc/RULE.md")
    assert code == 0 and out.startswith("\n- All API endpoints must be implemented as tRPC procedures")


def test_rule_folders_inside_category_folders_and_plain_files_beside_them(rule_project):
    rule_project.write({
        ".cursor/rules/frontend/forms/RULE.md": cursor_rule("globs: src/forms/**\n"),
        ".cursor/rules/frontend/react.mdc": cursor_rule("globs: src/**/*.tsx\n"),
        ".cursor/rules/backend/RULE.md": cursor_rule("alwaysApply: true\n"),
    })
    found = discover(rule_project).rules
    assert [(r.id, r.relative_path) for r in found] == [
        ("backend", "backend/RULE.md"), ("forms", "frontend/forms/RULE.md"), ("react", "frontend/react.mdc"),
    ]


def test_two_rule_folders_with_one_name_share_the_id_namespace(rule_project):
    rule_project.write({
        ".cursor/rules/testing/RULE.md": cursor_rule("alwaysApply: true\n"),
        "pkg/.cursor/rules/testing/RULE.md": cursor_rule("alwaysApply: true\n"),
        ".pi/rules/testing.md": rule_text(globs=["x"]),
    })
    assert [(r.id, r.file.plugin) for r in discover(rule_project).rules] == [
        ("testing", "native"), ("testing-2", "cursor"), ("testing-3", "cursor"),
    ]


def test_everything_inside_a_rule_folder_is_one_rule_even_another_rule_md(rule_project):
    rule_project.write({
        ".cursor/rules/api/RULE.md": cursor_rule("alwaysApply: true\n"),
        ".cursor/rules/api/examples/RULE.md": cursor_rule("alwaysApply: true\n"),
        ".cursor/rules/api/draft.mdc": cursor_rule("alwaysApply: true\n"),
        ".cursor/rules/api/notes/old.md": "Old.\n",
    })
    assert [(r.id, r.relative_path) for r in discover(rule_project).rules] == [("api", "api/RULE.md")]


def test_a_rule_md_directly_in_the_rules_folder_is_an_ordinary_rule(rule_project):
    rule_project.write({".cursor/rules/RULE.md": cursor_rule("alwaysApply: true\n"),
                        ".cursor/rules/other.mdc": cursor_rule("alwaysApply: true\n")})
    assert list(rules(rule_project)) == ["RULE", "other"]


def test_faults_inside_a_rule_folder_are_not_reported_but_an_unreadable_rule_md_is(rule_project):
    folder = rule_project.cwd / ".cursor/rules"
    rule_project.write({".cursor/rules/good/RULE.md": cursor_rule("alwaysApply: true\n"),
                        ".cursor/rules/broken/notes.md": "Notes.\n"})
    os.mkfifo(folder / "good/pipe.md")
    os.mkfifo(folder / "broken/RULE.md")
    assert list(rules(rule_project)) == ["good"]
    assert [(k, p) for k, p, *_ in errors(rule_project)] == [("read-failure", ".cursor/rules/broken/RULE.md")]


def test_user_level_rule_folders_are_global_rules_named_by_their_folder(rule_project):
    (rule_project.home / ".cursor/rules/mine").mkdir(parents=True)
    (rule_project.home / ".cursor/rules/mine/RULE.md").write_text(cursor_rule("alwaysApply: true\n"))
    (rule_project.home / ".cursor/rules/mine/example.md").write_text("Example.\n")
    found = discover(rule_project).rules
    assert [(r.id, r.source, r.relative_path) for r in found] == [("mine", "global", "mine/RULE.md")]


# -- errors: each names the file, the key and the fix ---------------------------------------


@pytest.mark.parametrize("front, needle", [
    ("alwaysApply: yes\n", "alwaysApply must be true or false, got 'yes'; write alwaysApply: true"),
    ("alwaysApply: 1\n", "alwaysApply must be true or false, got the number 1"),
    ("globs: 42\n", "globs must be a comma-separated string or a list of glob strings, got the number 42"),
    ("globs: {src: x}\n", "globs must be a comma-separated string or a list of glob strings, got a mapping"),
    ("globs: [src/**, 3]\n", "got a list"),
    ("description: [a, b]\n", 'description must be text, got a list; write description: "…"'),
])
def test_a_bad_value_of_a_key_cursor_reads_is_invalid_value_and_loads_no_rule(rule_project, front, needle):
    rule_project.write({".cursor/rules/bad.mdc": cursor_rule(front)})
    assert rules(rule_project) == {}
    [(kind, path, message, plugin)] = errors(rule_project)
    assert (kind, path, plugin) == ("invalid-value", ".cursor/rules/bad.mdc", "cursor") and needle in message


def test_unterminated_frontmatter_is_yaml_syntax(rule_project):
    rule_project.write({".cursor/rules/bad.mdc": "---\nglobs: src/**\nBody without a closing line\n"})
    [(kind, path, message, _)] = errors(rule_project)
    assert (kind, path) == ("yaml-syntax", ".cursor/rules/bad.mdc") and "never closed" in message


def test_non_mapping_frontmatter_is_yaml_syntax(rule_project):
    rule_project.write({".cursor/rules/bad.mdc": cursor_rule("- src/**\n- docs/**\n")})
    assert [(k, m) for k, _, m, _ in errors(rule_project)] == [
        ("yaml-syntax", "frontmatter must be a mapping of 'key: value' lines, not a list or scalar")]


def test_broken_yaml_the_line_fallback_cannot_read_stays_yaml_syntax(rule_project):
    rule_project.write({".cursor/rules/bad.mdc": cursor_rule("globs: **/*.ts\n  nested: [x\n")})
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "yaml-syntax" and 'quote the value: globs: "**/*.ts"' in message
    assert rules(rule_project) == {}


def test_a_repeated_key_is_yaml_syntax_even_in_the_fallback(rule_project):
    rule_project.write({".cursor/rules/bad.mdc": cursor_rule("globs: **/*.ts\nglobs: **/*.js\n")})
    assert [k for k, *_ in errors(rule_project)] == ["yaml-syntax"]


# -- hostile files ----------------------------------------------------------------------


def test_binary_files_are_read_failures_and_invalid_utf8_loads_as_cursor_reads_it(rule_project):
    rule_project.write({".cursor/rules/latin1.mdc": b"---\nglobs: x\n---\ncaf\xe9\n",
                        ".cursor/rules/blob.mdc": bytes(range(256)) * 4})
    assert sorted((k, p) for k, p, *_ in errors(rule_project)) == [("read-failure", ".cursor/rules/blob.mdc")]
    discovery = discover(rule_project)
    assert [r.body for r in discovery.rules] == ["caf\ufffd\n"]
    assert [w.code for w in discovery.warnings] == ["invalid-utf8"]


def test_a_huge_file_is_a_read_failure_not_read_into_memory(rule_project):
    rule_project.write({".cursor/rules/huge.mdc": "x" * (1024 * 1024 + 10), ".cursorrules": "y" * (1024 * 1024 + 10)})
    assert sorted((k, p) for k, p, m, _ in errors(rule_project) if "limit" in m) == [
        ("read-failure", ".cursor/rules/huge.mdc"), ("read-failure", ".cursorrules")]


def test_fifos_named_like_rules_are_read_failures_never_opened(rule_project):
    (rule_project.cwd / ".cursor/rules").mkdir(parents=True)
    os.mkfifo(rule_project.cwd / ".cursor/rules/pipe.mdc")
    os.mkfifo(rule_project.cwd / ".cursorrules")
    found = errors(rule_project)
    assert sorted((k, p) for k, p, *_ in found) == [("read-failure", ".cursor/rules/pipe.mdc"), ("read-failure", ".cursorrules")]
    assert all("not a regular file" in m for _, _, m, _ in found)


def test_a_cursorrules_directory_or_broken_link_is_reported_not_ignored(rule_project, tmp_path):
    (rule_project.cwd / ".cursorrules").mkdir()
    [(kind, path, message, plugin)] = errors(rule_project)
    assert (kind, path, plugin) == ("read-failure", ".cursorrules", "cursor") and "is a directory" in message
    (rule_project.cwd / ".cursorrules").rmdir()
    (rule_project.cwd / ".cursorrules").symlink_to(tmp_path / "missing")
    assert [(k, m) for k, _, m, _ in errors(rule_project)] == [
        ("read-failure", "broken symbolic link; point it at an existing file or delete it")]


def test_an_unlistable_rules_directory_is_source_unreadable(rule_project, monkeypatch):
    rules_dir = rule_project.cwd / ".cursor/rules"
    rules_dir.mkdir(parents=True)
    deny_listing(monkeypatch, rules_dir)
    [(kind, path, message, plugin)] = errors(rule_project)
    assert (kind, path, plugin) == ("source-unreadable", ".cursor/rules", "cursor") and "Permission denied" in message


# -- switching it off ---------------------------------------------------------------------


def test_import_none_turns_it_off(repo):
    repo.env["PI_RULES_IMPORT"] = " NONE "
    assert rules(repo) == {}


def test_import_list_without_cursor_turns_it_off_and_with_it_on(repo):
    repo.env["PI_RULES_IMPORT"] = "windsurf"
    assert rules(repo) == {}
    repo.env["PI_RULES_IMPORT"] = "windsurf,cursor"
    assert "typescript" in rules(repo)


def test_blocking_the_plugin_turns_it_off(repo):
    assert rules(repo, blocked=["cursor"]) == {}


def test_import_none_does_not_even_stat_a_cursor_path(repo, record):
    (repo.home / ".cursor/rules").mkdir(parents=True)
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    discover(repo)
    assert [p for p in record if ".cursor" in p] == []


def test_untrusted_project_reads_no_project_file_but_user_rules_still_load(repo):
    (repo.home / ".cursor/rules").mkdir(parents=True)
    (repo.home / ".cursor/rules/me.mdc").write_text(cursor_rule("alwaysApply: true\n"))
    found = repo.engine().discover(str(repo.cwd), trusted=False)
    assert [(r.id, r.source) for r in found.rules] == [("me", "global")]


# -- the command line -------------------------------------------------------------------


def test_cli_list_json_names_plugin_real_path_and_reference(repo, cli):
    code, out = cli(repo, "--json", "list")
    assert code == 0
    data = json.loads(out)
    components = next(r for r in data["rules"] if r["id"] == "components")
    assert (components["plugin"], components["relativePath"], components["source"], components["load"]) == (
        "cursor", "components.mdc", "project", "pinned")
    assert components["path"] == str(repo.cwd / "packages/web/.cursor/rules/components.mdc")
    assert next(r for r in data["rules"] if r["id"] == "db-migrations")["load"] == "on-demand"


def test_cli_check_names_the_file_and_the_fix(rule_project, cli):
    rule_project.write({".cursor/rules/bad.mdc": cursor_rule("alwaysApply: always\n")})
    assert cli(rule_project, "check") == (1, (
        "invalid-value .cursor/rules/bad.mdc: alwaysApply must be true or false, got 'always'; "
        "write alwaysApply: true or alwaysApply: false\n"
    ))
