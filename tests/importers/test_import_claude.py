"""The ``claude`` importer: RULE-SPEC §1 "Imported rule formats" (Claude) and CONTRACT §2
"Damaged imports", "PI_RULES_IMPORT" — one test per rule, with the spec's literal
examples."""

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
    by_id, copy_fixture, deny_listing, discover, evaluate_and_explain, git_init, plugin_errors, sole_error,
    sole_rule, status, text_with_keys,
)

RULES = ".claude/rules"
NAME = "claude"


# -- helpers -----------------------------------------------------------------------------

claude_rule = text_with_keys  # a Claude rule file
mine = partial(by_id, plugin=NAME)  # this importer's rules by id (others may be installed alongside)
only = partial(sole_rule, plugin=NAME)
errors = partial(plugin_errors, plugin=NAME)
only_error = partial(sole_error, plugin=NAME)


def write(project, name: str, text: str | bytes) -> Path:
    project.write({f"{RULES}/{name}": text})
    return project.cwd / RULES / name


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped fixture repository, copied into the test's project."""
    return copy_fixture(rule_project, "claude")


# -- the fixture repository --------------------------------------------------------------


def test_fixture_every_markdown_file_becomes_a_rule_in_path_order(repo):
    rules = [r for r in discover(repo).rules if r.file.plugin == NAME]
    assert [(r.id, r.relative_path) for r in rules] == [
        ("api", "api.md"),
        ("code-style", "code-style.md"),
        ("components", "frontend/components.md"),
        ("security", "security.md"),
        ("testing", "testing.md"),
        ("typescript", "typescript.md"),
    ]
    assert errors(repo) == []


def test_fixture_rules_report_their_real_file_paths_and_skip_non_markdown(repo):
    rules = mine(repo)
    assert rules["components"].file.path == str(repo.cwd / RULES / "frontend/components.md")
    assert str(repo.cwd / RULES / "notes.txt") not in {r.file.path for r in discover(repo).rules}


def test_fixture_code_style_without_frontmatter_is_always_on_described_by_its_heading(repo):
    rule = mine(repo)["code-style"]
    assert (rule.always_apply, rule.description) == (True, "Code Style")
    assert status(repo, "code-style") == ("active", ())


def test_fixture_api_single_glob_string_and_heading_after_a_blank_line(repo):
    rule = mine(repo)["api"]
    assert (rule.globs, rule.description) == (("src/api/**/*.ts",), "API Development Rules")
    assert status(repo, "api", touched=["src/api/users.ts"]) == ("active", ("touched src/api/users.ts",))
    assert status(repo, "api", touched=["lib/util.ts"])[0] == "inactive"


def test_fixture_typescript_list_with_braces_and_a_negation(repo):
    rule = mine(repo)["typescript"]
    assert rule.globs == ("src/**/*.{ts,tsx}", "lib/**/*.ts", "!src/generated/**")
    assert rule.description == "typescript"
    assert status(repo, "typescript", touched=["src/x.tsx"])[0] == "active"
    assert status(repo, "typescript", touched=["src/generated/x.ts"])[0] == "inactive"


def test_fixture_testing_explicit_description_wins_over_its_heading(repo):
    rule = mine(repo)["testing"]
    assert (rule.globs, rule.description) == (("**/*.test.ts", "**/*.spec.ts"), "How we write tests")


def test_fixture_components_heading_inside_a_code_fence_wins(repo):
    rule = mine(repo)["components"]
    assert rule.description == "not a heading in markdown, but the first line that looks like one"


def test_fixture_security_ignores_globs_and_always_apply_keys(repo):
    rule = mine(repo)["security"]
    assert (rule.always_apply, rule.globs) == (True, ())
    assert rule.description == "security"


