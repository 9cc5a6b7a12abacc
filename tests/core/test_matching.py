"""Activation (RULE-SPEC §5): touched / exists / both, conditions, intent, reasons."""

from __future__ import annotations

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text


def outcome(project, rule_id="r", **facts):
    evaluation = project.engine().evaluate(project.facts(**facts))
    return next(o for o in evaluation.outcomes if o.rule.id == rule_id)


def setup(project, files=None, **keys):
    project.write({".pi/rules/r.md": rule_text(**keys), **(files or {})})


def test_touched_path_activates_and_names_the_first_matching_path(rule_project):
    setup(rule_project, globs=["src/**/*.ts"], match="touched")
    o = outcome(rule_project, touched=["README.md", "src/b.ts", "src/a.ts"])
    assert (o.status, o.reasons) == ("active", ("touched src/b.ts",))


def test_touched_mode_ignores_existing_files(rule_project):
    setup(rule_project, {"src/a.ts": "x"}, globs=["src/**/*.ts"], match="touched")
    o = outcome(rule_project)
    assert o.status == "inactive"
    assert o.reasons == ("no touched path matches globs src/**/*.ts",)


def test_exists_mode_activates_on_a_file_on_disk_and_ignores_touched(rule_project):
    setup(rule_project, {"src/z.ts": "x", "src/a.ts": "x"}, globs=["src/**/*.ts"], match="exists")
    assert outcome(rule_project).reasons == ("exists src/a.ts",)
    rule_project.write({".pi/rules/r.md": rule_text(globs=["lib/**"], match="exists")})
    o = outcome(rule_project, touched=["lib/x.py"])
    assert o.status == "inactive"
    assert o.reasons == ("no existing path matches globs lib/** (touched lib/x.py matches, but match is exists)",)


def test_both_prefers_touched_then_exists(rule_project):
    setup(rule_project, {"src/a.ts": "x"}, globs=["src/**/*.ts"])
    assert outcome(rule_project, touched=["src/new.ts"]).reasons == ("touched src/new.ts",)
    assert outcome(rule_project).reasons == ("exists src/a.ts",)


def test_exists_scan_skips_git_and_node_modules(rule_project):
    setup(rule_project, {".git/x.ts": "x", "node_modules/p/x.ts": "x"}, globs=["**/*.ts"], match="exists")
    assert outcome(rule_project).status == "inactive"


def test_negations_subtract_from_positive_matches(rule_project):
    setup(rule_project, globs=["src/**/*.ts", "!src/**/*.test.ts"], match="touched")
    assert outcome(rule_project, touched=["src/a.test.ts"]).status == "inactive"
    assert outcome(rule_project, touched=["src/a.test.ts", "src/a.ts"]).reasons == ("touched src/a.ts",)


def test_only_negations_match_nothing(rule_project):
    setup(rule_project, {"src/a.ts": "x"}, globs=["!src/**/*.test.ts"])
    assert outcome(rule_project, touched=["src/a.ts"]).status == "inactive"


def test_dotfiles_match_star_and_globstar(rule_project):
    setup(rule_project, globs=["**/*.yml"], match="touched")
    assert outcome(rule_project, touched=[".github/workflows/ci.yml"]).status == "active"


def test_touched_paths_are_normalised_and_absolute_inside_cwd_become_relative(rule_project):
    setup(rule_project, globs=["src/*.ts"], match="touched")
    absolute = str(rule_project.cwd / "src" / "a.ts")
    assert outcome(rule_project, touched=[absolute]).reasons == ("touched src/a.ts",)
    assert outcome(rule_project, touched=["./src//b.ts"]).reasons == ("touched src/b.ts",)


def test_path_outside_cwd_is_matched_absolute(rule_project):
    setup(rule_project, globs=["/opt/shared/**"], match="touched")
    assert outcome(rule_project, touched=["/opt/shared/x.py"]).reasons == ("touched /opt/shared/x.py",)
    setup(rule_project, globs=["src/**"], match="touched")
    assert outcome(rule_project, touched=["/opt/src/x.py"]).status == "inactive"


def test_tools_condition_is_anded_and_names_the_tool(rule_project):
    setup(rule_project, globs=["src/**"], match="touched", tools=["edit", "write"])
    o = outcome(rule_project, touched=["src/a"], tools=["read", "write"])
    assert (o.status, o.reasons) == ("active", ("touched src/a", "tool write"))
    o = outcome(rule_project, touched=["src/a"], tools=["read"])
    assert o.status == "inactive"
    assert o.reasons == ("tools mismatch: session tools read include none of the rule's tools edit, write",)


