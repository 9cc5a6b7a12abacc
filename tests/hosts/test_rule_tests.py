"""`pi-rules test` (issue 17, part 2): declarative rule tests run by the CLI and collected
by pytest through `rules_core.rule_tests.pytest_plugin`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden_files import check_golden
from rules_core.rule_tests.cases import parse_cases
from rules_core.rule_tests.run import run_case_files
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from suite_helpers import cli_process

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "examples" / "demo"

RULES = {
    ".pi/rules/security.md": rule_text("Never log secrets.", description="Secrets", alwaysApply=True, priority=10),
    ".pi/rules/python.md": rule_text("Type every function.", description="Python style", globs=["src/**/*.py"]),
    ".pi/rules/api.md": rule_text("Return { data }.", description="API shape", globs=["src/api/**"], load="on-demand"),
    ".pi/rules/release.md": rule_text("Bug fixes only.", description="Release", branch="release/*"),
    ".pi/rules/big.md": rule_text("Long text. " * 60, description="Big", globs=["docs/**"]),
    ".pi/rules/no-print.md": rule_text(
        "Use the logger.", description="No print", condition="print\\(", scope="tool:edit(*.py), tool:write(*.py)"),
    ".pi/rules/excuses.md": rule_text("No excuses.", description="No excuses", condition="(?i)pre.existing"),
}

PASSING = """\
- name: security is always on
  expect: {active: [security], errors: []}
- name: python style for touched sources
  touched: src/app.py
  expect:
    active: [python]
    not_active: [api, release]
    section_contains: ["## python", "Type every function."]
    tokens_at_most: 200
- name: API rules on demand
  touched: src/api/users.py
  expect: {on_demand: [api]}
- name: release branch
  branch: release/1.0
  expect: {active: [release]}
- name: a tight budget drops the big rule
  touched: docs/guide.md
  env: {PI_RULES_MAX_TOKENS: 20}
  expect: {dropped: [big], active: [security]}
- name: print in a Python edit fires
  text: "print(x)"
  tool: edit
  path: src/app.py
  expect: {fires: [no-print], does_not_fire: [excuses]}
- name: prose about pre-existing bugs fires
  text: "this was a pre-existing problem"
  expect: {fires: [excuses], does_not_fire: [no-print]}
"""

FAILING = """\
- name: security is always on
  expect: {active: [security]}
- name: python style wrongly expected for docs
  touched: docs/guide.md
  expect:
    active: [python, pyhton]
    not_active: [big]
    section_contains: "Type every function."
- name: print in a Markdown edit does not fire
  text: "print(x)"
  tool: edit
  path: README.md
  expect: {fires: [no-print]}
"""

INVALID = """\
- name: typo in a fact
  tuched: src/app.py
  expect: {active: [python]}
- name: typo in an expectation
  expect:
    notActive: [python]
    activ: [security]
- name: expectation beside the facts
  active: [security]
- name: wrong type
  touched: src/app.py
  expect: {tokens_at_most: lots}
- name: fires without text
  expect: {fires: [no-print]}
"""


@pytest.fixture
def project(rule_project):
    rule_project.write(RULES)
    return rule_project


def cli(project, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real `pi-rules`, run where a person would run it (the project folder)."""
    env = {"HOME": str(project.home), "PATH": os.environ.get("PATH", ""), "PYTHONIOENCODING": "utf-8"}
    return cli_process(*args, cwd=cwd or project.cwd, env=env, timeout=120)


def write_tests(project, text: str, name: str = ".pi/rules.test.yaml") -> None:
    make_rules(project.cwd, {name: text})


def run_text(project, text: str):
    """The results of ``text``'s cases, run in-process against the project."""
    read = parse_cases(text, str(project.cwd / ".pi" / "rules.test.yaml"))
    assert read.errors == ()
    return run_case_files(project.engine(), [read], str(project.cwd))


# -- the command: golden outputs -----------------------------------------------------------------


def test_a_passing_run_prints_one_pass_line_per_case_and_exits_0(project):
    write_tests(project, PASSING)
    done = cli(project, "test")
    assert done.returncode == 0, done.stderr
    check_golden("rule-test-pass.txt", done.stdout)


def test_a_failing_run_says_what_differed_with_explain_lines_and_exits_1(project):
    write_tests(project, FAILING)
    done = cli(project, "test")
    assert done.returncode == 1 and done.stderr == ""
    check_golden("rule-test-fail.txt", done.stdout)