def test_fixture_list_json_names_plugin_paths_and_descriptions(repo, cli):
    code, out = cli(repo, "--json", "list")
    assert code == 0
    data = json.loads(out)
    rows = {r["id"]: _without_conditions(r) for r in data["rules"] if r["plugin"] == NAME}
    assert rows["api"] == {
        "id": "api",
        "relativePath": "api.md",
        "path": str(repo.cwd / RULES / "api.md"),
        "source": "project",
        "plugin": "claude",
        "description": "API Development Rules",
        "load": "pinned",
        "priority": 0,
        "enforcement": "inform",
    }
    assert [e for e in data["errors"] if ".claude" in e["path"]] == []


# -- paths (RULE-SPEC §1 table, "paths forms") --------------------------------------------


def test_paths_one_glob_string(rule_project):
    write(rule_project, "x.md", claude_rule(paths="src/**/*.ts"))
    assert only(rule_project).globs == ("src/**/*.ts",)


def test_paths_comma_separated_string_spec_example_is_exactly_two_globs(rule_project):
    write(rule_project, "x.md", claude_rule(paths="src/**/*.{ts,tsx}, docs/**"))
    assert only(rule_project).globs == ("src/**/*.{ts,tsx}", "docs/**")
    assert status(rule_project, "x", touched=["src/a.tsx"]) == ("active", ("touched src/a.tsx",))
    assert status(rule_project, "x", touched=["docs/a.md"])[0] == "active"


def test_paths_yaml_list_of_globs(rule_project):
    write(rule_project, "x.md", "---\npaths:\n  - 'src/**'\n  - docs/**\n---\nBody.\n")
    assert only(rule_project).globs == ("src/**", "docs/**")


def test_paths_flow_list_of_globs(rule_project):
    write(rule_project, "x.md", claude_rule(paths='["src/**", "docs/**"]'))
    assert only(rule_project).globs == ("src/**", "docs/**")


def test_all_three_paths_forms_normalise_to_the_same_globs(rule_project):
    write(rule_project, "a.md", claude_rule(paths="'src/**, docs/**'"))
    write(rule_project, "b.md", claude_rule(paths="[src/**, docs/**]"))
    write(rule_project, "c.md", "---\npaths:\n  - src/**\n  - docs/**\n---\nBody.\n")
    assert {r.globs for r in mine(rule_project).values()} == {("src/**", "docs/**")}


def test_paths_string_entries_trimmed_blanks_dropped_duplicates_first_seen(rule_project):
    write(rule_project, "x.md", claude_rule(paths="' b/** ,, a/**,b/** , ,a/**'"))
    assert only(rule_project).globs == ("b/**", "a/**")


def test_paths_list_entries_trimmed_blanks_dropped_duplicates_first_seen(rule_project):
    write(rule_project, "x.md", claude_rule(paths="[' b/** ', '', a/**, '  ', b/**]"))
    assert only(rule_project).globs == ("b/**", "a/**")


def test_paths_absent_means_always_apply(rule_project):
    write(rule_project, "x.md", claude_rule(description="Always"))
    rule = only(rule_project)
    assert (rule.always_apply, rule.globs) == (True, ())
    assert status(rule_project, "x") == ("active", ())


def test_no_frontmatter_at_all_means_always_apply(rule_project):
    write(rule_project, "x.md", "Plain rule.\n")
    assert status(rule_project, "x") == ("active", ())


def test_empty_frontmatter_block_means_always_apply(rule_project):
    write(rule_project, "x.md", "---\n---\nBody.\n")
    assert only(rule_project).always_apply is True


def test_star_star_is_not_special_it_is_an_ordinary_glob(rule_project):
    write(rule_project, "x.md", claude_rule(paths="'**'"))
    rule = only(rule_project)
    assert (rule.always_apply, rule.globs) == (False, ("**",))
    assert status(rule_project, "x")[0] == "inactive"
    assert status(rule_project, "x", touched=["any/file.py"]) == ("active", ("touched any/file.py",))


def test_brace_expansion_reaches_the_matcher_verbatim(rule_project):
    write(rule_project, "x.md", claude_rule(paths="src/**/*.{ts,tsx}"))
    assert only(rule_project).globs == ("src/**/*.{ts,tsx}",)
    assert status(rule_project, "x", touched=["src/a/b.tsx"])[0] == "active"
    assert status(rule_project, "x", touched=["src/a/b.js"])[0] == "inactive"