def test_model_is_a_flat_case_sensitive_glob_with_exact_mismatch_reason(rule_project):
    setup(rule_project, model="*sonnet*")
    assert outcome(rule_project, model="claude-sonnet-4").reasons == ("model claude-sonnet-4",)
    o = outcome(rule_project, model="claude-SONNET-4")
    assert o.reasons == (
        "model mismatch: session model claude-SONNET-4 does not match the rule's model pattern *sonnet*",
    )
    assert outcome(rule_project).reasons == (
        "model mismatch: session model absent does not match the rule's model pattern *sonnet*",
    )


def test_model_star_does_not_cross_slash(rule_project):
    setup(rule_project, model="gpt-4*")
    assert outcome(rule_project, model="openai/gpt-4o").status == "inactive"


def test_branch_glob_and_absent_branch(rule_project):
    setup(rule_project, branch="release/*")
    assert outcome(rule_project, branch="release/1.0").reasons == ("branch release/1.0",)
    assert outcome(rule_project, branch="release/v1/1.0").status == "inactive"
    assert outcome(rule_project).reasons == (
        "branch mismatch: session branch absent does not match the rule's branch pattern release/*",
    )


def test_invalid_model_pattern_matches_nothing(rule_project):
    setup(rule_project, model="")
    assert outcome(rule_project, model="").status == "inactive"


def test_always_apply_bypasses_every_condition_and_has_no_reasons(rule_project):
    setup(rule_project, alwaysApply=True, globs=["nothing/**"], model="x", tools=["y"])
    o = outcome(rule_project)
    assert (o.status, o.reasons) == ("active", ())


@pytest.mark.parametrize(
    "prompt, glob",
    [
        ("fix the Python tests", "**/*.py"),
        ("run PYTEST please", "src/**/*.py"),
        ("a rust crate", "**/*.rs"),
        ("TypeScript types", "**/*.{ts,tsx}"),
        ("javascript", "*.js"),
        ("golang service", "cmd/**/*.go"),
        ("kotlin", "**/*.kt"),
        ("java", "**/*.java"),
        ("csharp", "**/*.cs"),
        ("ruby", "**/*.rb"),
    ],
)
def test_language_intent_satisfies_globs_by_last_segment(rule_project, prompt, glob):
    setup(rule_project, globs=[glob], match="touched")
    o = outcome(rule_project, prompt=prompt)
    assert o.status == "active"
    assert o.reasons[0].startswith("intent *.")


@pytest.mark.parametrize("prompt", ["let's go", "pythonic code", "javascripts", "Go ahead"])
def test_language_intent_needs_a_whole_word_and_there_is_no_go(rule_project, prompt):
    setup(rule_project, globs=["**/*.go", "**/*.py", "**/*.js"], match="touched")
    assert outcome(rule_project, prompt=prompt).status == "inactive"


def test_intent_does_not_satisfy_unrelated_last_segment(rule_project):
    setup(rule_project, globs=["Dockerfile"], match="touched")
    assert outcome(rule_project, prompt="python").status == "inactive"


def test_keyword_donates_the_rules_globs_to_every_rule_declaring_them(rule_project):
    rule_project.write(
        {
            ".pi/rules/r.md": rule_text("r", globs=["db/**/*.sql"], match="touched", keywords=["migration"]),
            ".pi/rules/other.md": rule_text("other", globs=["db/**/*.sql"], match="touched"),
            ".pi/rules/third.md": rule_text("third", globs=["db/**"], match="touched"),
        }
    )
    evaluation = rule_project.engine().evaluate(rule_project.facts(prompt="write a Migration"))
    status = {o.rule.id: (o.status, o.reasons) for o in evaluation.outcomes}
    assert status["r"] == ("active", ("intent db/**/*.sql",))
    assert status["other"] == ("active", ("intent db/**/*.sql",))
    assert status["third"][0] == "inactive"


def test_keywords_alone_do_not_activate_and_intent_does_not_bypass_conditions(rule_project):
    setup(rule_project, globs=["**/*.py"], match="touched", tools=["edit"], keywords=["lint"])
    assert outcome(rule_project, prompt="lint this").status == "inactive"
    assert outcome(rule_project, prompt="lint this", tools=["edit"]).status == "active"


def test_intent_never_enters_the_path_pools(rule_project):
    setup(rule_project, {"a.py": "x"}, globs=["**/*.py"], match="exists")
    o = outcome(rule_project, prompt="python")
    assert o.reasons == ("exists a.py",)


def test_muted_rule_is_skipped_before_matching_even_if_always_apply(rule_project):
    setup(rule_project, alwaysApply=True)
    evaluation = rule_project.engine().evaluate(rule_project.facts(mutes=["r"]))
    assert [(o.status, o.reasons) for o in evaluation.outcomes] == [("muted", ("muted for this session",))]
    assert evaluation.section == ""


