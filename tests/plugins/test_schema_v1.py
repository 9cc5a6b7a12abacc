"""The strict native format: keys, types, defaults, constraints and every error kind."""

from __future__ import annotations

import pytest

from rules_core.rule_tests.pytest_plugin import RuleProject, rule_text


def load(project: RuleProject, text: str | bytes, name: str = "r.md"):
    project.write({f".pi/rules/{name}": text})
    return project.engine().discover(str(project.cwd))


def only_error(project: RuleProject, text: str | bytes):
    discovery = load(project, text)
    assert discovery.rules == ()
    assert len(discovery.errors) == 1, discovery.errors
    error = discovery.errors[0]
    assert error.path == str(project.cwd / ".pi/rules/r.md")
    return error


def test_defaults_of_every_optional_key(rule_project):
    rule = load(rule_project, rule_text(globs=["src/**"])).rules[0]
    assert (rule.match, rule.priority, rule.enforcement, rule.load) == ("both", 0, "inform", "pinned")
    assert (rule.tools, rule.branch, rule.model, rule.keywords, rule.always_apply) == ((), None, None, (), False)


def test_every_key_is_read(rule_project):
    text = rule_text(
        globs=["src/**/*.ts", "!src/**/*.test.ts"], match="touched", tools=["edit", "write"],
        branch="main", model="*sonnet*", priority=10, enforcement="enforce", load="on-demand",
        keywords=[" typescript ", "style"], alwaysApply=False,
    )
    rule = load(rule_project, text).rules[0]
    assert rule.globs == ("src/**/*.ts", "!src/**/*.test.ts")
    assert rule.positive_globs == ("src/**/*.ts",) and rule.negative_globs == ("src/**/*.test.ts",)
    assert (rule.match, rule.tools, rule.branch, rule.model) == ("touched", ("edit", "write"), "main", "*sonnet*")
    assert (rule.priority, rule.enforcement, rule.load) == (10, "enforce", "on-demand")
    assert rule.keywords == ("typescript", "style")


def test_body_blank_edges_trimmed_and_rest_kept_byte_for_byte(rule_project):
    body = "\n\n  indented first\n\n```\n---\n```\ntrailing spaces   \n\n\n"
    rule = load(rule_project, rule_text(body, globs=["a"])).rules[0]
    assert rule.body == "  indented first\n\n```\n---\n```\ntrailing spaces   "


def test_bom_and_crlf_are_accepted(rule_project):
    text = "\ufeff" + rule_text("line one\nline two", globs=["a"]).replace("\n", "\r\n")
    rule = load(rule_project, text.encode("utf-8")).rules[0]
    assert rule.body == "line one\nline two"


# -- one test per error kind -------------------------------------------------------


def test_yaml_syntax_error_names_line_and_fix(rule_project):
    error = only_error(rule_project, "---\ndescription: [unclosed\nversion: 1\n---\nbody\n")
    assert error.kind == "yaml-syntax"
    assert "line" in error.message


def test_unterminated_frontmatter_is_yaml_syntax(rule_project):
    error = only_error(rule_project, "---\ndescription: x\nversion: 1\nglobs: [a]\nbody\n")
    assert error.kind == "yaml-syntax"
    assert "never closed" in error.message


def test_duplicate_keys_are_yaml_syntax(rule_project):
    error = only_error(rule_project, "---\ndescription: a\ndescription: b\nversion: 1\nglobs: [a]\n---\n")
    assert error.kind == "yaml-syntax" and "duplicate key 'description'" in error.message


def test_unquoted_star_pattern_is_reported_as_alias_with_quote_hint(rule_project):
    error = only_error(rule_project, "---\ndescription: a\nversion: 1\nmodel: *sonnet*\n---\n")
    assert error.kind == "yaml-syntax" and 'model: "*sonnet*"' in error.message


def test_missing_frontmatter(rule_project):
    error = only_error(rule_project, "# Just markdown\n\nNo frontmatter here.\n")
    assert error.kind == "missing-frontmatter"
    assert "---" in error.message


def test_unknown_key_suggests_the_close_one(rule_project):
    discovery = load(rule_project, rule_text(glob=["src/**"], globs=["src/**"]))
    assert [e.kind for e in discovery.errors] == ["unknown-key"]
    assert "unknown key 'glob' — did you mean 'globs'?" in discovery.errors[0].message
    assert discovery.rules == ()


@pytest.mark.parametrize("version", [None, "1", 1.0, True, 2])
def test_invalid_version(rule_project, version):
    error = only_error(rule_project, rule_text(globs=["a"], version=version))
    assert error.kind == "invalid-version"
    assert "version: 1" in error.message


def test_version_1_0_literal_is_rejected(rule_project):
    error = only_error(rule_project, "---\ndescription: d\nversion: 1.0\nglobs: [a]\n---\n")
    assert error.kind == "invalid-version"


@pytest.mark.parametrize("description", [None, "", "   "])
def test_missing_description(rule_project, description):
    error = only_error(rule_project, rule_text(globs=["a"], description=description))
    assert error.kind == "missing-description"