def test_negations_are_passed_through_and_subtract(rule_project):
    write(rule_project, "x.md", claude_rule(paths="['src/**', '!src/gen/**']"))
    assert only(rule_project).globs == ("src/**", "!src/gen/**")
    assert status(rule_project, "x", touched=["src/a.ts"])[0] == "active"
    assert status(rule_project, "x", touched=["src/gen/a.ts"])[0] == "inactive"


def test_only_negations_match_nothing(rule_project):
    write(rule_project, "x.md", claude_rule(paths="['!src/gen/**']"))
    assert only(rule_project).always_apply is False
    assert status(rule_project, "x", touched=["src/a.ts", "docs/b.md"])[0] == "inactive"


# -- description precedence ---------------------------------------------------------------


def test_explicit_description_wins_trimmed(rule_project):
    write(rule_project, "x.md", claude_rule("# Heading", description="'  Explicit  '"))
    assert only(rule_project).description == "Explicit"


@pytest.mark.parametrize("value", ["''", "'   '", ""])
def test_blank_explicit_description_counts_as_absent(rule_project, value):
    write(rule_project, "x.md", claude_rule("# The Heading\n\nBody.", description=value))
    assert only(rule_project).description == "The Heading"


def test_first_heading_is_the_fallback_description(rule_project):
    write(rule_project, "x.md", "Intro line.\n\n## First\n\n# Second\n")
    assert only(rule_project).description == "First"


@pytest.mark.parametrize("line, expected", [
    ("# One", "One"),
    ("###### Six", "Six"),
    ("##\t  Tabbed   ", "Tabbed"),
    ("### Trailing hashes ###", "Trailing hashes ###"),
    ("   # Three spaces of indent", "Three spaces of indent"),
])
def test_atx_heading_hash_run_stripped_and_trimmed(rule_project, line, expected):
    write(rule_project, "x.md", f"{line}\nBody.\n")
    assert only(rule_project).description == expected


@pytest.mark.parametrize("line", ["####### Seven hashes", "#NoSpace", "    # Four spaces is code", "Text # not"])
def test_lines_that_are_not_atx_headings_are_skipped(rule_project, line):
    write(rule_project, "typescript.md", f"{line}\nBody.\n")
    assert only(rule_project).description == "typescript"


def test_heading_with_no_text_is_passed_over(rule_project):
    write(rule_project, "x.md", "#   \n## Real\n")
    assert only(rule_project).description == "Real"


def test_heading_inside_a_code_fence_counts(rule_project):
    write(rule_project, "x.md", "```bash\n# install the deps\nnpm ci\n```\n\n# Title\n")
    assert only(rule_project).description == "install the deps"


def test_heading_in_frontmatter_does_not_count_only_the_body(rule_project):
    write(rule_project, "x.md", "---\n# a YAML comment\npaths: src/**\n---\nNo heading.\n")
    assert only(rule_project).description == "x"


def test_file_stem_is_the_last_fallback(rule_project):
    write(rule_project, "typescript.md", claude_rule("No heading here.", paths="src/**"))
    assert only(rule_project).description == "typescript"


def test_nested_file_stem_is_its_own_name(rule_project):
    write(rule_project, "frontend/react.md", "Body.\n")
    rule = only(rule_project)
    assert (rule.id, rule.description, rule.relative_path) == ("react", "react", "frontend/react.md")


# -- lenient parsing ----------------------------------------------------------------------


def test_unknown_keys_are_ignored_never_errors(rule_project):
    write(rule_project, "x.md", claude_rule(
        paths="src/**", globs="'**/*.py'", alwaysApply="true", version="7", match="exists",
        tools="[edit]", model="opus", priority="'high'", load="on-demand",
    ))
    rule = only(rule_project)
    assert errors(rule_project) == []
    assert (rule.globs, rule.always_apply, rule.match, rule.tools, rule.model, rule.priority, rule.load) == (
        ("src/**",), False, "touched", (), None, 0, "pinned")


