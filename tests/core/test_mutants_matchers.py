"""The matcher plugins, pinned down where mutation testing found them unpinned (issue 32).

Each test is a rule file in a real project and what the evaluation shows for it: status,
reasons and their order, the errors a bad value gives. docs/mutation.md lists the mutants
these kill and the ones left, each explained.
"""

from __future__ import annotations

import pytest

from rules_core.model import Facts
from rules_core.rule_tests.pytest_plugin import rule_text

from suite_helpers import settle_racy_clock
from test_matching import outcome, setup  # the same rule file and outcome helpers


# -- reasons across matchers come in a fixed order: paths, tools, model, branch --------

def test_the_reasons_of_an_active_rule_are_ordered_paths_tools_model_branch(rule_project):
    setup(rule_project, globs=["src/**"], match="touched", tools=["edit"], model="claude-*", branch="main")
    o = outcome(rule_project, touched=["src/a.py"], tools=["edit"], model="claude-x", branch="main")
    assert (o.status, o.reasons) == ("active", ("touched src/a.py", "tool edit", "model claude-x", "branch main"))


def test_the_reasons_of_an_inactive_rule_are_ordered_paths_tools_model_branch(rule_project):
    setup(rule_project, globs=["src/**"], match="touched", tools=["edit"], model="claude-*", branch="main")
    o = outcome(rule_project, touched=["lib/a.py"], tools=["read", "bash"], model="gpt-5", branch="dev")
    assert o.status == "inactive"
    assert o.reasons == (
        "no touched path matches globs src/**",
        "tools mismatch: session tools read, bash include none of the rule's tools edit",
        "model mismatch: session model gpt-5 does not match the rule's model pattern claude-*",
        "branch mismatch: session branch dev does not match the rule's branch pattern main",
    )
    assert o.failed == ("globs", "tools", "model", "branch")


def test_exists_and_intent_reasons_come_before_the_tool(rule_project):
    setup(rule_project, {"src/a.py": "x"}, globs=["src/*.py"], match="exists", tools=["edit"])
    assert outcome(rule_project, tools=["edit"]).reasons == ("exists src/a.py", "tool edit")
    setup(rule_project, globs=["src/*.py"], match="touched", tools=["edit"])
    assert outcome(rule_project, tools=["edit"], prompt="python").reasons == ("intent *.py", "tool edit")


def test_a_matching_model_or_branch_activates_the_rule(rule_project):
    setup(rule_project, model="*sonnet*")
    assert outcome(rule_project, model="claude-sonnet-4").status == "active"
    setup(rule_project, branch="release/*")
    assert outcome(rule_project, branch="release/1.0").status == "active"


def test_without_a_session_branch_a_kept_branch_pattern_is_never_compiled(tmp_path, monkeypatch):
    """A parse kept by an earlier process compiles lazily (as the model test of
    test_kept_parses.py): no branch in the session, nothing to compile."""
    import subprocess

    from rules_core.engine import Engine
    from rules_core.globs.compiled import LazyCompiledRule
    from rules_core.rule_tests.pytest_plugin import make_rules

    repo, home = tmp_path / "repo", tmp_path / "home"
    make_rules(repo, {".pi/rules/b.md": rule_text("b", branch="release/*")})
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    settle_racy_clock(monkeypatch)  # a path changed within the last second is not kept ("racy")
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    Engine(home=str(home), env=env).evaluate(Facts(cwd=str(repo)))  # keeps the parse
    engine = Engine(home=str(home), env=env)
    rule = engine.discover(str(repo)).rules[0]
    assert isinstance(rule.compiled, LazyCompiledRule) and not rule.compiled.compiled_parts
    engine.evaluate(Facts(cwd=str(repo)))
    assert "branch" not in rule.compiled.compiled_parts
    engine.evaluate(Facts(cwd=str(repo), branch="release/1"))  # the positive control
    assert "branch" in rule.compiled.compiled_parts


# -- globs ---------------------------------------------------------------------------

