"""The ``continue`` importer (docs/importers.md, "The continue importer"): Continue's rule files read in place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core.model import Facts, ParseResult, RuleFile

import rules_importers.continue_rules as continue_rules
from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import FIXTURES, by_id, copy_fixture, discover, relative_errors, statuses
from importer_helpers import text_with_front as rule_file

FIXTURE = FIXTURES / "continue"
RULES = Path(".continue") / "rules"
rules = by_id
errors = relative_errors


@pytest.fixture
def repo(rule_project):
    """Continue's own repository's rules, as a git repository."""
    return copy_fixture(rule_project, "continue", git=True)


@pytest.fixture(autouse=True)
def fresh_verdicts():
    """Regex verdicts are remembered per file version; each test starts without them."""
    continue_rules._seen.clear()
    yield
    continue_rules._seen.clear()


def write_rules(project, files: dict, *, home: bool = False) -> None:
    root = (project.home if home else project.cwd) / RULES
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def status(project, rule_id: str, **facts):
    return statuses(project, **facts)[0][rule_id]


# -- the fixture repository: Continue's table ---------------------------------------------


def test_fixture_discovery_order_ids_reference_and_real_paths(repo):
    found = discover(repo)
    assert found.errors == ()
    names = sorted(p.stem for p in (FIXTURE / RULES).glob("*.md"))
    assert [(r.id, r.relative_path, r.source, r.file.plugin, os.path.relpath(r.file.path, repo.cwd))
            for r in found.rules] == [(n, f"{n}.md", "project", "continue", f".continue/rules/{n}.md") for n in names]


def test_no_always_apply_and_no_globs_is_always_described_by_name_then_heading(repo):
    found = rules(repo)
    for rule_id in ("mintlify-formatting", "overeager", "personality"):
        assert found[rule_id].always_apply and found[rule_id].load == "pinned"
        assert status(repo, rule_id) == ("active", ())
    assert found["overeager"].description == "Don't be overeager"  # its name
    assert found["personality"].description == "Conversational and personality guidelines"
    assert found["mintlify-formatting"].description == "Mintlify Documentation Formatting Rules"
    assert found["mintlify-formatting"].body == (FIXTURE / RULES / "mintlify-formatting.md").read_text()


def test_always_apply_false_without_globs_is_on_demand(repo):
    found = rules(repo)
    assert found["bigger-picture-description-rules"].load == "on-demand"
    assert found["dev-data-guide"].load == "on-demand"
    assert found["dev-data-guide"].description == "Continue Development Data (Dev Data) Guide"
    result, evaluation = statuses(repo)
    assert result["dev-data-guide"][0] == "on-demand"
    assert ("- bigger-picture-description-rules.md — Guidelines for explaining how code works in context "
            "(fetch with the read_rule tool)") in evaluation.section


def test_globs_are_touched_globs_with_or_without_always_apply_false(repo):
    found = rules(repo)
    assert found["colors"].globs == ("gui/**/*.tsx",) and found["colors"].load == "pinned"
    assert found["css-units"].globs == ("gui/**/*.tsx",) and not found["css-units"].always_apply
    assert found["test-running-guide"].globs == ("gui/**/*", "core/**/*")
    assert status(repo, "colors", touched=["gui/src/theme.tsx"]) == ("active", ("touched gui/src/theme.tsx",))
    assert status(repo, "colors")[0] == "inactive"  # gui/src/theme.tsx exists: touched only


def test_unquoted_globs_and_a_folded_description(repo):
    rule = rules(repo)["documentation-description-rule"]
    assert rule.globs == ("docs/**/*.{md,mdx}",)
    assert rule.description.startswith("This rule applies to all documentation files to ensure consistent SEO")
    assert status(repo, "documentation-description-rule", touched=["docs/rules.mdx"])[0] == "active"


def test_always_apply_true_wins_over_globs_and_regex(rule_project):
    write_rules(rule_project, {"x.md": rule_file('alwaysApply: true\nglobs: "src/**"\nregex: "^x"\n')})
    rule = rules(rule_project)["x"]
    assert rule.always_apply and rule.globs == () and rule.extra_conditions == ()
    assert status(rule_project, "x") == ("active", ())


def test_always_apply_false_with_description_and_glob_is_pinned_to_the_glob(rule_project):
    write_rules(rule_project, {"x.md": rule_file('alwaysApply: false\ndescription: d\nglobs: ["src/**"]\n')})
    rule = rules(rule_project)["x"]
    assert rule.load == "pinned" and rule.globs == ("src/**",)


def test_always_apply_as_text_is_read_as_its_meaning(rule_project):
    write_rules(rule_project, {"t.md": rule_file('alwaysApply: "true"\nglobs: "src/**"\n'),
                               "f.md": rule_file("alwaysApply: 'false'\n")})
    assert rules(rule_project)["t"].always_apply and rules(rule_project)["f"].load == "on-demand"


def test_description_wins_over_name(rule_project):
    write_rules(rule_project, {"x.md": rule_file("name: The name\ndescription: The description\n"),
                               "y.md": rule_file("name: The name\ndescription: ''\n")})
    assert (rules(rule_project)["x"].description, rules(rule_project)["y"].description) == (
        "The description", "The name")


def test_invokable_prompt_files_are_listed_but_never_applied(rule_project):
    write_rules(rule_project, {"explain.md": rule_file("name: Explain\ninvokable: true\n")})
    assert status(rule_project, "explain") == ("inactive", (continue_rules.INVOKABLE,))


def test_rules_folders_are_read_recursively(rule_project):
    write_rules(rule_project, {"a.md": "A.\n", "team/b.md": "B.\n"})
    assert [(r.id, r.relative_path) for r in discover(rule_project).rules] == [("a", "a.md"), ("b", "team/b.md")]


# -- regex: a condition on the content of touched files -----------------------------------


def test_regex_matches_a_touched_file_matching_the_globs(repo):
    rule = rules(repo)["react-components"]
    assert rule.extra["continue-regex"] == ("^import React",) and rule.globs == ("**/*.{tsx,jsx}",)
    assert status(repo, "react-components", touched=["gui/src/Button.tsx"]) == (
        "active", ("touched gui/src/Button.tsx", "touched gui/src/Button.tsx matches regex /^import React/"))


def test_regex_without_a_matching_file_is_inactive_with_the_reason(repo):
    assert status(repo, "react-components", touched=["gui/src/theme.tsx"]) == (
        "inactive", ("no touched file's content matches regex /^import React/",))


def test_globs_and_regex_must_hold_for_the_same_file(rule_project):
    rule_project.write({"a.tsx": "export {};\n", "b.txt": "import React\n"})
    write_rules(rule_project, {"x.md": rule_file('globs: "*.tsx"\nregex: "^import React"\n')})
    assert status(rule_project, "x", touched=["a.tsx", "b.txt"])[0] == "inactive"
    assert status(rule_project, "x", touched=["b.txt"]) == (
        "inactive", ("no touched path matches globs *.tsx",
                     "no touched file matching its globs to search for regex /^import React/"))


def test_regex_without_globs_searches_every_touched_file(rule_project):
    rule_project.write({"notes.txt": "nothing\n", "lib/util.py": "def x():\n    # TODO: remove\n"})
    write_rules(rule_project, {"todo.md": rule_file('regex: ["FIXME", "TODO:"]\n')})
    assert status(rule_project, "todo", touched=["notes.txt", "lib/util.py"]) == (
        "active", ("touched lib/util.py matches regex /TODO:/",))
    assert status(rule_project, "todo")[1] == ("no touched file to search for regex /FIXME/, /TODO:/",)


def test_regex_is_continues_javascript_regexp_without_flags(rule_project):
    rule_project.write({"a.ts": "// header\nimport x from 'y';\n"})
    write_rules(rule_project, {"anchored.md": rule_file('regex: "^import"\n'),
                               "named.md": rule_file('regex: "(?<kw>import) \\\\k<kw>?x"\n')})
    # No multiline flag, as `new RegExp(pattern)`: ^ is the start of the file.
    assert status(rule_project, "anchored", touched=["a.ts"])[0] == "inactive"
    assert status(rule_project, "named", touched=["a.ts"])[0] == "active"  # JS named groups compile


def test_a_file_outside_the_project_is_not_read(rule_project, record, tmp_path):
    outside = tmp_path / "elsewhere.ts"
    outside.write_text("import React\n")
    write_rules(rule_project, {"x.md": rule_file('regex: "import React"\n')})
    record.clear()
    verdict = status(rule_project, "x", touched=[str(outside)])
    assert verdict[0] == "inactive" and str(outside) not in record
    assert verdict[1][1] == f"{outside} not read: only files inside the working directory are searched"


def test_a_symlink_leading_out_of_the_project_is_not_followed(rule_project, record, tmp_path):
    outside = tmp_path / "secret.ts"
    outside.write_text("import React\n")
    os.symlink(outside, rule_project.cwd / "link.ts")
    write_rules(rule_project, {"x.md": rule_file('regex: "import React"\n')})
    record.clear()
    verdict = status(rule_project, "x", touched=["link.ts"])
    assert verdict[0] == "inactive" and str(outside) not in record
    assert "link.ts not read: symbolic link" in verdict[1][1] and "leads outside the working directory" in verdict[1][1]


def test_a_fifo_is_never_opened(rule_project):
    os.mkfifo(rule_project.cwd / "pipe.ts")
    write_rules(rule_project, {"x.md": rule_file('regex: "x"\n')})
    assert status(rule_project, "x", touched=["pipe.ts"])[1][1] == "pipe.ts not read: not a regular file"


def test_a_catastrophic_pattern_times_out_and_counts_as_no_match(rule_project):
    rule_project.write({"long.txt": "a b " * 2000 + "!\n"})
    write_rules(rule_project, {"slow.md": rule_file('regex: "(\\\\w+\\\\s?)+$"\n')})
    # The reason proves the search was stopped by its time limit, not run to the end.
    verdict = status(rule_project, "slow", touched=["long.txt"])
    assert verdict == ("inactive", (
        "no touched file's content matches regex /(\\w+\\s?)+$/",
        "regex /(\\w+\\s?)+$/ took over 0.1 s on long.txt (catastrophic backtracking?), so it counts as no "
        "match — simplify its nested or overlapping repetitions"))


def test_only_the_head_of_a_big_file_is_searched(rule_project):
    rule_project.write({"big.txt": "x" * continue_rules.READ_BYTES + "NEEDLE\n", "small.txt": "NEEDLE\n"})
    write_rules(rule_project, {"x.md": rule_file('regex: "NEEDLE"\n')})
    assert status(rule_project, "x", touched=["big.txt"])[0] == "inactive"
    assert status(rule_project, "x", touched=["small.txt"])[0] == "active"


def test_at_most_max_files_are_searched_per_rule(rule_project):
    names = [f"f{i:02d}.txt" for i in range(continue_rules.MAX_FILES + 2)]
    rule_project.write({name: "plain\n" for name in names} | {names[-1]: "NEEDLE\n"})
    write_rules(rule_project, {"x.md": rule_file('regex: "NEEDLE"\n')})
    assert status(rule_project, "x", touched=names)[1][1] == f"2 more touched files not searched (at most {continue_rules.MAX_FILES})"


def test_an_edited_file_is_searched_again(rule_project):
    path = rule_project.cwd / "a.ts"
    path.write_text("plain\n")
    write_rules(rule_project, {"x.md": rule_file('regex: "NEEDLE"\n')})
    assert status(rule_project, "x", touched=["a.ts"])[0] == "inactive"
    path.write_text("NEEDLE here\n")
    assert status(rule_project, "x", touched=["a.ts"])[0] == "active"


def test_no_file_content_is_read_for_an_untrusted_project(rule_project, record):
    rule_project.write({"a.ts": "import React\n"})
    write_rules(rule_project, {"x.md": rule_file('regex: "import React"\n')}, home=True)
    record.clear()
    assert status(rule_project, "x", touched=["a.ts"], trusted=False) == (
        "inactive", ("the project is not trusted, so no file content is read for regex",))
    assert str(rule_project.cwd / "a.ts") not in record


# -- global rules, switching off ----------------------------------------------------------


def test_global_rules_are_global_and_load_for_an_untrusted_project(repo):
    write_rules(repo, {"mine.md": "Answer briefly.\n"}, home=True)
    found = discover(repo, trusted=False).rules
    assert [(r.id, r.source, r.file.plugin) for r in found] == [("mine", "global", "continue")]


def test_working_in_home_lists_the_shared_folder_once(rule_project):
    write_rules(rule_project, {"mine.md": "Answer briefly.\n"}, home=True)
    found = rule_project.engine().discover(str(rule_project.home), True).rules
    assert [(r.id, r.source) for r in found] == [("mine", "project")]


def test_from_a_subfolder_the_roots_rules_are_named_not_read(repo, record):
    record.clear()
    found = discover(repo, repo.cwd / "gui")
    assert found.rules == () and [p for p in record if p.startswith(str(repo.cwd / RULES) + "/")] == []
    assert [(w.code, w.path, w.plugin) for w in found.warnings] == [("cwd-only", str(repo.cwd / RULES), "continue")]


def test_untrusted_project_reads_no_project_file(repo):
    assert discover(repo, trusted=False).rules == ()


def test_import_none_reads_nothing_not_even_a_stat(repo, record):
    write_rules(repo, {"mine.md": "x\n"}, home=True)
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert discover(repo).rules == ()
    assert [p for p in record if ".continue" in p] == []


def test_import_list_and_plugin_blocking(repo):
    repo.env["PI_RULES_IMPORT"] = "kiro"
    assert rules(repo) == {}
    repo.env["PI_RULES_IMPORT"] = "continue"
    assert "colors" in rules(repo)
    assert rules(repo, blocked=["continue"]) == {}


def test_read_rule_reaches_an_on_demand_rule(repo):
    engine = repo.engine()
    reading = engine.read_rule(Facts(cwd=str(repo.cwd)), "dev-data-guide.md")
    assert reading.body is not None and reading.body.startswith("\n# Continue Development Data (Dev Data) Guide")


# -- errors -------------------------------------------------------------------------------


def test_a_regex_that_cannot_compile_is_invalid_value_at_parse_time(rule_project):
    write_rules(rule_project, {"x.md": rule_file('regex: ["ok", "(unclosed"]\n')})
    assert rules(rule_project) == {}
    [(kind, path, message, plugin)] = errors(rule_project)
    assert (kind, path, plugin) == ("invalid-value", ".continue/rules/x.md", "continue")
    assert message.startswith("regex: pattern '(unclosed' is not a valid regular expression (missing )")


@pytest.mark.parametrize("front, message", [
    ("regex: 7\n", 'regex must be a string or a list of strings, got the number 7; write regex: "^import React"'),
    ("regex: []\n", 'regex names no pattern; write regex: "^import React" or remove the key'),
    ("globs: 7\n", 'globs must be a string or a list of strings, got the number 7; write globs: "src/**/*.ts"'),
    ("globs: ' , '\n", 'globs names no pattern; write globs: "src/**/*.ts" or remove the key'),
    ("alwaysApply: sure\n", "alwaysApply must be true or false, got 'sure'; write alwaysApply: true or "
                            "alwaysApply: false"),
    ("name: 3\n", 'name must be text, got the number 3; write name: "…" in quotes'),
    ("invokable: maybe\n", "invokable must be true or false, got 'maybe'; write invokable: true or invokable: false"),
])
def test_a_bad_value_of_a_key_continue_reads_is_invalid_value(rule_project, front, message):
    write_rules(rule_project, {"x.md": rule_file(front)})
    assert rules(rule_project) == {}
    assert errors(rule_project) == [("invalid-value", ".continue/rules/x.md", message, "continue")]


def test_broken_yaml_is_yaml_syntax(rule_project):
    write_rules(rule_project, {"x.md": rule_file("globs: **/*.ts\n")})
    [(kind, _, message, _)] = errors(rule_project)
    assert kind == "yaml-syntax" and 'quote the value: globs: "**/*.ts"' in message


# -- the command line ---------------------------------------------------------------------


def test_cli_list_json_and_report(repo, cli):
    code, out = cli(repo, "--json", "list")
    by_rule = {r["id"]: r for r in json.loads(out)["rules"]}
    assert code == 0 and by_rule["colors"]["plugin"] == "continue" and by_rule["dev-data-guide"]["load"] == "on-demand"
    code, out = cli(repo, "report", "--touched", "gui/src/Button.tsx")
    assert ("active: react-components — .continue/rules/react-components.md (project) — touched gui/src/Button.tsx; "
            "touched gui/src/Button.tsx matches regex /^import React/") in out


def test_cli_check_names_the_file_and_the_fix(rule_project, cli):
    write_rules(rule_project, {"x.md": rule_file('regex: "(unclosed"\n')})
    code, out = cli(rule_project, "check")
    assert code == 1 and out.startswith("invalid-value .continue/rules/x.md: regex: pattern '(unclosed' is not a valid")


# -- whatever the file says ---------------------------------------------------------------

KEYS = ["alwaysApply", "globs", "regex", "description", "name", "invokable", "x"]
VALUES = ["true", "false", '"true"', "", "~", "7", "[]", "[a, 7]", "{a: b}", '"**/*.ts"', "**/*.ts", '"(unclosed"',
          '"(?<n>a)\\\\k<n>"', '["^a", "b$"]', '"[z-a]"', '"a{2,1}"', '"(?P<x>"', "'*'", "[" * 40]
LINES = st.one_of(st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(KEYS), st.sampled_from(VALUES)),
                  st.text(max_size=20))
TEXTS = st.one_of(
    st.builds(lambda lines, closed, body: "---\n" + "\n".join(lines) + ("\n---\n" if closed else "\n") + body,
              st.lists(LINES, max_size=6), st.booleans(), st.text(max_size=60)),
    st.text(max_size=200),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_any_rule_text_becomes_a_rule_or_errors_never_an_exception(text):
    rule_file_ = RuleFile("/nowhere/.continue/rules/x.md", "/nowhere/.continue/rules", "x.md", "/nowhere",
                          "continue", "continue", "project", (0, 0, "", "x.md"))  # type: ignore[arg-type]
    result = continue_rules.pi_rules_parse(rule_file=rule_file_, text=text, extra_keys={})
    assert isinstance(result, ParseResult) and (result.rule is not None or result.errors)
    assert all(e.path == rule_file_.path and e.message for e in result.errors)