def test_version_and_description_are_not_required(rule_project):
    write(rule_project, "x.md", claude_rule(paths="a/**"))
    assert errors(rule_project) == [] and list(mine(rule_project)) == ["x"]


def test_body_is_kept_verbatim_without_trimming(rule_project):
    body = "\n\n  Indented.\ntrailing spaces   \n\n\n"
    write(rule_project, "x.md", "---\npaths: a/**\n---\n" + body)
    assert only(rule_project).body == body


def test_body_without_frontmatter_is_the_whole_file(rule_project):
    write(rule_project, "x.md", "\n# Title\n\nBody.\n\n")
    assert only(rule_project).body == "\n# Title\n\nBody.\n\n"


def test_stream_rule_keys_are_validated_and_shown(rule_project, cli):
    write(rule_project, "x.md", claude_rule(
        paths="src/**", condition="'TODO'", astCondition="['console.log($A)']", agents="[main]",
        ttsr_trigger="'FIXME'",
    ))
    assert dict(only(rule_project).extra) == {
        "condition": ("TODO",), "astCondition": ("console.log($A)",), "agents": ("main",), "ttsr_trigger": ("FIXME",),
    }
    code, out = cli(rule_project, "show", "x")
    assert code == 0 and "astCondition console.log($A)" in out


# -- an ordinary project rule -------------------------------------------------------------


def test_import_is_an_ordinary_touched_pinned_inform_priority_0_project_rule(rule_project):
    write(rule_project, "x.md", claude_rule(paths="src/**"))
    rule = only(rule_project)
    assert (rule.match, rule.load, rule.enforcement, rule.priority, rule.source) == (
        "touched", "pinned", "inform", 0, "project")


def test_touched_only_an_existing_file_does_not_activate_it(rule_project):
    rule_project.write({"src/a.ts": "x"})
    write(rule_project, "x.md", claude_rule(paths="src/**"))
    assert status(rule_project, "x")[0] == "inactive"


def test_globs_are_relative_to_cwd_not_to_the_importer_root(rule_project):
    write(rule_project, "x.md", claude_rule(paths="src/**"))
    assert only(rule_project).file.base == str(rule_project.cwd)
    assert status(rule_project, "x", touched=[".claude/rules/src/a.ts"])[0] == "inactive"
    assert status(rule_project, "x", touched=["src/a.ts"])[0] == "active"


def test_in_a_subdirectory_of_a_repository_only_cwd_rules_are_read(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({f"{RULES}/root.md": "Root.\n", f"pkg/{RULES}/pkg.md": claude_rule(paths="src/**")})
    cwd = rule_project.cwd / "pkg"
    rules = [r for r in rule_project.engine().discover(str(cwd)).rules if r.file.plugin == NAME]
    assert [(r.id, r.file.base) for r in rules] == [("pkg", str(cwd))]


def test_reference_path_is_importer_root_relative(rule_project):
    write(rule_project, "typescript.md", "TS body.\n")
    write(rule_project, "sub/x.md", "Sub body.\n")
    engine = rule_project.engine()
    rules = engine.discover(str(rule_project.cwd)).rules
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="typescript.md").body == "TS body.\n"
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="sub/x.md").body == "Sub body.\n"
    assert engine.read_rule(Facts(cwd="."), rules=rules, name=".claude/rules/typescript.md").body is None


def test_spec_example_one_namespace_typescript_in_three_places_and_global(rule_project):
    rule_project.write({
        ".pi/rules/typescript.md": rule_text(globs=["**/*.ts"]),
        ".github/instructions/typescript.instructions.md": "Copilot TS.\n",
        f"{RULES}/typescript.md": claude_rule(paths="'**/*.ts'"),
    })
    rule_project.write_global({"typescript.md": rule_text(globs=["**/*.ts"])})
    rules = discover(rule_project).rules
    assert [(r.id, r.file.plugin, r.relative_path) for r in rules] == [
        ("typescript", "native", "typescript.md"),
        ("typescript-2", "copilot", "typescript.instructions.md"),
        ("typescript-3", "claude", "typescript.md"),
        ("typescript-4", "global", "typescript.md"),
    ]