def test_the_mismatch_names_every_glob_and_the_mode(rule_project):
    setup(rule_project, globs=["src/**/*.ts", "lib/*.ts"], match="exists")
    assert outcome(rule_project).reasons == ("no existing path matches globs src/**/*.ts, lib/*.ts",)
    setup(rule_project, globs=["src/**/*.ts", "lib/*.ts"], match="both")
    assert outcome(rule_project).reasons == ("no touched or existing path matches globs src/**/*.ts, lib/*.ts",)


@pytest.mark.parametrize("folder", ["pkg", "LaTeX"])
def test_a_nested_rules_mismatch_names_the_folder_its_globs_are_relative_to(rule_project, folder):
    rule_project.write({f"{folder}/.pi/rules/n.md": rule_text(globs=["src/**"], match="touched")})
    o = outcome(rule_project, "n", touched=["src/a.py"])
    assert o.reasons == (f"no touched path matches globs src/** (relative to {folder})",)
    assert outcome(rule_project, "n", touched=[f"{folder}/src/a.py"]).reasons == (f"touched {folder}/src/a.py",)


def test_a_working_directory_spelled_with_a_trailing_slash_changes_nothing(rule_project):
    setup(rule_project, globs=["src/**"], match="touched")
    evaluation = rule_project.engine().evaluate(rule_project.facts(cwd=str(rule_project.cwd) + "/"))
    assert [o.reasons for o in evaluation.outcomes] == [("no touched path matches globs src/**",)]


def test_an_exists_rule_with_only_absolute_globs_is_judged_without_a_scan(rule_project, tmp_path):
    outside = tmp_path / "shared"
    setup(rule_project, globs=[f"{outside}/**"], match="exists")
    evaluation = rule_project.engine().evaluate(rule_project.facts())
    assert evaluation.errors == ()
    assert [(o.status, o.reasons) for o in evaluation.outcomes] == [
        ("inactive", (f"no existing path matches globs {outside}/**",))]


def test_language_intent_probes_a_lower_case_name_with_one_extension(rule_project):
    """`*([a-z_]).py` takes `intent.py`, not `INTENT.py` or `intent.*.py`."""
    setup(rule_project, globs=["scripts/*([a-z_]).py"], match="touched")
    assert outcome(rule_project, prompt="python").reasons == ("intent *.py",)


# -- keywords --------------------------------------------------------------------------

def keyword_rule(project, keyword):
    setup(project, globs=["docs/**"], match="touched", keywords=[keyword])


@pytest.mark.parametrize("keyword, prompt, active", [
    ("lint", "please refactor", False),           # absent
    ("lint", "linting the code", False),          # a longer word only
    ("lint", "the pre_lint hook", False),         # `_` is a word character
    ("lint", "lint the linter", True),            # the first of several is whole
    ("lint", "linter then lint", True),           # a later one is whole
    ("lint", "linter lint linters", True),        # the middle one of three
    (".net", "port asp.net apps", True),          # starts with a non-word character
    ("c#", "move to C#12", True),                 # ends with a non-word character
    ("clang++", "build with clang++17", True),
])
def test_a_keyword_counts_as_a_whole_word_only(rule_project, keyword, prompt, active):
    keyword_rule(rule_project, keyword)
    o = outcome(rule_project, prompt=prompt)
    assert o.status == ("active" if active else "inactive")
    assert o.reasons == (("intent docs/**",) if active else ("no touched path matches globs docs/**",))


# -- agents ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, message", [
    (3, "agents: must be a list of agent names or globs, e.g. agents: [main, reviewer]"),
    ([], "agents: names no agent; write e.g. agents: [main] or remove the key"),
    (["!"], "agents: agent pattern '!' cannot be used: empty pattern"),
])
def test_a_bad_agents_value_says_how_to_write_it(rule_project, value, message):
    setup(rule_project, alwaysApply=True, agents=value)
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [(e.kind, e.message) for e in errors] == [("invalid-value", message)]