def test_json_output_has_the_contract_shape(project):
    write_tests(project, FAILING)
    done = cli(project, "test", "--json")
    assert done.returncode == 1
    check_golden("rule-test-fail.json", done.stdout)
    cases = json.loads(done.stdout)["cases"]
    assert [(c["name"], c["passed"]) for c in cases] == [
        ("security is always on", True), ("python style wrongly expected for docs", False),
        ("print in a Markdown edit does not fire", False)]
    assert cli(project, "test", "--format", "json").stdout == done.stdout


def test_github_format_annotates_the_line_of_each_failing_case(project):
    write_tests(project, FAILING)
    done = cli(project, "test", "--format", "github")
    assert done.returncode == 1
    check_golden("rule-test-github.txt", done.stdout)
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert [a.split(",title=")[0] for a in annotations] == [
        "::error file=.pi/rules.test.yaml,line=3", "::error file=.pi/rules.test.yaml,line=9"]


def test_an_invalid_test_file_is_an_error_with_did_you_mean_never_a_traceback(project):
    write_tests(project, INVALID)
    done = cli(project, "test")
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    check_golden("rule-test-invalid.txt", done.stdout)


def test_broken_yaml_names_the_file_and_line(project):
    write_tests(project, "- name: x\n  expect: {active: [a\n")
    done = cli(project, "test")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.startswith("ERROR .pi/rules.test.yaml:3: invalid YAML")


def test_default_files_are_rules_test_yaml_and_the_tests_folder(project):
    write_tests(project, "- name: from the main file\n  expect: {active: [security]}\n")
    write_tests(project, "- name: from the folder\n  expect: {not_active: [python]}\n", ".pi/tests/more.yaml")
    write_tests(project, "- name: not yaml suffix\n  expect: {active: [nothing]}\n", ".pi/tests/notes.txt")
    done = cli(project, "test")
    assert done.returncode == 0
    assert done.stdout.splitlines()[:2] == ["PASS from the main file", "PASS from the folder"]


def test_files_named_on_the_command_line_replace_the_defaults(project):
    write_tests(project, FAILING)
    write_tests(project, PASSING, "checks/ok.yaml")
    assert cli(project, "test", "checks/ok.yaml").returncode == 0
    missing = cli(project, "test", "checks/nope.yaml")
    assert missing.returncode == 1 and "ERROR checks/nope.yaml: no such file" in missing.stdout


def test_no_test_file_at_all_fails_with_the_fix(project):
    done = cli(project, "test")
    assert done.returncode == 1
    assert "no rule tests found; write .pi/rules.test.yaml" in done.stderr


# -- each expectation kind passes and fails ----------------------------------------------------

KINDS = [
    ("touched: src/app.py\n  expect: {active: [python]}", "touched: docs/a.md\n  expect: {active: [python]}",
     "active: expected python to be active, but it is inactive"),
    ("touched: docs/a.md\n  expect: {not_active: [python]}", "touched: src/a.py\n  expect: {not_active: [python]}",
     "not_active: expected python to be not active, but it is active"),
    ("touched: src/api/u.py\n  expect: {on_demand: [api]}", "expect: {on_demand: [api]}",
     "on_demand: expected api to be on-demand, but it is inactive"),
    ("touched: docs/a.md\n  env: {PI_RULES_MAX_TOKENS: '20'}\n  expect: {dropped: [big]}",
     "touched: docs/a.md\n  expect: {dropped: [big]}", "dropped: expected big to be dropped, but it is active"),
    ("expect: {errors: []}", "expect: {errors: [yaml-syntax]}", "errors: expected an error yaml-syntax, found none"),
    ("expect: {section_contains: [Never log secrets.]}", "expect: {section_contains: [Type every function.]}",
     "section_contains: the section does not contain 'Type every function.'"),
    ("expect: {tokens_at_most: 500}", "expect: {tokens_at_most: 5}", "tokens_at_most: the section is ~"),
    ("text: print(1)\n  tool: write\n  path: src/a.py\n  expect: {fires: [no-print]}",
     "text: print(1)\n  expect: {fires: [no-print]}", "fires: expected no-print to fire, but it did not"),
    ("text: print(1)\n  expect: {does_not_fire: [no-print]}",
     "text: print(1)\n  tool: write\n  path: src/a.py\n  expect: {does_not_fire: [no-print]}",
     "does_not_fire: expected no-print not to fire, but it fired"),
]


