"""The ``copilot`` importer: RULE-SPEC §1 "Imported rule formats" (Copilot) and CONTRACT §2
"Copilot applyTo", "Damaged imports", "PI_RULES_IMPORT" — one test per rule, with the
spec's literal examples."""

from __future__ import annotations

from rules_core.model import Facts

import json
import os
from functools import partial
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import (
    FIXTURES, by_id, copy_fixture, deny_listing, discover, evaluate_and_explain, git_init, plugin_errors, sole_error,
    sole_rule, status, text_with_keys,
)

INSTRUCTIONS = ".github/instructions"
NAME = "copilot"


# -- helpers -----------------------------------------------------------------------------

instructions = text_with_keys  # a Copilot instructions file
mine = partial(by_id, plugin=NAME)  # this importer's rules by id (others may be installed alongside)
only = partial(sole_rule, plugin=NAME)
errors = partial(plugin_errors, plugin=NAME)
only_error = partial(sole_error, plugin=NAME)


def write(project, name: str, text: str | bytes) -> Path:
    project.write({f"{INSTRUCTIONS}/{name}": text})
    return project.cwd / INSTRUCTIONS / name


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped fixture repository, copied into the test's project."""
    return copy_fixture(rule_project, "copilot")


# -- the fixture repository --------------------------------------------------------------


def test_fixture_every_instructions_file_becomes_a_rule_in_path_order(repo):
    rules = [r for r in discover(repo).rules if r.file.plugin == NAME]
    assert [(r.id, r.relative_path) for r in rules] == [
        ("project/copilot-instructions", ".github/copilot-instructions.md"),
        ("docs", "docs.instructions.md"),
        ("react", "frontend/react.instructions.md"),
        ("general", "general.instructions.md"),
        ("no-console", "no-console.instructions.md"),
        ("python", "python.instructions.md"),
        ("security", "security.instructions.md"),
        ("typescript", "typescript.instructions.md"),
    ]
    assert errors(repo) == []


def test_fixture_rules_report_their_real_file_paths(repo):
    rules = mine(repo)
    assert rules["react"].file.path == str(repo.cwd / INSTRUCTIONS / "frontend/react.instructions.md")
    assert {r.file.plugin for r in rules.values()} == {"copilot"}


def test_fixture_readme_is_not_an_instructions_file(repo):
    paths = {r.file.path for r in discover(repo).rules}
    assert str(repo.cwd / INSTRUCTIONS / "README.md") not in paths


def test_fixture_typescript_applies_to_touched_ts_and_tsx(repo):
    assert mine(repo)["typescript"].globs == ("**/*.ts", "**/*.tsx")
    assert status(repo, "typescript", touched=["src/components/App.tsx"]) == (
        "active", ("touched src/components/App.tsx",))
    assert status(repo, "typescript", touched=["docs/guide.md"])[0] == "inactive"


def test_fixture_general_with_applyto_star_star_is_always_on(repo):
    assert status(repo, "general") == ("active", ())


def test_fixture_security_without_frontmatter_is_always_on_with_stem_description(repo):
    rule = mine(repo)["security"]
    assert (rule.always_apply, rule.description) == (True, "security")
    assert rule.body == "Never log secrets, tokens or personal data.\nValidate all input at the API boundary.\n"


def test_fixture_docs_body_keeps_blank_lines_and_trailing_spaces(repo):
    rule = mine(repo)["docs"]
    assert rule.globs == ("docs/**/*.md",)
    assert rule.body == "\n\nWrap prose at 100 columns.   \nUse sentence case for headings.\n\n"


def test_fixture_python_without_description_falls_back_to_the_stem(repo):
    assert mine(repo)["python"].description == "python"


def test_fixture_react_keeps_brace_sets_and_ignores_name_and_exclude_agent(repo):
    rule = mine(repo)["react"]
    assert rule.globs == ("src/components/**/*.{ts,tsx}", "src/hooks/**")
    assert rule.description == "React component guidelines"
    assert "name" not in rule.extra and "excludeAgent" not in rule.extra
    assert status(repo, "react", touched=["src/components/App.tsx"])[0] == "active"


def test_fixture_stream_rule_keys_are_validated_and_shown(repo, cli):
    rule = mine(repo)["no-console"]
    assert dict(rule.extra) == {
        "condition": ("console\\.log\\(",), "interruptMode": "tool-only", "scope": ("tool:edit(*.ts)",),
    }
    code, out = cli(repo, "show", "no-console")
    assert code == 0
    assert "condition console\\.log\\(" in out and "interruptMode: tool-only" in out