def test_a_list_item_may_hold_several_comma_separated_agents(rule_project):
    setup(rule_project, alwaysApply=True, agents=["main,reviewer"])
    assert outcome(rule_project, agent="reviewer").status == "active"
    assert outcome(rule_project, agent="writer").status == "inactive"


def test_an_empty_agent_is_the_main_session(rule_project):
    setup(rule_project, alwaysApply=True, agents=["main"])
    assert outcome(rule_project, agent="").status == "active"


def test_sub_takes_every_named_sub_agent(rule_project):
    setup(rule_project, alwaysApply=True, agents=["sub"])
    assert outcome(rule_project, agent="helper").status == "active"
    assert outcome(rule_project, agent="main").reasons == (
        "agent mismatch: session agent main is not one of the rule's agents sub",)


# -- folder scope ----------------------------------------------------------------------

def folder_rule(project, below="", folder="pkg"):
    project.write({f"{below}{folder}/.pi/rules/n.md": rule_text("Package notes.", load="on-demand", tools=["read"])})


def test_a_folder_rule_is_listed_only_for_paths_in_its_folder_with_reasons_in_order(rule_project):
    folder_rule(rule_project)
    o = outcome(rule_project, "n", touched=["pkg/src/a.py"], tools=["read"])
    assert (o.status, o.reasons) == ("on-demand", ("touched pkg/src/a.py in pkg/", "tool read"))
    o = outcome(rule_project, "n", touched=["lib/a.py", "pkgx/a.py"], tools=["bash"])
    assert (o.status, o.failed) == ("inactive", ("folder", "tools"))
    assert o.reasons == ("no touched path lies under pkg/ (this rule belongs to that folder)",
                         "tools mismatch: session tools bash include none of the rule's tools read")
    assert outcome(rule_project, "n", touched=["pkg"], tools=["read"]).status == "on-demand"


def test_a_folder_rule_is_scoped_the_same_from_a_relative_working_directory(rule_project, monkeypatch):
    folder_rule(rule_project)
    monkeypatch.chdir(rule_project.cwd.parent)
    o = outcome(rule_project, "n", cwd=rule_project.cwd.name, touched=["lib/a.py"], tools=["read"])
    assert o.reasons == ("no touched path lies under pkg/ (this rule belongs to that folder)",)


def test_folders_whose_names_end_in_x_are_scoped_too(rule_project):
    folder_rule(rule_project, below="LaTeX/", folder="TeX")
    cwd = str(rule_project.cwd / "LaTeX")
    o = outcome(rule_project, "n", cwd=cwd, touched=["lib/a.py"], tools=["read"])
    assert o.reasons == ("no touched path lies under TeX/ (this rule belongs to that folder)",)
    assert outcome(rule_project, "n", cwd=cwd, touched=["TeX/a.tex"], tools=["read"]).reasons == (
        "touched TeX/a.tex in TeX/", "tool read")


def test_the_working_directorys_own_and_global_on_demand_rules_are_not_folder_scoped(rule_project):
    rule_project.write({".pi/rules/here.md": rule_text("Here.", load="on-demand", tools=["read"])})
    rule_project.write_global({"mine.md": rule_text("Mine.", load="on-demand", tools=["read"])})
    evaluation = rule_project.engine().evaluate(rule_project.facts(touched=["lib/a.py"], tools=["read"]))
    assert {o.rule.id: (o.status, o.reasons) for o in evaluation.outcomes} == {
        "here": ("on-demand", ("tool read",)), "mine": ("on-demand", ("tool read",))}


def test_folder_names_ending_in_a_space_are_scoped_by_their_exact_names(rule_project):
    folder_rule(rule_project, below="my project /", folder="pkg ")
    cwd = str(rule_project.cwd / "my project ")
    o = outcome(rule_project, "n", cwd=cwd, touched=["pkg/a.py"], tools=["read"])
    assert o.reasons == ("no touched path lies under pkg / (this rule belongs to that folder)",)
    assert outcome(rule_project, "n", cwd=cwd, touched=["pkg /a.py"], tools=["read"]).status == "on-demand"
