"""The budget made visible (issue 15 items 1 and 2): the report says what the model gets
and what it misses, ``overflow = "index"`` lists what the budget leaves out, and
``explain`` and the mute confirmation leave nothing unexplained.

Goldens refresh with ``PI_RULES_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from golden_files import check_golden
from rules_core.model import Rule, RuleFile
from rules_core.select import admissions, select
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts import Session
from rules_hosts.shapes import evaluation_json, explanation_json

LIMIT = 100
SHARED = "---\ndescription: Shared conventions\nalwaysApply: true\n---\nShared text, mirrored for two tools.\n"


@pytest.fixture
def budget_project(rule_project):
    """Pinned rules from three plugins and both sources that do not all fit ``LIMIT``, an
    on-demand rule with no condition (Cursor's "agent requested") and a mirrored body."""
    rule_project.write({
        ".pi/rules/security.md": rule_text("Never log secrets.", description="Secrets", alwaysApply=True,
                                           priority=10, enforcement="enforce"),
        ".pi/rules/huge.md": rule_text("h" * 400, description="Architecture overview", alwaysApply=True),
        ".pi/rules/style.md": rule_text("s" * 200, description="Code style", globs=["src/**"]),
        ".cursor/rules/general.mdc": "---\ndescription: General guidance\nalwaysApply: true\n---\n" + "g" * 160 + "\n",
        ".cursor/rules/reviews.mdc": "---\ndescription: How to review a pull request\n---\nCheck the tests first.\n",
        ".cursor/rules/shared.mdc": SHARED,
        ".windsurf/rules/shared.md": SHARED.replace("alwaysApply: true", "trigger: always_on"),
        "src/app.ts": "x",
    })
    rule_project.write_global({"personal.md": rule_text("Answer briefly.", description="Personal", alwaysApply=True)})
    return rule_project


def evaluate(project, **facts):
    engine = project.engine()
    facts.setdefault("max_tokens", LIMIT)
    return engine, engine.evaluate(project.facts(touched=["src/app.ts"], **facts))


def shown(project, text: str) -> str:
    return text.replace(str(project.cwd.parent), "<tmp>")


def report(project, **facts) -> str:
    engine, evaluation = evaluate(project, **facts)
    return shown(project, engine.hooks.render("report", {"evaluation": evaluation, "cwd": str(project.cwd)}))


def by_id(evaluation):
    return {o.rule.id: o for o in evaluation.outcomes}


# -- the report ----------------------------------------------------------------------


def test_report_with_the_default_overflow_matches_golden(budget_project):
    check_golden("report-budget.txt", report(budget_project))


def test_report_with_overflow_index_matches_golden(budget_project):
    check_golden("report-budget-index.txt", report(budget_project, overflow="index"))


def test_report_json_matches_golden(budget_project):
    _, evaluation = evaluate(budget_project, overflow="index")
    check_golden("report-budget.json", shown(budget_project, json.dumps(evaluation_json(evaluation), indent=2) + "\n"))


def test_every_rule_line_carries_its_description_and_size(budget_project):
    _, evaluation = evaluate(budget_project)
    text = report(budget_project)
    for outcome in evaluation.outcomes:
        size = f"{outcome.tokens} token{'s' if outcome.tokens != 1 else ''}"
        assert f"  {outcome.rule.description} · {size}" in text, outcome.rule.id


def test_a_dropped_rule_says_its_size_the_room_left_the_limit_and_the_fixes(budget_project):
    text = report(budget_project)
    lines = text.splitlines()
    head = lines.index("dropped: huge — .pi/rules/huge.md (project) — budget")
    assert lines[head + 1] == "  Architecture overview · 100 tokens, not sent"
    assert lines[head + 2] == "  over budget: needs 100 tokens, 95 of 100 left when selection reached it"
    fix = lines[head + 3]
    assert fix.startswith("  fix: raise PI_RULES_MAX_TOKENS or max_tokens in .pi/rules.toml (")
    assert "`load: on-demand` in its frontmatter" in fix and 'overflow = "index" in .pi/rules.toml' in fix


def test_the_limit_the_fix_names_really_keeps_every_pinned_rule(budget_project):
    _, evaluation = evaluate(budget_project)
    fits = sum(o.tokens for o in evaluation.outcomes if o.status == "active" or o.cause == "budget")
    assert f"({fits} fits every matched pinned rule)" in report(budget_project)
    _, roomy = evaluate(budget_project, max_tokens=fits)
    assert not [o for o in roomy.outcomes if o.cause == "budget"]


def test_an_imported_rule_is_not_told_to_set_a_load_key_it_does_not_have(budget_project):
    engine, evaluation = evaluate(budget_project, max_tokens=20)
    text = engine.hooks.render("report", {"evaluation": evaluation, "cwd": str(budget_project.cwd)})
    general = text.split("dropped: general — ", 1)[1].split("\ndropped:", 1)[0]
    assert "fix: raise PI_RULES_MAX_TOKENS" in general and "load: on-demand" not in general


def test_summary_gives_pinned_tokens_per_source_and_plugin(budget_project):
    _, evaluation = evaluate(budget_project)
    text = report(budget_project)
    sent = evaluation.budget_used
    assert f"pinned: {sent} of " in text
    sources = evaluation_json(evaluation)["pinned"]["sources"]
    assert {(s["source"], s["plugin"]) for s in sources} >= {("project", "native"), ("project", "cursor")}
    assert sum(s["sent"] for s in sources) == sent
    for row in sources:
        label = row["source"] if row["plugin"] == row["source"] else f"{row['source']} ({row['plugin']})"
        assert f"  {label}: {row['sent']} of {row['matched']} tokens" in text


def test_budget_and_section_lines_stay_last_and_a_line_says_what_each_counts(budget_project):
    _, evaluation = evaluate(budget_project)
    lines = report(budget_project).splitlines()
    assert lines[-2:] == [
        f"budget: {evaluation.budget_used}/{LIMIT} estimated tokens",
        f"section: ~{evaluation.section_tokens} tokens",
    ]
    extra = evaluation.section_tokens - evaluation.budget_used
    assert lines[-3] == ("tokens: the budget counts pinned bodies only; the section counts everything sent — "
                         f"bodies, framing, headings, trigger lines and the index (~{extra} more)")


def test_an_on_demand_rule_without_conditions_says_why_it_is_listed(budget_project):
    text = report(budget_project)
    assert ("on-demand: reviews — .cursor/rules/reviews.mdc (project) — "
            "listed in the index; the model fetches it when relevant") in text
    assert "always applies" not in text.split("on-demand: reviews", 1)[1].split("\n", 2)[1]


def test_a_duplicate_names_the_copy_that_is_sent(budget_project):
    _, evaluation = evaluate(budget_project)
    outcomes = by_id(evaluation)
    loser = next(o for o in outcomes.values() if o.cause == "duplicate")
    winner = next(o for o in outcomes.values() if o.rule.body == loser.rule.body and o is not loser)
    assert f"not sent: same body as {winner.rule.id}" in report(budget_project)
    assert evaluation_json(evaluation)["rules"][evaluation.outcomes.index(loser)]["duplicateOf"] == winner.rule.id


def test_a_first_candidate_over_the_limit_says_why_it_is_still_sent(budget_project):
    text = report(budget_project, max_tokens=3)
    assert "  Secrets · 5 tokens in the section (over the limit: the first candidate is always kept)" in text


# -- overflow = "index" --------------------------------------------------------------


def test_overflow_index_lists_every_budget_dropped_rule_with_the_attachment_line(budget_project):
    engine, evaluation = evaluate(budget_project, overflow="index")
    dropped = [o for o in evaluation.outcomes if o.cause == "budget"]
    assert dropped and all(o.status == "dropped" for o in dropped)
    index = evaluation.section.split("## Reference rules available on demand\n\n", 1)[1]
    for outcome in dropped:
        line = engine.hooks.render("index-line", outcome.rule)  # the degraded attachment line
        assert line == f"- {outcome.rule.reference} — {outcome.rule.description} (fetch with the read_rule tool)"
        assert line in index.splitlines()
    assert not [o for o in evaluation.outcomes if o.cause == "duplicate" and o.rule.reference in index]


def test_overflow_index_and_default_sections_match_golden(budget_project):
    _, default = evaluate(budget_project)
    _, indexed = evaluate(budget_project, overflow="index")
    check_golden("section-budget-drop.md", default.section)
    check_golden("section-budget-index.md", indexed.section)
    head = "## Reference rules available on demand\n"
    entries, index = default.section.split(head)
    assert indexed.section.startswith(entries)  # the same entries,
    assert set(index.splitlines()) < set(indexed.section.split(head)[1].splitlines())  # a longer index


def test_default_overflow_is_drop_and_changes_no_byte(budget_project):
    _, implicit = evaluate(budget_project)
    _, explicit = evaluate(budget_project, overflow="drop")
    assert implicit.section == explicit.section
    dropped = {o.rule.file.schema: o.rule.reference in implicit.section for o in implicit.outcomes
               if o.cause == "budget"}
    # RULE-SPEC's own rules follow the setting; another tool's format is named all the same.
    assert dropped == {"v1": False, "windsurf": True}


@pytest.mark.parametrize(("path", "text", "named"), [
    (".github/instructions/big.instructions.md", "---\napplyTo: 'src/**'\n---\n", False),  # RULE-SPEC's importers
    (".claude/rules/big.md", "---\npaths: src/**\n---\n", False),
    (".cursor/rules/big.mdc", "---\ndescription: Big\nglobs: src/**\n---\n", True),
    (".kiro/steering/big.md", "---\ninclusion: fileMatch\nfileMatchPattern: 'src/**'\n---\n", True),
    (".windsurf/rules/big.md", "---\ntrigger: glob\nglobs: src/**\n---\n", True),
    (".clinerules/big.md", "---\npaths: ['src/**']\n---\n", True),
])
def test_a_budget_dropped_rule_is_named_unless_rule_spec_governs_its_format(rule_project, path, text, named):
    """Issue 24: under the default ``overflow = "drop"`` only native rules and the spec's two
    importers' may leave the section unnamed; every other format's tool delivers each rule
    that applies, so its dropped rule gets an index line, and the report says why."""
    rule_project.write({
        ".pi/rules/first.md": rule_text("f" * 200, description="First", alwaysApply=True, priority=5),
        path: text + "Big guidance. " * 40 + "\n",
        "src/app.ts": "x",
    })
    engine, evaluation = evaluate(rule_project, max_tokens=60)
    big = next(o for o in evaluation.outcomes if o.rule.file.path.endswith(path))
    assert big.status == "dropped" and big.cause == "budget"
    line = engine.hooks.render("index-line", big.rule)
    assert (line in evaluation.section.splitlines()) == named
    text_report = report(rule_project, max_tokens=60)
    assert ("never dropped unnamed" in text_report) == named
    assert ('overflow = "index" in .pi/rules.toml' in text_report) == (not named)  # the fix offered


def test_overflow_index_lists_a_dropped_rule_after_the_entries(rule_project):
    rule_project.write({
        ".pi/rules/a.md": rule_text("a" * 40, description="First", alwaysApply=True),
        ".pi/rules/b.md": rule_text("b" * 40, description="Second", alwaysApply=True),
    })
    engine = rule_project.engine()
    evaluation = engine.evaluate(rule_project.facts(max_tokens=10, overflow="index"))
    assert [o.rule.id for o in evaluation.active] == ["a"]
    assert evaluation.section.endswith("- b.md — Second (fetch with the read_rule tool)\n")


def test_report_json_says_what_the_model_gets(budget_project):
    for overflow, expected in (("drop", "none"), ("index", "index")):
        _, evaluation = evaluate(budget_project, overflow=overflow)
        data = evaluation_json(evaluation)
        assert data["overflow"] == overflow
        rules = {r["id"]: r for r in data["rules"]}
        assert (rules["huge"]["delivery"], rules["huge"]["room"], rules["huge"]["cause"]) == (expected, 95, "budget")
        assert rules["security"]["delivery"] == "section" and rules["security"]["room"] is None
        assert rules["reviews"]["delivery"] == "index"
        assert data["pinned"]["sent"] == data["budget"]["used"]


# -- explain -------------------------------------------------------------------------


def test_explain_gives_every_rule_a_reason_and_says_what_the_model_gets(budget_project):
    engine = budget_project.engine()
    explanation = engine.explain(budget_project.facts(), "src/app.ts")
    assert all(entry.reasons for entry in explanation.entries)
    text = engine.hooks.render("explain", {"explanation": explanation, "cwd": str(budget_project.cwd)})
    check_golden("explain-budget.txt", shown(budget_project, text))
    lines = text.splitlines()
    reviews = lines.index("path-independent: reviews — no conditions: it applies wherever the agent works")
    assert lines[reviews + 1] == ("  How to review a pull request · "
                                  "listed in the index; the model fetches it when relevant")
    data = explanation_json(explanation)
    check_golden("explain-budget.json", shown(budget_project, json.dumps(data, indent=2) + "\n"))
    assert {r["id"]: r["load"] for r in data["rules"]}["reviews"] == "on-demand"


# -- mute ----------------------------------------------------------------------------


def test_muting_the_kept_copy_names_the_twin_that_now_applies(budget_project):
    session = Session(budget_project.engine(), str(budget_project.cwd), trusted=True,
                      env={"HOME": str(budget_project.home), "PI_RULES_MAX_TOKENS": "2000"})
    turn = session.before_agent_start("", branch=None)
    outcomes = by_id(turn.evaluation)
    loser = next(o for o in outcomes.values() if o.cause == "duplicate")
    kept = next(o for o in outcomes.values() if o.rule.body == loser.rule.body and o is not loser)
    answer = session.command(f"mute {kept.rule.id}")
    assert answer == (f"muted: {kept.rule.id}\nnote: {loser.rule.id} has the same body and now applies in its "
                      "place; mute it too")
    assert by_id(session.before_agent_start("", branch=None).evaluation)[loser.rule.id].status == "active"
    assert session.command(f"mute {kept.rule.id}") == f"muted: {kept.rule.id}"  # re-muting: nothing new
    assert session.command("mute security") == "muted: security"  # no twin: the one specified line


# -- the replay the report relies on -------------------------------------------------


def _rule(index: int, body: str, priority: int) -> Rule:
    file = RuleFile(f"/p/r{index}.md", "/p", f"r{index}.md", "/p", "native", "v1", "project", (0, 0, "", str(index)))
    return Rule(file=file, description="d", body=body, globs=("a",), priority=priority, id=f"r{index}", index=index)


@given(st.lists(st.tuples(st.integers(1, 60), st.integers(-1, 1)), max_size=12), st.integers(1, 120))
def test_admissions_replay_exactly_what_selection_decided(sizes, limit):
    rules = [_rule(i, f"{i}:" + "x" * size, priority) for i, (size, priority) in enumerate(sizes)]
    cost = {r.id: size for r, (size, _) in zip(rules, sizes)}
    selection = select(rules, limit, lambda r: cost[r.id])
    steps = admissions(list(selection.active) + list(selection.over_budget), limit, lambda r: cost[r.id])
    assert {s.rule.id for s in steps if s.admitted} == {r.id for r in selection.active}
    assert {s.rule.id for s in steps if not s.admitted} == set(selection.dropped)
    for step in steps:
        if not step.admitted:
            assert step.cost > step.room  # it really did not fit the room it met
    assert selection.budget_used == sum(s.cost for s in steps if s.admitted)
