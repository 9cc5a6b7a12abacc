"""``agents:`` scopes rules to agents (issue 6 item 4): excluded from every bucket and read_rule."""

from __future__ import annotations

import pytest

from rules_hosts import Session
from rules_hosts.cli import main
from rules_core.rule_tests.pytest_plugin import rule_text


def statuses(project, agent="main", **facts):
    evaluation = project.engine().evaluate(project.facts(agent=agent, **facts))
    return {o.rule.id: (o.status, o.reasons) for o in evaluation.outcomes}


@pytest.fixture
def scoped(rule_project):
    rule_project.write({
        ".pi/rules/main-only.md": rule_text("Main body.", alwaysApply=True, agents=["main"]),
        ".pi/rules/reviewers.md": rule_text("Review body.", alwaysApply=True, agents="Review*, sub"),
        ".pi/rules/everyone.md": rule_text("Everyone.", alwaysApply=True),
        ".pi/rules/ondemand.md": rule_text("On demand.", globs=["**"], load="on-demand", agents=["reviewer"]),
    })
    return rule_project


def test_main_session_sees_main_rules_and_not_sub_agent_rules(scoped):
    result = statuses(scoped, touched=["a"])
    assert result["main-only"][0] == "active" and result["everyone"][0] == "active"
    assert result["reviewers"] == (
        "inactive", ("agent mismatch: session agent main is not one of the rule's agents review*, sub",))
    assert result["ondemand"][0] == "inactive"


def test_agent_globs_are_case_insensitive_and_sub_names_an_unnamed_sub_agent(scoped):
    assert statuses(scoped, agent="ReviewerBot")["reviewers"][0] == "active"
    assert statuses(scoped, agent="sub")["reviewers"][0] == "active"
    assert statuses(scoped, agent="sub")["main-only"][0] == "inactive"  # alwaysApply excluded too


def test_excluded_rules_join_no_bucket_and_no_section(scoped):
    evaluation = scoped.engine().evaluate(scoped.facts(agent="sub", touched=["a"]))
    assert "Main body." not in evaluation.section and "Review body." in evaluation.section
    assert "ondemand.md" not in evaluation.section


def test_read_rule_cannot_reach_a_rule_scoped_to_other_agents(scoped, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(scoped.home))
    assert main(["--cwd", str(scoped.cwd), "read", "ondemand.md"]) == 1
    assert main(["--cwd", str(scoped.cwd), "read", "ondemand.md", "--agent", "reviewer"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("On demand.\n")
    main_session = Session(scoped.engine(), str(scoped.cwd), trusted=True)
    assert main_session.read_rule({"path": "rule://ondemand"}).startswith("Unknown rule: rule://ondemand")
    reviewer = Session(scoped.engine(), str(scoped.cwd), trusted=True, agent="reviewer")
    assert reviewer.read_rule({"path": "rule://ondemand"}) == "On demand."


def test_cli_agent_fact(scoped, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(scoped.home))
    main(["--cwd", str(scoped.cwd), "render", "--no-branch", "--agent", "sub"])
    out = capsys.readouterr().out
    assert "## reviewers" in out and "## main-only" not in out


@pytest.mark.parametrize("value, needle", [(3, "must be a list"), ([], "names no agent"), (" , ", "names no agent")])
def test_bad_agents_value_is_invalid_value(rule_project, value, needle):
    rule_project.write({".pi/rules/r.md": rule_text(alwaysApply=True, agents=value)})
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [e.kind for e in errors] == ["invalid-value"] and needle in errors[0].message


def test_blocking_the_plugin_makes_agents_an_unknown_key_again(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(alwaysApply=True, agents=["main"])})
    errors = rule_project.engine(blocked=["agent-scope"]).discover(str(rule_project.cwd)).errors
    assert [e.kind for e in errors] == ["unknown-key"]


def test_imported_rules_keep_and_honour_the_peers_agents_key(rule_project):
    rule_project.write({".cursor/rules/sub.mdc": "---\nalwaysApply: true\nagents: [reviewer]\n---\nCursor sub rule.\n"})
    assert statuses(rule_project)["sub"][0] == "inactive"
    assert statuses(rule_project, agent="reviewer")["sub"][0] == "active"