def test_blocked_matcher_fails_the_condition_visibly(rule_project):
    setup(rule_project, tools=["edit"])
    engine = rule_project.engine(blocked=["tools"])
    o = engine.evaluate(rule_project.facts(tools=["edit"])).outcomes[0]
    assert o.status == "inactive"
    assert o.reasons == ("no plugin judges 'tools' (is its matcher plugin blocked?)",)
    assert o.failed == ("tools",)


@pytest.mark.parametrize(("facts", "failed"), [
    ({"touched": ["src/a.ts"], "tools": ["edit"]}, ()),
    ({"touched": ["src/a.ts"], "tools": ["bash"]}, ("tools",)),
    ({"touched": ["README.md"], "tools": ["edit"]}, ("globs",)),
    ({"touched": ["README.md"], "tools": ["bash"]}, ("globs", "tools")),
])
def test_an_outcome_names_the_conditions_it_failed(rule_project, facts, failed):
    """What hosts decide on (a prompt cannot satisfy `tools`), never the reasons' wording."""
    setup(rule_project, globs=["src/**/*.ts"], match="touched", tools=["edit"])
    o = outcome(rule_project, **facts)
    assert (o.status, tuple(sorted(o.failed))) == ("active" if not failed else "inactive", failed)
    muted = rule_project.engine().evaluate(rule_project.facts(mutes=["r"], **facts)).outcomes[0]
    assert muted.failed == ()


def test_exists_scan_is_cached_until_invalidated(rule_project):
    setup(rule_project, globs=["src/*.ts"], match="exists")
    engine = rule_project.engine()
    facts = rule_project.facts()
    assert engine.evaluate(facts).outcomes[0].status == "inactive"
    rule_project.write({"src/a.ts": "x"})
    assert engine.evaluate(facts).outcomes[0].status == "inactive"  # stale by design
    engine.invalidate_scans()
    assert engine.evaluate(facts).outcomes[0].status == "active"


def test_tools_mismatch_without_any_session_tool(rule_project):
    setup(rule_project, tools=["edit"])
    assert outcome(rule_project).reasons == ("tools mismatch: the session has no tools; the rule needs one of edit",)


def test_unchanged_inputs_reuse_the_evaluation_and_any_change_recomputes(rule_project):
    setup(rule_project, globs=["src/**"], match="touched")
    engine = rule_project.engine()
    first = engine.evaluate(rule_project.facts(touched=["src/a"]))
    assert engine.evaluate(rule_project.facts(touched=["src/a"])) is first
    other = engine.evaluate(rule_project.facts(touched=["lib/a"]))
    assert other is not first and other.outcomes[0].status == "inactive"
    setup(rule_project, globs=["lib/**"], match="touched", description="changed, longer")
    assert engine.evaluate(rule_project.facts(touched=["lib/a"])).outcomes[0].status == "active"


def test_a_failing_scan_is_reported_and_caches_nothing(rule_project):
    from rules_core import hookimpl

    setup(rule_project, {"src/a.ts": "x"}, globs=["src/*.ts"], match="exists")
    calls = []

    class Flaky:
        @hookimpl(tryfirst=True)
        def pi_rules_scan(self, root, queries, git_root):
            calls.append(root)
            if len(calls) == 1:
                raise OSError("disk on fire")

    engine = rule_project.engine(plugins=[("flaky", Flaky())])
    first = engine.evaluate(rule_project.facts())
    assert first.outcomes[0].status == "inactive"
    assert [(e.kind, e.plugin) for e in first.errors] == [("source-unreadable", "scanner")]
    assert "disk on fire" in first.errors[0].message
    second = engine.evaluate(rule_project.facts())
    assert second.outcomes[0].reasons == ("exists src/a.ts",) and second.errors == ()
    assert len(calls) == 2


def test_a_rule_its_schema_marks_inactive_is_listed_but_never_active(rule_project):
    import dataclasses

    from rules_core import hookimpl
    from rules_core.model import ParseResult

    setup(rule_project, alwaysApply=True)

    class Off:
        @hookimpl(tryfirst=True)
        def pi_rules_parse(self, rule_file, text, extra_keys):
            from rules_plugins.schema_v1 import parse_v1

            result = parse_v1(rule_file, text, extra_keys)
            return ParseResult(dataclasses.replace(result.rule, inactive_reason="turned off in its own tool"))

    engine = rule_project.engine(plugins=[("off", Off())])
    o = engine.evaluate(rule_project.facts()).outcomes[0]
    assert (o.status, o.reasons) == ("inactive", ("turned off in its own tool",))
    entry = engine.explain(rule_project.facts(), "x").entries[0]
    assert (entry.verdict, entry.reasons) == ("no-match", ("turned off in its own tool",))