def test_same_reference_path_resolves_to_the_earlier_source(rule_project):
    rule_project.write({".pi/rules/typescript.md": rule_text("Native.", globs=["a"])})
    write(rule_project, "typescript.md", "Claude.\n")
    engine = rule_project.engine()
    assert engine.read_rule(Facts(cwd="."), rules=engine.discover(str(rule_project.cwd)).rules, name="typescript.md").body == "Native."


def test_copilot_is_listed_before_claude(rule_project):
    write(rule_project, "a.md", "Claude.\n")
    rule_project.write({".github/instructions/z.instructions.md": "Copilot.\n"})
    assert [r.file.plugin for r in discover(rule_project).rules] == ["copilot", "claude"]


def test_parsed_once_and_reparsed_when_the_file_changes(rule_project):
    path = write(rule_project, "x.md", claude_rule("One.", paths="a/**"))
    engine = rule_project.engine()
    first = engine.discover(str(rule_project.cwd)).rules
    assert engine.discover(str(rule_project.cwd)).rules[0] is first[0]
    path.write_text(claude_rule("# Two\nlonger", paths="b/**"))
    os.utime(path, ns=(1, 1))
    (rule,) = engine.discover(str(rule_project.cwd)).rules
    assert (rule.description, rule.globs) == ("Two", ("b/**",))


# -- trust and PI_RULES_IMPORT --------------------------------------------------------------

def test_untrusted_project_reads_no_claude_file(rule_project, record):
    write(rule_project, "x.md", "Body.\n")
    record.clear()
    rule_project.engine().evaluate(rule_project.facts(trusted=False))
    assert mine(rule_project, trusted=False) == {}
    # Only the claude-md importer's global ~/.claude/CLAUDE.md (and the skills importer's
    # ~/.claude/skills, user skills) may be looked at.
    user_skills = str(rule_project.home / ".claude" / "skills")
    assert [p for p in record if ".claude" in p and p != str(rule_project.home / ".claude" / "CLAUDE.md")
            and not p.startswith(user_skills)] == []


@pytest.mark.parametrize("value", ["none", " NONE ", "nOnE\t"])
def test_pi_rules_import_none_reads_nothing_of_claude_rules(rule_project, record, value):
    write(rule_project, "x.md", "Body.\n")
    rule_project.env["PI_RULES_IMPORT"] = value
    record.clear()
    evaluate_and_explain(rule_project)
    assert mine(rule_project) == {}
    assert [p for p in record if ".claude" in p] == []


def test_pi_rules_import_naming_another_importer_turns_claude_off(rule_project):
    write(rule_project, "x.md", "Body.\n")
    rule_project.write({".github/instructions/c.instructions.md": "Copilot.\n"})
    rule_project.env["PI_RULES_IMPORT"] = "copilot"
    plugins = {r.file.plugin for r in discover(rule_project).rules}
    assert "claude" not in plugins and "copilot" in plugins


@pytest.mark.parametrize("value", ["claude", "", "ALL", " copilot , claude "])
def test_pi_rules_import_selecting_claude_or_the_defaults_turns_it_on(rule_project, value):
    write(rule_project, "x.md", "Body.\n")
    rule_project.env["PI_RULES_IMPORT"] = value
    assert list(mine(rule_project)) == ["x"]


def test_blocking_the_plugin_turns_it_off(rule_project):
    write(rule_project, "x.md", "Body.\n")
    rules = rule_project.engine(blocked=["claude"]).discover(str(rule_project.cwd)).rules
    assert [r for r in rules if r.file.plugin == NAME] == []


def test_claude_is_a_default_importer_shown_by_plugins(cli, rule_project):
    code, out = cli(rule_project, "plugins")
    assert code == 0 and "claude" in out