@pytest.mark.parametrize(
    "keys, needle",
    [
        ({"globs": "src/**"}, 'globs must be a list of strings; write globs: ["src/**"]'),
        ({"globs": ["a", 3]}, "globs must be a list of strings"),
        ({"tools": "edit", "globs": ["a"]}, "tools must be a list of strings"),
        ({"match": "sometimes", "globs": ["a"]}, "match is 'sometimes'; use one of touched, exists, both"),
        ({"enforcement": "must", "globs": ["a"]}, "use one of enforce, recommend, inform"),
        ({"load": "lazy", "globs": ["a"]}, "use one of pinned, on-demand"),
        ({"priority": "high", "globs": ["a"]}, "priority must be an integer"),
        ({"priority": True, "globs": ["a"]}, "priority must be an integer"),
        ({"priority": 1.5, "globs": ["a"]}, "priority must be an integer"),
        ({"branch": 3}, "branch must be a string"),
        ({"model": ["a"]}, "model must be a string"),
        ({"alwaysApply": "yes"}, "alwaysApply must be true or false"),
        ({"keywords": "x", "globs": ["a"]}, "keywords must be a list of strings"),
        ({"description": 5, "globs": ["a"]}, "description must be a string"),
    ],
)
def test_invalid_value(rule_project, keys, needle):
    description = keys.pop("description", "d")
    error = only_error(rule_project, rule_text(description=description, **keys))
    assert error.kind == "invalid-value"
    assert needle in error.message


def test_yaml_1_1_booleans_are_strings_so_yes_is_invalid(rule_project):
    error = only_error(rule_project, "---\ndescription: d\nversion: 1\nalwaysApply: yes\n---\n")
    assert error.kind == "invalid-value"


def test_uncompilable_glob_is_reported_and_the_rule_still_loads(rule_project):
    discovery = load(rule_project, rule_text(globs=["", "src/**"]))
    assert [r.id for r in discovery.rules] == ["r"]
    assert [e.kind for e in discovery.errors] == ["invalid-value"]
    assert "glob ''" in discovery.errors[0].message


def test_match_without_globs(rule_project):
    error = only_error(rule_project, rule_text(match="touched", tools=["edit"]))
    assert error.kind == "match-without-globs"


def test_implicit_match_without_globs_is_fine_with_another_trigger(rule_project):
    assert load(rule_project, rule_text(tools=["edit"])).errors == ()


@pytest.mark.parametrize("keys", [{}, {"globs": []}, {"tools": []}, {"alwaysApply": False}, {"keywords": ["x"]}])
def test_no_activation_condition(rule_project, keys):
    error = only_error(rule_project, rule_text(**keys))
    assert error.kind == "no-activation-condition"


@pytest.mark.parametrize("keys", [{"globs": ["a"]}, {"tools": ["x"]}, {"branch": "main"}, {"model": "m"}, {"alwaysApply": True}])
def test_each_trigger_alone_is_enough(rule_project, keys):
    assert load(rule_project, rule_text(**keys)).errors == ()


def test_read_failure_for_invalid_utf8(rule_project):
    error = only_error(rule_project, b"---\ndescription: \xff\xfe\n---\n")
    assert error.kind == "read-failure" and "UTF-8" in error.message


def test_source_unreadable_for_unlistable_directory(rule_project):
    # A symlink loop cannot be listed even by root (permission bits would not stop root).
    (rule_project.cwd / ".pi").mkdir()
    rules_dir = rule_project.cwd / ".pi" / "rules"
    rules_dir.symlink_to(rules_dir)
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert [(e.kind, e.path) for e in discovery.errors] == [("source-unreadable", str(rules_dir))]
    assert "fix its permissions or remove it" in discovery.errors[0].message


def test_every_problem_in_a_file_is_reported_at_once(rule_project):
    discovery = load(rule_project, "---\nglob: [a]\n---\n")
    kinds = sorted(e.kind for e in discovery.errors)
    # no-activation-condition is left out: the misspelt 'glob' is the missing trigger.
    assert kinds == ["invalid-version", "missing-description", "unknown-key"]


# -- the YAML dialect, loader by loader ------------------------------------------------

import yaml  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from rules_plugins.frontmatter import FrontmatterError, load_yaml, strict_loader  # noqa: E402

PURE = strict_loader(yaml.SafeLoader)
FAST = strict_loader(yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else PURE


def outcome_of(text: str, loader: type) -> object:
    try:
        return ("ok", load_yaml(text, loader))
    except FrontmatterError:
        return ("error",)


@pytest.mark.parametrize("loader", [PURE, FAST], ids=["pure", "libyaml"])
@pytest.mark.parametrize(
    "text, expected",
    [
        ("a: yes", {"a": "yes"}), ("a: off", {"a": "off"}), ("a: True", {"a": True}),
        ("a: 2024-01-02", {"a": "2024-01-02"}), ("a: 0x10", {"a": 16}), ("a: 0o17", {"a": 15}),
        ("a: 1.0", {"a": 1.0}), ("a: 1_000", {"a": "1_000"}), ("a: 1:30", {"a": "1:30"}),
        ("a: ~", {"a": None}), ("a: 010", {"a": 10}), ("<<: {b: 1}", {"<<": {"b": 1}}),
    ],
)
def test_yaml_1_2_core_scalars(loader, text, expected):
    assert load_yaml(text, loader) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a: 1", "b: [x, y]", "- z", "c: *x", "d: &y 2", "e: {f: g}", "  h: i",
                                 "a: 2", "j: 'k", "l: \"m\"", "n: yes", "o:", "p: [", "q: !!int 3", "r: !!str 4",
                                 "s: !!timestamp 2020-01-01", "t: !!python/name:os.system", "#c", "u: |", "  v"]),
                max_size=6).map("\n".join))
def test_libyaml_and_pure_loaders_agree(text):
    assert outcome_of(text, FAST) == outcome_of(text, PURE)