def test_fixture_list_json_names_plugin_paths_and_descriptions(repo, cli, monkeypatch):
    monkeypatch.delenv("COPILOT_CUSTOM_INSTRUCTIONS_DIRS", raising=False)
    code, out = cli(repo, "--json", "list")
    assert code == 0
    data = json.loads(out)
    rows = {r["id"]: _without_conditions(r) for r in data["rules"] if r["plugin"] == NAME}
    assert rows["typescript"] == {
        "id": "typescript",
        "relativePath": "typescript.instructions.md",
        "path": str(repo.cwd / INSTRUCTIONS / "typescript.instructions.md"),
        "source": "project",
        "plugin": "copilot",
        "description": "TypeScript coding standards for this repository",
        "load": "pinned",
        "priority": 0,
        "enforcement": "inform",
    }
    assert rows["python"]["description"] == "python"
    assert [e for e in data["errors"] if NAME in e["path"]] == []


# -- applyTo (RULE-SPEC §1 table, "applyTo splitting"; CONTRACT §2 "Copilot applyTo") ---


def test_applyto_spec_example_is_exactly_two_globs(rule_project):
    write(rule_project, "ts.instructions.md", instructions(applyTo='"src/**/*.{ts,tsx}, docs/**"'))
    assert only(rule_project).globs == ("src/**/*.{ts,tsx}", "docs/**")
    assert status(rule_project, "ts", touched=["src/a.tsx"]) == ("active", ("touched src/a.tsx",))
    assert status(rule_project, "ts", touched=["docs/x.md"]) == ("active", ("touched docs/x.md",))
    assert status(rule_project, "ts", touched=["src/a.js"])[0] == "inactive"


def test_applyto_entries_are_trimmed_empties_dropped_duplicates_first_seen(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='" b/** ,, a/**,b/** , ,a/**"'))
    assert only(rule_project).globs == ("b/**", "a/**")