def test_home_claude_rules_are_not_read(rule_project, record):
    (rule_project.home / RULES).mkdir(parents=True)
    (rule_project.home / RULES / "personal.md").write_text("Personal.\n")
    record.clear()
    assert mine(rule_project) == {}
    # ~/.claude/rules is Claude Code's own; only claude-md's global CLAUDE.md is looked at.
    assert [p for p in record if p.startswith(str(rule_project.home / RULES))] == []


# -- errors: damaged imports load no rule --------------------------------------------------


def test_broken_yaml_is_yaml_syntax(rule_project):
    path = write(rule_project, "x.md", "---\npaths: [src/**\n---\nBody.\n")
    error = only_error(rule_project)
    assert (error.kind, error.path, error.plugin) == ("yaml-syntax", str(path), "claude")
    assert mine(rule_project) == {}


def test_unquoted_star_glob_is_yaml_syntax_naming_the_quoted_fix(rule_project):
    write(rule_project, "x.md", "---\npaths: **/*.ts\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax" and 'quote the value: paths: "**/*.ts"' in error.message


def test_unquoted_brace_glob_is_yaml_syntax_naming_the_quoted_fix(rule_project):
    write(rule_project, "x.md", "---\npaths: {src,lib}/**/*.ts, tests/**/*.test.ts\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax"
    assert 'quote the value: paths: "{src,lib}/**/*.ts, tests/**/*.test.ts"' in error.message


def test_unquoted_list_item_negation_is_yaml_syntax_naming_the_quoted_fix(rule_project):
    write(rule_project, "x.md", "---\npaths:\n  - src/**\n  - !src/gen/**\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax" and 'quote the value: - "!src/gen/**"' in error.message


def test_non_mapping_frontmatter_root_is_yaml_syntax(rule_project):
    write(rule_project, "x.md", "---\n- src/**\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax" and "mapping" in error.message


def test_scalar_frontmatter_root_is_yaml_syntax(rule_project):
    write(rule_project, "x.md", "---\njust text\n---\nBody.\n")
    assert only_error(rule_project).kind == "yaml-syntax"


def test_unterminated_frontmatter_block_is_yaml_syntax(rule_project):
    write(rule_project, "x.md", "---\npaths: src/**\n# Title\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "yaml-syntax" and "never closed" in error.message
    assert mine(rule_project) == {}


@pytest.mark.parametrize("value, shown", [("3", "a number"), ("[a]", "a list"), ("false", "a boolean")])
def test_non_string_description_is_invalid_value(rule_project, value, shown):
    write(rule_project, "x.md", claude_rule("# Heading", description=value))
    error = only_error(rule_project)
    assert error.kind == "invalid-value"
    assert error.message.startswith(f"description must be a string, got {shown}")
    assert mine(rule_project) == {}


@pytest.mark.parametrize("value", ["''", "' , '", "[]", "['', '  ']", "','"])
def test_paths_with_no_glob_left_is_invalid_value_not_always_apply(rule_project, value):
    write(rule_project, "x.md", claude_rule(paths=value))
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and "names no glob" in error.message
    assert "remove the key to apply the rule always" in error.message
    assert mine(rule_project) == {}


def test_paths_with_no_value_is_invalid_value(rule_project):
    write(rule_project, "x.md", "---\npaths:\n---\nBody.\n")
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and error.message.startswith("paths is empty")


@pytest.mark.parametrize("value, shown", [("42", "a number (42)"), ("true", "a boolean (True)"),
                                          ("{src: x}", "a mapping")])
def test_paths_neither_string_nor_list_is_invalid_value(rule_project, value, shown):
    write(rule_project, "x.md", claude_rule(paths=value))
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and error.message.startswith(f"paths is {shown}")
    assert mine(rule_project) == {}


def test_paths_list_with_a_non_string_entry_is_invalid_value(rule_project):
    write(rule_project, "x.md", claude_rule(paths="['src/**', 7]"))
    error = only_error(rule_project)
    assert (error.kind, error.message) == ("invalid-value", "paths entry 2 must be a glob string, got a number (7); quote it")


def test_paths_list_with_a_nested_list_is_invalid_value(rule_project):
    write(rule_project, "x.md", claude_rule(paths="[[src/**]]"))
    assert only_error(rule_project).message.startswith("paths entry 1 must be a glob string, got a list")


def test_paths_list_with_a_bare_dash_is_invalid_value(rule_project):
    write(rule_project, "x.md", "---\npaths:\n  - src/**\n  -\n---\nBody.\n")
    error = only_error(rule_project)
    assert (error.kind, error.message) == ("invalid-value", "paths entry 2 is empty; delete the bare '-' line")


def test_an_uncompilable_glob_loads_the_rule_and_is_reported(rule_project):
    write(rule_project, "x.md", claude_rule(paths="'src/**, ./'"))
    error = only_error(rule_project)
    assert error.kind == "invalid-value" and "./" in error.message
    assert status(rule_project, "x", touched=["src/a.ts"])[0] == "active"


def test_check_names_the_real_file_and_exits_1(rule_project, cli):
    write(rule_project, "x.md", claude_rule(paths="[]"))
    code, out = cli(rule_project, "check")
    assert code == 1 and "invalid-value .claude/rules/x.md: paths [] names no glob" in out


# -- hostile files ------------------------------------------------------------------------


def test_invalid_utf8_is_a_read_failure(rule_project):
    write(rule_project, "x.md", b"# Title \xc3\x28\n")
    error = only_error(rule_project)
    assert error.kind == "read-failure" and "UTF-8" in error.message


def test_binary_file_is_a_read_failure_not_an_always_on_rule(rule_project):
    write(rule_project, "x.md", b"\x89PNG\x00\x00\x00\rIHDR")
    assert only_error(rule_project).kind == "read-failure"
    assert mine(rule_project) == {}


def test_nul_bytes_in_valid_utf8_are_a_read_failure(rule_project):
    write(rule_project, "x.md", "# Title\n\x00\x00\n")
    error = only_error(rule_project)
    assert error.kind == "read-failure" and "NUL" in error.message


def test_huge_file_is_a_read_failure(rule_project):
    write(rule_project, "x.md", "# Big\n" + "x" * (1024 * 1024 + 10))
    assert only_error(rule_project).kind == "read-failure"


def test_fifo_named_like_a_rule_is_reported_without_blocking(rule_project):
    root = rule_project.cwd / RULES
    root.mkdir(parents=True)
    os.mkfifo(root / "pipe.md")
    error = only_error(rule_project)
    assert (error.kind, error.path) == ("read-failure", str(root / "pipe.md"))


def test_unlistable_directory_is_source_unreadable(rule_project, monkeypatch):
    root = rule_project.cwd / RULES
    root.mkdir(parents=True)
    deny_listing(monkeypatch, root)
    error = only_error(rule_project)
    assert (error.kind, error.path, error.plugin) == ("source-unreadable", str(root), "claude")


def test_git_and_node_modules_inside_the_rules_dir_are_not_scanned(rule_project):
    write(rule_project, "node_modules/pkg/x.md", "x\n")
    write(rule_project, ".git/y.md", "y\n")
    write(rule_project, "ok.md", "ok\n")
    assert list(mine(rule_project)) == ["ok"]


def test_yaml_alias_bomb_is_refused_as_yaml_syntax(rule_project):
    bomb = "---\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\nBody.\n"
    write(rule_project, "x.md", bomb)
    assert only_error(rule_project).kind == "yaml-syntax"


def test_deeply_nested_yaml_is_refused_not_a_crash(rule_project):
    write(rule_project, "x.md", "---\npaths: " + "[" * 500 + "]" * 500 + "\n---\nBody.\n")
    assert only_error(rule_project).kind == "yaml-syntax"


def test_file_named_only_md_gets_a_usable_id(rule_project):
    write(rule_project, ".md", "Body.\n")
    assert list(mine(rule_project)) == ["md"]


def _without_conditions(row: dict) -> dict:
    """A ``list --json`` row without ``conditions`` (issue 34 added them; tests/hosts/test_new_user.py)."""
    return {k: v for k, v in row.items() if k != "conditions"}
