"""A rule's compiled globs (rules_core.globs.compiled), pinned where mutation testing
found them unpinned (issue 32): the caps on one rule's globs and their reports, which
globs count for paths, negation and intent, and what a bad pattern costs the rest.
"""

from __future__ import annotations

from rules_core.globs.compiled import MAX_GLOBS, RULE_REGEX_BUDGET, compile_rule
from rules_core.rule_tests.pytest_plugin import rule_text


def outcome(project, rule_id="r", **facts):
    evaluation = project.engine().evaluate(project.facts(**facts))
    return next(o for o in evaluation.outcomes if o.rule.id == rule_id), evaluation.errors


def test_globs_past_the_thousandth_are_reported_and_never_match(rule_project):
    globs = [f"dir{i}/**" for i in range(MAX_GLOBS + 1)]
    rule_project.write({".pi/rules/r.md": rule_text(globs=globs, match="touched")})
    o, errors = outcome(rule_project, touched=[f"dir{MAX_GLOBS - 1}/a"])
    assert o.status == "active"
    assert [(e.kind, e.message) for e in errors] == [("invalid-value", (
        "the rule has 1,001 globs, over the limit of 1,000; only the first 1,000 are used — "
        "split it into several rules"))]
    assert outcome(rule_project, touched=[f"dir{MAX_GLOBS}/a"])[0].status == "inactive"


def test_globs_past_the_rules_regex_budget_are_reported_and_never_match():
    heavy = "src/" + "[a]" * 3000 + "/*.ts"  # ~75,000 characters of regex each
    compiled, problems = compile_rule([heavy] * 7 + [heavy.replace("src/", "lib/")] * 2, None, None)
    assert len(compiled.globs.positives) == 7
    assert problems == [
        f"glob {heavy.replace('src/', 'lib/')!r} and the 1 after it cannot be used: the rule's globs together "
        f"are too large (over {RULE_REGEX_BUDGET:,} characters compiled); split it into several rules"]
    assert {text[:4] for text in compiled.globs.positive_texts} == {"src/"}  # the lib/ ones are left out


def test_a_bad_glob_is_reported_and_the_others_still_match(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(globs=["!", "src/**"], match="touched")})
    o, errors = outcome(rule_project, touched=["src/a.py"])
    assert o.reasons == ("touched src/a.py",)
    assert [(e.kind, e.message) for e in errors] == [("invalid-value", "glob '!' cannot be used: empty pattern")]


def test_a_bad_model_or_branch_pattern_is_reported_by_key(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(model="", branch="main")})
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [(e.kind, e.message) for e in errors] == [
        ("invalid-value", "model pattern '' cannot be used (it matches nothing): empty pattern")]


def test_negated_and_absolute_globs_are_matched_in_their_own_spelling(rule_project, tmp_path):
    shared = tmp_path / "shared"
    rule_project.write({"pkg/.pi/rules/n.md": rule_text(
        globs=["src/**", f"{shared}/**", "!src/gen/**", f"!{shared}/tmp/**"], match="touched")})
    assert outcome(rule_project, "n", touched=["pkg/src/a.py"])[0].reasons == ("touched pkg/src/a.py",)
    assert outcome(rule_project, "n", touched=[f"{shared}/x.py"])[0].reasons == (f"touched {shared}/x.py",)
    assert outcome(rule_project, "n", touched=["pkg/src/gen/a.py", f"{shared}/tmp/x"])[0].status == "inactive"
    assert outcome(rule_project, "n", touched=["src/a.py"])[0].status == "inactive"  # not below pkg


def test_keyword_intent_names_a_glob_in_any_spelling_of_it(rule_project):
    rule_project.write({
        ".pi/rules/k.md": rule_text(globs=["./db//*.sql"], match="touched", keywords=["migration"]),
        ".pi/rules/r.md": rule_text(globs=["db/*.sql", "!db/old.sql"], match="touched"),
    })
    assert outcome(rule_project, prompt="a migration")[0].reasons == ("intent ./db//*.sql",)


def test_only_positive_globs_answer_a_language_intent(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(globs=["docs/*.md", "!**/*.py"], match="touched")})
    assert outcome(rule_project, prompt="python")[0].status == "inactive"
    rule_project.write({".pi/rules/r.md": rule_text(globs=["docs/*.md", "tools/*.py"], match="touched")})
    assert outcome(rule_project, prompt="python")[0].reasons == ("intent *.py",)


def test_exactly_the_thousand_globs_allowed_are_no_problem():
    compiled, problems = compile_rule([f"dir{i}/**" for i in range(MAX_GLOBS)], None, None)
    assert problems == [] and len(compiled.globs.positives) == MAX_GLOBS


def test_the_last_segments_kept_for_intent_count_towards_the_rules_budget():
    heavy_name = "src/" + "[a]" * 3000 + ".ts"  # its last segment is as heavy as the glob
    compiled, problems = compile_rule([heavy_name] * 5, None, None)
    assert len(compiled.globs.positives) == 4
    assert problems == [
        f"glob {heavy_name!r} and the 0 after it cannot be used: the rule's globs together are too large "
        f"(over {RULE_REGEX_BUDGET:,} characters compiled); split it into several rules"]


def test_a_bad_branch_pattern_is_reported_by_key(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(model="claude-*", branch="")})
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [(e.kind, e.message) for e in errors] == [
        ("invalid-value", "branch pattern '' cannot be used (it matches nothing): empty pattern")]
