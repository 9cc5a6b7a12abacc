"""Every index line and every reference a rule is shown under reaches that very rule, and
a nested folder's on-demand rules are offered only while the agent works there."""

from __future__ import annotations

import subprocess

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.cli import main

STYLE_A = "---\ndescription: Style of package a\n---\nPackage a uses tabs.\n"
STYLE_B = "---\ndescription: Style of package b\n---\nPackage b uses spaces.\n"


@pytest.fixture
def monorepo(rule_project):
    """Two packages with a nested on-demand Cursor rule of the same name, as in the trial."""
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    rule_project.write({
        "packages/a/.cursor/rules/style.mdc": STYLE_A,
        "packages/b/.cursor/rules/style.mdc": STYLE_B,
        "packages/a/src/x.ts": "",
        "packages/b/src/y.ts": "",
    })
    return rule_project


def _index_lines(section: str) -> list[str]:
    return [line for line in section.splitlines() if line.startswith("- ")]


def test_two_nested_rules_with_one_path_are_indexed_by_references_that_reach_each(monorepo):
    engine = monorepo.engine()
    facts = monorepo.facts(touched=["packages/a/src/x.ts", "packages/b/src/y.ts"])
    section = engine.evaluate(facts).section
    lines = _index_lines(section)
    assert lines == [
        "- style.mdc — Style of package a (fetch with the read_rule tool)",
        "- rule://style-2 — Style of package b (fetch with the read_rule tool)",
    ]
    # Each reference the model sees is answered with the rule it was shown for.
    assert engine.read_rule(facts, "style.mdc").body == "Package a uses tabs.\n"
    assert engine.read_rule(facts, "rule://style-2").body == "Package b uses spaces.\n"


def test_reading_a_shared_path_says_which_other_rules_have_it(monorepo):
    engine = monorepo.engine()
    reading = engine.read_rule(monorepo.facts(), "style.mdc")
    other = monorepo.cwd / "packages/b/.cursor/rules/style.mdc"
    assert reading.note == (
        f"Note: style.mdc also names rule://style-2 ({other}); "
        f"this is {monorepo.cwd / 'packages/a/.cursor/rules/style.mdc'} — ask for rule://<id> to read another"
    )
    assert engine.read_rule(monorepo.facts(), "rule://style-2").note == ""


def test_cli_read_of_a_shared_path_prints_the_body_and_names_the_others_on_stderr(monorepo, capsys):
    code = main(["--cwd", str(monorepo.cwd), "read", "style.mdc"])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out == "Package a uses tabs.\n\n"
    assert "also names rule://style-2" in captured.err


def test_nested_on_demand_rules_are_listed_only_for_paths_in_their_folder(monorepo):
    engine = monorepo.engine()
    only_a = engine.evaluate(monorepo.facts(touched=["packages/a/src/x.ts"]))
    assert _index_lines(only_a.section) == ["- style.mdc — Style of package a (fetch with the read_rule tool)"]
    statuses = {o.rule.id: (o.status, o.reasons) for o in only_a.outcomes}
    assert statuses["style-2"] == (
        "inactive", ("no touched path lies under packages/b/ (this rule belongs to that folder)",)
    )
    nothing = engine.evaluate(monorepo.facts(touched=["README.md"]))
    assert nothing.section == ""


def test_a_folder_rule_stays_readable_wherever_the_agent_works(monorepo):
    engine = monorepo.engine()
    facts = monorepo.facts(touched=["README.md"])
    assert engine.read_rule(facts, "rule://style-2").body == "Package b uses spaces.\n"


def test_on_demand_rules_of_cwd_are_listed_whatever_is_touched(rule_project):
    rule_project.write({".pi/rules/ref.md": rule_text("Text.", description="Reference", load="on-demand",
                                                       alwaysApply=True)})
    section = rule_project.engine().evaluate(rule_project.facts(touched=["deep/down/file.py"])).section
    assert _index_lines(section) == ["- ref.md — Reference (fetch with the read_rule tool)"]


def test_many_files_with_one_name_get_consecutive_ids(rule_project):
    # 2,000 folders each holding .pi/rules/x.md: ids x, x-2 … x-2000, each once.
    rule_project.write({f"p{i:04d}/.pi/rules/x.md": rule_text("X.", alwaysApply=True) for i in range(2000)})
    rules = rule_project.engine().discover(str(rule_project.cwd)).rules
    nested = [r for r in rules if r.file.plugin == "nested"]
    assert [r.id for r in nested] == ["x", *(f"x-{n}" for n in range(2, 2001))]