def test_applyto_single_glob(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**"'))
    assert only(rule_project).globs == ("src/**",)
    assert only(rule_project).always_apply is False


def test_applyto_bare_star_star_means_always_apply(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"**"'))
    assert only(rule_project).always_apply is True
    assert status(rule_project, "x") == ("active", ())


def test_applyto_star_star_among_other_entries_still_means_always(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**,  ** , docs/**"'))
    assert only(rule_project).always_apply is True
    assert status(rule_project, "x") == ("active", ())


@pytest.mark.parametrize("glob", ["**/*.md", "src/**", "**/*", "*"])
def test_applyto_other_star_patterns_stay_ordinary_touched_globs(rule_project, glob):
    write(rule_project, "x.instructions.md", instructions(applyTo=f'"{glob}"'))
    assert only(rule_project).always_apply is False
    assert status(rule_project, "x")[0] == "inactive"


def test_applyto_absent_means_always_apply(rule_project):
    write(rule_project, "x.instructions.md", instructions(description="No applyTo"))
    rule = only(rule_project)
    assert (rule.always_apply, rule.globs, rule.description) == (True, (), "No applyTo")


def test_no_frontmatter_at_all_means_always_apply(rule_project):
    write(rule_project, "x.instructions.md", "Plain instructions.\n")
    assert status(rule_project, "x") == ("active", ())


def test_empty_frontmatter_block_means_always_apply(rule_project):
    write(rule_project, "x.instructions.md", "---\n---\nBody.\n")
    assert only(rule_project).always_apply is True


def test_applyto_negation_is_passed_through(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**, !src/gen/**"'))
    assert status(rule_project, "x", touched=["src/a.ts"])[0] == "active"
    assert status(rule_project, "x", touched=["src/gen/a.ts"])[0] == "inactive"


# -- description --------------------------------------------------------------------------


def test_explicit_description_is_used_trimmed(rule_project):
    write(rule_project, "x.instructions.md", instructions(description='"  Say hello  "'))
    assert only(rule_project).description == "Say hello"


def test_description_fallback_is_the_file_stem(rule_project):
    write(rule_project, "typescript.instructions.md", instructions(applyTo='"**/*.ts"'))
    assert only(rule_project).description == "typescript"


@pytest.mark.parametrize("value", ['""', '"   "', ""])
def test_blank_or_empty_description_falls_back_to_the_stem(rule_project, value):
    write(rule_project, "typescript.instructions.md", instructions(description=value))
    assert only(rule_project).description == "typescript"


def test_a_heading_is_not_a_copilot_description(rule_project):
    write(rule_project, "typescript.instructions.md", "# TypeScript rules\n\nBody.\n")
    assert only(rule_project).description == "typescript"


# -- lenient parsing ----------------------------------------------------------------------


def test_unknown_keys_are_ignored_never_errors(rule_project):
    write(rule_project, "x.instructions.md", instructions(
        applyTo='"src/**"', name="X", excludeAgent='"code-review"', version="2", globs="[a]",
        alwaysApply="false", model="gpt", priority='"high"',
    ))
    rule = only(rule_project)
    assert errors(rule_project) == []
    assert (rule.globs, rule.always_apply, rule.model, rule.priority, rule.load) == (
        ("src/**",), False, None, 0, "pinned")


def test_version_and_description_are_not_required(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"a/**"'))
    assert errors(rule_project) == [] and list(mine(rule_project)) == ["x"]


def test_body_is_kept_verbatim_without_trimming(rule_project):
    body = "\n\n  Indented first line.\ntrailing spaces   \n\n\n"
    write(rule_project, "x.instructions.md", "---\napplyTo: '**'\n---\n" + body)
    assert only(rule_project).body == body


def test_crlf_and_bom_files_are_read(rule_project):
    write(rule_project, "x.instructions.md", b"\xef\xbb\xbf---\r\napplyTo: 'src/**'\r\n---\r\nBody.\r\n")
    rule = only(rule_project)
    assert (rule.globs, rule.body) == (("src/**",), "Body.\n")


# -- an ordinary project rule -------------------------------------------------------------


def test_import_is_an_ordinary_touched_pinned_inform_priority_0_project_rule(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**"'))
    rule = only(rule_project)
    assert (rule.match, rule.load, rule.enforcement, rule.priority, rule.source) == (
        "touched", "pinned", "inform", 0, "project")


def test_touched_only_an_existing_file_does_not_activate_it(rule_project):
    rule_project.write({"src/a.ts": "x"})
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**"'))
    assert status(rule_project, "x")[0] == "inactive"


def test_pinned_body_is_rendered_in_the_section(rule_project):
    write(rule_project, "x.instructions.md", instructions("Use tabs.", applyTo='"src/**"'))
    evaluation = rule_project.engine().evaluate(rule_project.facts(touched=["src/a.ts"]))
    assert "## x\n> Triggered by: touched src/a.ts\n\nUse tabs." in evaluation.section


# -- reference path and id ----------------------------------------------------------------


def test_reference_path_is_importer_root_relative(rule_project):
    write(rule_project, "typescript.instructions.md", instructions("TS body.", applyTo='"**/*.ts"'))
    write(rule_project, "sub/x.instructions.md", instructions("Sub body.", applyTo='"**/*.x"'))
    engine = rule_project.engine()
    rules = engine.discover(str(rule_project.cwd)).rules
    assert sorted(r.relative_path for r in rules) == ["sub/x.instructions.md", "typescript.instructions.md"]
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="typescript.instructions.md").body == "TS body.\n"
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="sub/x.instructions.md").body == "Sub body.\n"
    assert engine.read_rule(Facts(cwd="."), rules=rules, name=".github/instructions/typescript.instructions.md").body is None


def test_id_stem_drops_the_whole_instructions_suffix(rule_project):
    write(rule_project, "typescript.instructions.md", instructions())
    assert list(mine(rule_project)) == ["typescript"]


def test_only_files_ending_in_instructions_md_are_read(rule_project):
    write(rule_project, "a.md", "x\n")
    write(rule_project, "b.instructions.txt", "x\n")
    write(rule_project, "c.Instructions.md", "x\n")
    write(rule_project, "d.instructions.md", "x\n")
    assert list(mine(rule_project)) == ["d"]


def test_spec_example_one_namespace_typescript_in_three_places_and_global(rule_project):
    rule_project.write({
        ".pi/rules/typescript.md": rule_text(globs=["**/*.ts"]),
        f"{INSTRUCTIONS}/typescript.instructions.md": instructions(applyTo='"**/*.ts"'),
        ".claude/rules/typescript.md": "Claude TS.\n",
    })
    rule_project.write_global({"typescript.md": rule_text(globs=["**/*.ts"])})
    rules = discover(rule_project).rules
    assert [(r.id, r.file.plugin) for r in rules] == [
        ("typescript", "native"),
        ("typescript-2", "copilot"),
        ("typescript-3", "claude"),
        ("typescript-4", "global"),
    ]


def test_order_cwd_ancestor_nested_copilot_then_claude_then_global(rule_project):
    root = rule_project.cwd
    git_init(root)
    cwd = root / "app"
    rule_project.write({
        ".pi/rules/a.md": rule_text(globs=["x"]),
        "app/.pi/rules/a.md": rule_text(globs=["x"]),
        "app/pkg/.pi/rules/a.md": rule_text(globs=["x"]),
        f"app/{INSTRUCTIONS}/a.instructions.md": instructions(),
        "app/.claude/rules/a.md": "x\n",
    })
    rule_project.write_global({"a.md": rule_text(globs=["x"])})
    rules = rule_project.engine().discover(str(cwd)).rules
    assert [(r.id, r.file.plugin) for r in rules] == [
        ("a", "native"), ("a-2", "ancestors"), ("a-3", "nested"),
        ("a-4", "copilot"), ("a-5", "claude"), ("a-6", "global"),
    ]


def test_reference_path_repeated_in_pi_rules_resolves_to_the_earlier_source(rule_project):
    rule_project.write({".pi/rules/x.instructions.md": rule_text("Native.", globs=["a"])})
    write(rule_project, "x.instructions.md", "Copilot.\n")
    engine = rule_project.engine()
    assert engine.read_rule(Facts(cwd="."), rules=engine.discover(str(rule_project.cwd)).rules, name="x.instructions.md").body == "Native."


# -- glob scale ---------------------------------------------------------------------------


def test_globs_are_relative_to_cwd_not_to_the_importer_root(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**"'))
    assert only(rule_project).file.base == str(rule_project.cwd)
    assert status(rule_project, "x", touched=["src/a.ts"]) == ("active", ("touched src/a.ts",))
    assert status(rule_project, "x", touched=[".github/instructions/src/a.ts"])[0] == "inactive"


def test_in_a_subdirectory_of_a_repository_only_cwd_instructions_are_read(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({
        f"{INSTRUCTIONS}/root.instructions.md": instructions(),
        f"pkg/{INSTRUCTIONS}/pkg.instructions.md": instructions(applyTo='"src/**"'),
    })
    cwd = rule_project.cwd / "pkg"
    rules = [r for r in rule_project.engine().discover(str(cwd)).rules if r.file.plugin == NAME]
    assert [(r.id, r.file.base) for r in rules] == [("pkg", str(cwd))]


# -- trust, PI_RULES_IMPORT and the access audit ------------------------------------------

def test_untrusted_project_reads_no_copilot_file(rule_project, record):
    write(rule_project, "x.instructions.md", instructions())
    assert mine(rule_project, trusted=False) == {}
    record.clear()
    rule_project.engine().evaluate(rule_project.facts(trusted=False))
    assert [p for p in record if ".github" in p] == []


@pytest.mark.parametrize("value", ["none", " NONE ", "None"])
def test_pi_rules_import_none_reads_nothing_of_github_instructions(rule_project, record, value):
    write(rule_project, "x.instructions.md", instructions())
    rule_project.env["PI_RULES_IMPORT"] = value
    record.clear()
    evaluate_and_explain(rule_project)
    assert mine(rule_project) == {}
    assert [p for p in record if ".github" in p] == []


def test_pi_rules_import_none_behaves_identically_without_importer_files(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text(globs=["src/**"])})

    def snapshot():
        evaluation = rule_project.engine().evaluate(rule_project.facts(touched=["src/a.ts"]))
        return [(o.rule.id, o.status, o.reasons) for o in evaluation.outcomes], evaluation.section

    before = snapshot()
    rule_project.env["PI_RULES_IMPORT"] = "none"
    assert snapshot() == before


def test_pi_rules_import_naming_another_importer_turns_copilot_off(rule_project):
    write(rule_project, "x.instructions.md", instructions())
    rule_project.write({".claude/rules/c.md": "Claude.\n"})
    rule_project.env["PI_RULES_IMPORT"] = "claude"
    plugins = {r.file.plugin for r in discover(rule_project).rules}
    assert "copilot" not in plugins and "claude" in plugins


@pytest.mark.parametrize("value", ["copilot", "", "all", "claude, COPILOT"])
def test_pi_rules_import_selecting_copilot_or_the_defaults_turns_it_on(rule_project, value):
    write(rule_project, "x.instructions.md", instructions())
    rule_project.env["PI_RULES_IMPORT"] = value
    assert list(mine(rule_project)) == ["x"]


def test_blocking_the_plugin_turns_it_off(rule_project):
    write(rule_project, "x.instructions.md", instructions())
    rules = rule_project.engine(blocked=["copilot"]).discover(str(rule_project.cwd)).rules
    assert [r for r in rules if r.file.plugin == NAME] == []


def test_copilot_is_a_default_importer_shown_by_plugins(cli, rule_project):
    code, out = cli(rule_project, "plugins")
    assert code == 0 and "copilot" in out


# -- caching ------------------------------------------------------------------------------


def test_parsed_once_and_reparsed_when_the_file_changes(rule_project):
    path = write(rule_project, "x.instructions.md", instructions("One.", applyTo='"a/**"'))
    engine = rule_project.engine()
    first = engine.discover(str(rule_project.cwd)).rules
    assert engine.discover(str(rule_project.cwd)).rules[0] is first[0]
    path.write_text(instructions("Two, longer.", applyTo='"b/**"'))
    os.utime(path, ns=(1, 1))
    (rule,) = engine.discover(str(rule_project.cwd)).rules
    assert (rule.body, rule.globs) == ("Two, longer.\n", ("b/**",))


# -- errors: damaged imports load no rule --------------------------------------------------


def test_broken_yaml_is_yaml_syntax(rule_project):
    path = write(rule_project, "x.instructions.md", "---\napplyTo: [src/**\n---\nBody.\n")
    error = only_error(rule_project)
    assert (error.kind, error.path, error.plugin) == ("yaml-syntax", str(path), "copilot")
    assert mine(rule_project) == {}


def test_unquoted_glob_is_yaml_syntax_naming_the_quoted_fix(rule_project):
    write(rule_project, "x.instructions.md", "---\napplyTo: **/*.ts\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax"
    assert 'quote the value: applyTo: "**/*.ts"' in error.message


def test_unquoted_brace_glob_is_yaml_syntax_naming_the_quoted_fix(rule_project):
    write(rule_project, "x.instructions.md", "---\napplyTo: {src,lib}/**/*.ts, docs/**\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax"
    assert 'quote the value: applyTo: "{src,lib}/**/*.ts, docs/**"' in error.message


def test_non_mapping_frontmatter_root_is_yaml_syntax(rule_project):
    write(rule_project, "x.instructions.md", "---\n- src/**\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax" and "mapping" in error.message
    assert mine(rule_project) == {}


def test_unterminated_frontmatter_block_is_yaml_syntax(rule_project):
    write(rule_project, "x.instructions.md", "---\napplyTo: 'src/**'\nBody without a closing line.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax" and "never closed" in error.message


def test_duplicate_keys_are_yaml_syntax(rule_project):
    write(rule_project, "x.instructions.md", "---\napplyTo: 'a/**'\napplyTo: 'b/**'\n---\nBody.\n")
    assert only_error(rule_project).kind == "yaml-syntax"


@pytest.mark.parametrize("value, shown", [("3", "a number"), ("[a, b]", "a list"), ("true", "a boolean"),
                                          ("{a: b}", "a mapping")])
def test_non_string_description_is_invalid_value(rule_project, value, shown):
    write(rule_project, "x.instructions.md", instructions(description=value))
    error = only_error(rule_project)
    assert error.kind == "invalid-value"
    assert error.message.startswith(f"description must be a string, got {shown}")
    assert mine(rule_project) == {}


def test_applyto_list_is_invalid_value_showing_the_string_to_write(rule_project):
    write(rule_project, "x.instructions.md", "---\napplyTo:\n  - 'src/**'\n  - 'docs/**'\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "invalid-value"
    assert error.message == (
        'applyTo must be one string of comma-separated globs, not a list; write applyTo: "src/**, docs/**"'
    )
    assert mine(rule_project) == {}


def test_applyto_number_is_invalid_value(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo="42"))
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and "got a number (42)" in error.message


def test_applyto_boolean_is_invalid_value(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo="true"))
    assert only_error(rule_project).kind == "invalid-value"


@pytest.mark.parametrize("value", ["''", "' , '", "',,'"])
def test_applyto_with_no_glob_left_after_splitting_is_invalid_value(rule_project, value):
    write(rule_project, "x.instructions.md", instructions(applyTo=value))
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and "names no glob" in error.message
    assert 'applyTo: "**"' in error.message
    assert mine(rule_project) == {}


def test_applyto_with_no_value_is_invalid_value(rule_project):
    write(rule_project, "x.instructions.md", "---\napplyTo:\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and error.message.startswith("applyTo is empty")


def test_every_problem_of_a_file_is_reported_at_once(rule_project):
    write(rule_project, "x.instructions.md", instructions(description="[1]", applyTo="7"))
    assert sorted(e.message.split(" ", 1)[0] for e in errors(rule_project)) == ["applyTo", "description"]


def test_an_uncompilable_glob_loads_the_rule_and_is_reported(rule_project):
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**, ./"'))
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and "./" in error.message
    assert status(rule_project, "x", touched=["src/a.ts"])[0] == "active"


def test_check_names_the_real_file_and_exits_1(rule_project, cli):
    write(rule_project, "x.instructions.md", instructions(applyTo="42"))
    code, out = cli(rule_project, "check")
    assert code == 1
    assert "invalid-value .github/instructions/x.instructions.md: applyTo must be a string" in out


# -- hostile files ------------------------------------------------------------------------


def test_invalid_utf8_is_a_read_failure(rule_project):
    write(rule_project, "x.instructions.md", b"---\napplyTo: '\xff\xfe'\n---\n")
    error = only_error(rule_project)
    assert error.kind == "read-failure" and "UTF-8" in error.message


def test_binary_file_is_a_read_failure_not_an_always_on_rule(rule_project):
    write(rule_project, "x.instructions.md", b"\x00\x01\x02binary\x00")
    error = only_error(rule_project)
    assert error.kind == "read-failure" and "NUL" in error.message
    assert mine(rule_project) == {}


def test_huge_file_is_a_read_failure(rule_project):
    write(rule_project, "x.instructions.md", "x" * (1024 * 1024 + 10))
    assert only_error(rule_project).kind == "read-failure"


def test_fifo_named_like_instructions_is_reported_without_blocking(rule_project):
    root = rule_project.cwd / INSTRUCTIONS
    root.mkdir(parents=True)
    os.mkfifo(root / "pipe.instructions.md")
    error = only_error(rule_project)
    assert (error.kind, error.path) == ("read-failure", str(root / "pipe.instructions.md"))


def test_directory_named_like_instructions_is_walked_not_read(rule_project):
    write(rule_project, "dir.instructions.md/inner.instructions.md", instructions())
    assert [r.relative_path for r in mine(rule_project).values()] == ["dir.instructions.md/inner.instructions.md"]


def test_symlinked_directory_is_not_followed(rule_project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.instructions.md").write_text("Leak.\n")
    root = rule_project.cwd / INSTRUCTIONS
    root.mkdir(parents=True)
    (root / "linked").symlink_to(outside, target_is_directory=True)
    assert mine(rule_project) == {}


def test_unlistable_directory_is_source_unreadable(rule_project, monkeypatch):
    root = rule_project.cwd / INSTRUCTIONS
    root.mkdir(parents=True)
    deny_listing(monkeypatch, root)
    error = only_error(rule_project)
    assert (error.kind, error.path, error.plugin) == ("source-unreadable", str(root), "copilot")


def test_a_parser_fault_costs_one_file_not_the_whole_discovery(rule_project, monkeypatch):
    import rules_importers.copilot as copilot

    def explode(text):
        raise RuntimeError("boom")

    monkeypatch.setattr(copilot, "split_globs", explode)
    write(rule_project, "x.instructions.md", instructions(applyTo='"src/**"'))
    rule_project.write({".pi/rules/native.md": rule_text(globs=["a"])})
    error = only_error(rule_project)
    assert error.kind == "read-failure" and "crashed on this file (RuntimeError: boom)" in error.message
    assert [r.id for r in discover(rule_project).rules] == ["native"]


def test_empty_file_is_an_always_on_rule_with_an_empty_body(rule_project):
    write(rule_project, "x.instructions.md", "")
    rule = only(rule_project)
    assert (rule.body, rule.always_apply, rule.description) == ("", True, "x")


def test_file_named_only_instructions_md_gets_a_usable_id(rule_project):
    write(rule_project, ".instructions.md", "Body.\n")
    rule = only(rule_project)
    assert (rule.id, rule.description, rule.relative_path) == ("instructions", "instructions", ".instructions.md")


# -- .github/copilot-instructions.md (the repository-wide file) --------------------------

REPO_WIDE = ".github/copilot-instructions.md"
REPO_WIDE_TEXT = (FIXTURES / "copilot" / REPO_WIDE).read_text()


def write_repo_wide(project, text: str | bytes, folder: str = "") -> Path:
    name = f"{folder}/{REPO_WIDE}" if folder else REPO_WIDE
    project.write({name: text})
    return project.cwd / name


def test_fixture_repository_wide_file_is_one_always_rule_with_its_whole_text(repo):
    rule = mine(repo)["project/copilot-instructions"]
    assert (rule.always_apply, rule.load, rule.globs, rule.source) == (True, "pinned", (), "project")
    assert (rule.match, rule.enforcement, rule.priority) == ("touched", "inform", 0)
    assert rule.body == REPO_WIDE_TEXT
    assert rule.description == "Project coding standards"  # its first heading
    assert (rule.relative_path, rule.file.path) == (REPO_WIDE, str(repo.cwd / REPO_WIDE))
    assert status(repo, "project/copilot-instructions") == ("active", ())


def test_repository_wide_file_comes_first_then_the_path_specific_files(repo):
    evaluation = repo.engine().evaluate(repo.facts(touched=["src/components/App.tsx"]))
    headings = [line for line in evaluation.section.split("\n") if line.startswith("## ")]
    assert headings[0] == "## project/copilot-instructions"
    assert "## general" in headings and "## typescript" in headings


def test_repository_wide_file_sorts_after_nested_pi_rules_and_before_claude(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({
        ".pi/rules/a.md": rule_text(globs=["x"]),
        "pkg/.pi/rules/b.md": rule_text(globs=["x"]),
        f"{INSTRUCTIONS}/a.instructions.md": instructions(),
        ".claude/rules/c.md": "Claude.\n",
    })
    write_repo_wide(rule_project, "Repository-wide.\n")
    rules = discover(rule_project).rules
    assert [(r.id, r.file.plugin) for r in rules] == [
        ("a", "native"), ("b", "nested"), ("project/copilot-instructions", "copilot"),
        ("a-2", "copilot"), ("c", "claude"),
    ]


def test_repository_wide_id_names_the_folder_from_the_git_root(rule_project):
    root = rule_project.cwd / "acme"
    root.mkdir()
    git_init(root)
    rule_project.write({f"acme/{REPO_WIDE}": "Root.\n", f"acme/packages/web/{REPO_WIDE}": "Web.\n"})
    assert list(mine(rule_project, root)) == ["acme/copilot-instructions"]
    web = mine(rule_project, root / "packages/web")
    # Only cwd's own .github is read, as for .github/instructions: not the git root's.
    assert [(i, r.body) for i, r in web.items()] == [("acme/packages/web/copilot-instructions", "Web.\n")]


def test_repository_wide_reference_path_is_relative_to_cwd(rule_project):
    write_repo_wide(rule_project, "Repository-wide.\n")
    engine = rule_project.engine()
    rules = engine.discover(str(rule_project.cwd)).rules
    assert engine.read_rule(Facts(cwd="."), rules=rules, name=REPO_WIDE).body == "Repository-wide.\n"
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="copilot-instructions.md").rule is None


def test_pi_rules_read_prints_the_repository_wide_file(repo, cli):
    code, out = cli(repo, "read", REPO_WIDE)
    assert code == 0 and out.startswith("# Project coding standards\n\n## TypeScript Guidelines\n")


def test_repository_wide_frontmatter_is_text_not_keys(rule_project):
    text = "---\napplyTo: **/*.ts\n---\nUse tabs.\n"
    write_repo_wide(rule_project, text)
    rule = only(rule_project)
    assert (rule.body, rule.always_apply, rule.globs) == (text, True, ())
    assert errors(rule_project) == []


def test_repository_wide_without_a_heading_is_described_by_its_path(rule_project):
    write_repo_wide(rule_project, "Use tabs.\n")
    assert only(rule_project).description == ".github/copilot-instructions.md (copilot)"


@pytest.mark.parametrize("text", ["", "  \n\n"])
def test_an_empty_repository_wide_file_is_listed_never_active(rule_project, text):
    write_repo_wide(rule_project, text)
    rule = only(rule_project)
    assert rule.inactive_reason == "turned off: the file is empty, so it has no instructions to send"
    assert status(rule_project, "project/copilot-instructions") == ("inactive", (rule.inactive_reason,))


def test_an_untrusted_project_reads_no_repository_wide_file(rule_project, record):
    write_repo_wide(rule_project, "Repository-wide.\n")
    assert mine(rule_project, trusted=False) == {}
    record.clear()
    rule_project.engine().evaluate(rule_project.facts(trusted=False))
    assert [p for p in record if ".github" in p] == []


@pytest.mark.parametrize("value", ["none", " None "])
def test_pi_rules_import_none_never_touches_the_repository_wide_file(rule_project, record, value):
    write_repo_wide(rule_project, "Repository-wide.\n")
    rule_project.env["PI_RULES_IMPORT"] = value
    record.clear()
    evaluate_and_explain(rule_project)
    assert mine(rule_project) == {}
    assert [p for p in record if ".github" in p] == []


def test_blocking_copilot_or_leaving_it_out_drops_the_repository_wide_file(rule_project):
    write_repo_wide(rule_project, "Repository-wide.\n")
    assert [r for r in discover(rule_project, blocked=["copilot"]).rules if r.file.plugin == NAME] == []
    rule_project.env["PI_RULES_IMPORT"] = "claude"
    assert mine(rule_project) == {}


def test_a_repository_wide_directory_fifo_broken_link_or_binary_is_a_read_failure(rule_project):
    (rule_project.cwd / REPO_WIDE).mkdir(parents=True)
    error = only_error(rule_project)
    assert (error.kind, error.path) == ("read-failure", str(rule_project.cwd / REPO_WIDE))
    assert "is a directory" in error.message
    (rule_project.cwd / REPO_WIDE).rmdir()
    os.mkfifo(rule_project.cwd / REPO_WIDE)
    assert only_error(rule_project).kind == "read-failure"
    os.unlink(rule_project.cwd / REPO_WIDE)
    (rule_project.cwd / REPO_WIDE).symlink_to(rule_project.cwd / "missing.md")
    assert only_error(rule_project).message.startswith("broken symbolic link")
    os.unlink(rule_project.cwd / REPO_WIDE)
    write_repo_wide(rule_project, b"\x00\x01binary\x00")
    assert only_error(rule_project).kind == "read-failure" and mine(rule_project) == {}


# -- COPILOT_CUSTOM_INSTRUCTIONS_DIRS (Copilot CLI's variable, as oh-my-pi reads it) --------


def test_custom_instruction_dirs_are_global_rules_after_native_global(rule_project, tmp_path):
    team = tmp_path / "team"
    (team / INSTRUCTIONS).mkdir(parents=True)
    (team / INSTRUCTIONS / "style.instructions.md").write_text(instructions("Team.", applyTo='"src/**"'))
    rule_project.write_global({"style.md": rule_text(globs=["x"])})
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = f" {team} , "
    rules = discover(rule_project).rules
    assert [(r.id, r.file.plugin, r.source) for r in rules] == [
        ("style", "global", "global"), ("style-2", "copilot", "global"),
    ]
    assert rules[1].relative_path == "style.instructions.md" and rules[1].file.base == str(rule_project.cwd)


def test_custom_instruction_dirs_load_even_for_an_untrusted_project(rule_project, tmp_path):
    team = tmp_path / "team"
    (team / INSTRUCTIONS).mkdir(parents=True)
    (team / INSTRUCTIONS / "t.instructions.md").write_text("Team.\n")
    write(rule_project, "p.instructions.md", "Project.\n")
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = str(team)
    assert list(mine(rule_project, trusted=False)) == ["t"]


def test_custom_instruction_dirs_expand_home(rule_project):
    (rule_project.home / "rules" / INSTRUCTIONS).mkdir(parents=True)
    (rule_project.home / "rules" / INSTRUCTIONS / "h.instructions.md").write_text("Home.\n")
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = "~/rules"
    assert list(mine(rule_project)) == ["h"]


def test_relative_custom_instruction_dir_is_invalid_value(rule_project):
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = "team-rules"
    error = only_error(rule_project)
    assert (error.kind, error.path) == ("invalid-value", "COPILOT_CUSTOM_INSTRUCTIONS_DIRS")
    assert "'team-rules' is not an absolute directory" in error.message


def test_custom_instruction_dirs_are_not_read_when_imports_are_off(rule_project, tmp_path, record):
    team = tmp_path / "team"
    (team / INSTRUCTIONS).mkdir(parents=True)
    (team / INSTRUCTIONS / "t.instructions.md").write_text("Team.\n")
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = str(team)
    rule_project.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert mine(rule_project) == {}
    assert [p for p in record if p.startswith(str(team))] == []


def _without_conditions(row: dict) -> dict:
    """A ``list --json`` row without ``conditions`` (issue 34 added them; tests/hosts/test_new_user.py)."""
    return {k: v for k, v in row.items() if k != "conditions"}