@pytest.mark.parametrize(("passing", "failing", "problem"), KINDS, ids=[k[2].split(":")[0] for k in KINDS])
def test_each_expectation_kind_passes_and_fails(project, passing, failing, problem):
    report = run_text(project, f"- name: pass\n  {passing}\n- name: fail\n  {failing}\n")
    good, bad = report.results
    assert good.passed, good.problems
    assert not bad.passed and bad.problems[0].startswith(problem), bad.problems


def test_expected_errors_match_kind_and_path_and_unexpected_ones_fail(project):
    project.write({".pi/rules/broken.md": "---\ndescription: x\nversion: 1\nglobs: 3\n---\nBody\n"})
    report = run_text(project, """\
- name: kind and path
  expect: {errors: [{kind: invalid-value, path: .pi/rules/broken.md}]}
- name: wrong path
  expect: {errors: [{kind: invalid-value, path: .pi/rules/other.md}]}
- name: clean is wrong
  expect: {errors: []}
""")
    right, wrong, clean = report.results
    assert right.passed, right.problems
    assert wrong.problems[0] == "errors: expected an error invalid-value at .pi/rules/other.md, found none"
    assert clean.problems[0].startswith("errors: unexpected invalid-value at .pi/rules/broken.md: ")


def test_an_unknown_rule_id_is_a_failure_with_did_you_mean(project):
    (result,) = run_text(project, "- name: typo\n  expect: {active: [securty]}\n").results
    assert result.problems == ("active: no rule 'securty' — did you mean 'security'?",)


def test_stream_failures_say_why_the_rule_did_not_fire(project):
    (result,) = run_text(project, "- name: s\n  text: print(1)\n  expect: {fires: [no-print, python]}\n").results
    assert result.details == (
        "no-print: armed (scope tool:edit(*.py), tool:write(*.py)); it did not fire on this text",
        "python: not a stream rule (it has no condition or astCondition)",
    )


def test_an_unknown_host_is_a_failure_naming_the_known_ones(project):
    (result,) = run_text(project, "- name: h\n  host: claude_code\n  expect: {active: [security]}\n").results
    assert result.problems[0].startswith("host: no host 'claude_code' — did you mean 'claude-code'?")


def test_a_case_env_is_seen_by_that_case_only_and_never_by_the_process(project):
    before = dict(os.environ)
    report = run_text(project, """\
- name: small budget
  touched: docs/a.md
  env: {PI_RULES_MAX_TOKENS: '20'}
  expect: {dropped: [big]}
- name: default budget
  touched: docs/a.md
  expect: {active: [big]}
""")
    assert [r.passed for r in report.results] == [True, True]
    assert dict(os.environ) == before


def test_the_branch_is_only_what_the_case_says_never_gits(project):
    subprocess.run(["git", "init", "-q", "-b", "release/9", str(project.cwd)], check=True)
    (result,) = run_text(project, "- name: no branch given\n  expect: {not_active: [release]}\n").results
    assert result.passed, result.problems


# -- this repository's own example, in CI -----------------------------------------------------


def test_the_demo_rule_tests_pass_in_ci(tmp_path):
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    done = cli_process("--cwd", str(DEMO), "test", cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == f"{len(lines) - 1} passed, 0 failed" and len(lines) > 8


def test_pytest_collects_the_demo_cases_through_the_plugin(tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(DEMO, demo)
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    command = [sys.executable, "-m", "pytest", "-p", "rules_core.rule_tests.pytest_plugin", "-p", "no:cacheprovider", "-q", str(demo)]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    cases = len(parse_cases((DEMO / ".pi" / "rules.test.yaml").read_text(), "demo").cases)
    assert done.returncode == 0, done.stdout
    assert f"{cases} passed" in done.stdout

    # A failing case reads as `pi-rules test` prints it; a broken file is a failing item.
    tests = demo / ".pi" / "tests"
    tests.mkdir()
    (tests / "wrong.yaml").write_text(
        "- name: wrong\n  touched: src/app.ts\n  expect: {not_active: [typescript]}\n- name: typo\n  expct: {}\n")
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "FAIL wrong\n  at demo/.pi/tests/wrong.yaml:1\n" \
           "  - not_active: expected typescript to be not active, but it is active\n  explain:\n" in done.stdout
    assert "ERROR demo/.pi/tests/wrong.yaml:5: case 'typo': unknown key 'expct' — did you mean 'expect'?" in done.stdout
    assert f"2 failed, {cases} passed" in done.stdout


def test_without_the_plugin_pytest_leaves_rule_tests_alone(tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(DEMO, demo)
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(demo)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 5, done.stdout  # no tests collected
