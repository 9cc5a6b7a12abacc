"""The engine (rules_core.engine), pinned where mutation testing found it unpinned (issue 32).

Each test is a project on disk and what ``Engine.evaluate``/``explain``/``read_rule``
answer for it. docs/mutation.md lists the mutants these kill and the ones left, explained.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from rules_core import deadline as deadline_module
from rules_core import hookimpl
from rules_core.model import Verdict
from rules_core.rule_tests.pytest_plugin import rule_text


def test_explain_gives_every_rule_its_verdict_reasons_and_caveats(rule_project):
    rule_project.write({
        ".pi/rules/muted.md": rule_text(alwaysApply=True),
        ".pi/rules/reviewer.md": rule_text(alwaysApply=True, agents=["reviewer"]),
        ".pi/rules/always.md": rule_text(alwaysApply=True),
        ".pi/rules/tools-only.md": rule_text(tools=["edit"], model="claude-*", branch="main"),
        ".pi/rules/src.md": rule_text(globs=["src/**"], match="touched", tools=["edit", "write"]),
        ".pi/rules/docs.md": rule_text(globs=["docs/**"], match="touched"),
        ".pi/rules/stream.md": rule_text(condition="TODO", alwaysApply=True),
    })
    explanation = rule_project.engine().explain(rule_project.facts(mutes=["muted"]), "./src//a.py")
    assert explanation.path == "src/a.py" and explanation.errors == ()
    assert [(e.rule.id, e.verdict, e.reasons, e.caveats) for e in explanation.entries] == [
        ("always", "path-independent", ("alwaysApply",), ()),
        ("docs", "no-match", ("no touched path matches globs docs/**",), ()),
        ("muted", "muted", ("muted for this session",), ()),
        ("reviewer", "no-match", ("agent mismatch: session agent main is not one of the rule's agents reviewer",), ()),
        ("src", "matches", ("touched src/a.py",), ("only when the session's tools include one of: edit, write",)),
        ("stream", "no-match",
         ("stream rule: fires when text, tool output matches /TODO/; interruptMode always, repeat once "
          "(alwaysApply is ignored: a stream rule never enters the section)",), ()),
        ("tools-only", "path-independent", ("no globs: its other conditions decide, not the path",), (
            "only when the session's tools include one of: edit",
            "only when the session model matches claude-*",
            "only when the git branch matches main",
        )),
    ]


def test_explain_of_an_empty_path_shows_it_as_given(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(globs=["src/**"], match="touched")})
    explanation = rule_project.engine().explain(rule_project.facts(), "")
    assert explanation.path == ""
    assert [(e.verdict, e.reasons) for e in explanation.entries] == [
        ("no-match", ("no touched path matches globs src/**",))]


def test_explain_with_the_path_matcher_blocked_says_nothing_judges_globs(rule_project):
    rule_project.write({".pi/rules/r.md": rule_text(globs=["src/**"], match="touched")})
    explanation = rule_project.engine(blocked=["globs"]).explain(rule_project.facts(), "src/a.py")
    assert [(e.verdict, e.reasons) for e in explanation.entries] == [("no-match", ("no matcher judges globs",))]


def test_read_rule_answers_by_path_or_url_and_refuses_what_the_agent_cannot_see(rule_project):
    rule_project.write({
        ".pi/rules/a.md": rule_text("A body.", globs=["src/**"], load="on-demand"),
        ".pi/rules/hidden.md": rule_text("Hidden.", alwaysApply=True, agents=["reviewer"]),
    })
    engine, facts = rule_project.engine(), rule_project.facts()
    for name in ("a.md", "rule://a"):
        reading = engine.read_rule(facts, name)
        assert (reading.body, reading.refusal, reading.shared) == ("A body.", None, ())
    assert engine.read_rule(facts, "rule://hidden").refusal == "Unknown rule: rule://hidden\nAvailable: a"
    assert engine.read_rule(facts, 5).refusal == "Unknown rule: "
    assert engine.read_rule(rule_project.facts(agent="reviewer"), "hidden.md").body == "Hidden."


def test_a_rule_the_hosts_agent_reads_itself_is_left_out_with_the_hosts_reason(rule_project):
    rule_project.write({"CLAUDE.md": "Claude memory.\n"})
    engine = rule_project.engine()
    for host, reason in (
        ("claude-code", "Claude Code reads this file itself; pi-rules leaves it out so it is not sent twice"),
        ("pi", "Pi reads this file itself (one AGENTS.md or CLAUDE.md per folder from cwd up); not sent twice"),
    ):
        evaluation = engine.evaluate(rule_project.facts(host=host))
        assert [(o.status, o.reasons) for o in evaluation.outcomes] == [("inactive", (reason,))]
        assert evaluation.section == ""
    assert [o.status for o in engine.evaluate(rule_project.facts()).outcomes] == ["active"]


def budget_project(project):
    project.write({
        ".pi/rules/big.md": rule_text("word " * 400, alwaysApply=True, priority=1),
        ".pi/rules/small.md": rule_text("Small rule.", alwaysApply=True, priority=5),
        ".pi/rules/lazy.md": rule_text("Lazy body.", alwaysApply=True, load="on-demand"),
        ".pi/rules/muted.md": rule_text("Muted body.", alwaysApply=True),
        ".pi/rules/reviewer.md": rule_text("Reviewer body.", alwaysApply=True, agents=["reviewer"]),
    })


def test_each_outcome_has_its_status_cause_and_token_count_under_a_budget(rule_project):
    budget_project(rule_project)
    evaluation = rule_project.engine().evaluate(rule_project.facts(max_tokens=100, mutes=["muted"]))
    assert [(o.rule.id, o.status, o.cause, o.tokens) for o in evaluation.outcomes] == [
        ("big", "dropped", "budget", 500),
        ("lazy", "on-demand", None, 3),
        ("muted", "muted", None, 3),
        ("reviewer", "inactive", None, 4),
        ("small", "active", None, 3),
    ]
    assert [o.rule.id for o in evaluation.active] == ["small"]
    assert [o.rule.id for o in evaluation.on_demand] == ["lazy"]
    assert evaluation.budget_used == 3
    assert "## small" in evaluation.section and "- lazy.md" in evaluation.section
    assert "big.md" not in evaluation.section  # overflow = drop (the default)


def test_with_overflow_index_a_dropped_rule_is_listed_on_demand(rule_project):
    budget_project(rule_project)
    evaluation = rule_project.engine().evaluate(rule_project.facts(max_tokens=100, overflow="index"))
    assert {o.rule.id: o.status for o in evaluation.outcomes}["big"] == "dropped"
    assert evaluation.section.endswith(
        "- lazy.md — A test rule (fetch with the read_rule tool)\n"
        "- big.md — A test rule (fetch with the read_rule tool)\n")
    assert evaluation.section_tokens > 0


def test_an_untrusted_project_loads_only_the_users_rules_and_scans_nothing(rule_project):
    rule_project.write({".pi/rules/project.md": rule_text(alwaysApply=True), "src/a.ts": "x"})
    rule_project.write_global({"mine.md": rule_text("Mine.", globs=["src/*.ts"], match="exists")})
    engine = rule_project.engine()
    trusted = engine.evaluate(rule_project.facts())
    assert {o.rule.id: (o.status, o.reasons) for o in trusted.outcomes} == {
        "project": ("active", ()), "mine": ("active", ("exists src/a.ts",))}
    untrusted = engine.evaluate(rule_project.facts(trusted=False))
    assert [(o.rule.id, o.status, o.reasons) for o in untrusted.outcomes] == [
        ("mine", "inactive", ("no existing path matches globs src/*.ts",))]


def test_a_hosts_settings_table_applies_to_that_host_in_evaluate_explain_and_read_rule(rule_project):
    rule_project.write({".pi/rules/style.md": rule_text("Style.", alwaysApply=True),
                        ".pi/rules.toml": '[hosts.claude-code]\ndisable = ["style"]\n'})
    engine = rule_project.engine()
    why = 'disabled in .pi/rules.toml [hosts.claude-code] ("style")'
    claude = rule_project.facts(host="claude-code")
    assert [(o.status, o.reasons) for o in engine.evaluate(claude).outcomes] == [("inactive", (why,))]
    assert [(e.verdict, e.reasons) for e in engine.explain(claude, "a.py").entries] == [("no-match", (why,))]
    assert engine.read_rule(claude, "style.md").refusal == "Unknown rule: style.md"
    assert [o.status for o in engine.evaluate(rule_project.facts()).outcomes] == ["active"]
    assert engine.read_rule(rule_project.facts(), "style.md").body == "Style."


def test_an_engine_built_from_an_environment_alone_takes_home_and_plugin_blocks_from_it(rule_project):
    from rules_core.engine import Engine
    from rules_core.model import Facts
    from rules_core.rule_tests.pytest_plugin import make_rules

    rule_project.write({".pi/rules/style.md": rule_text("Style.", alwaysApply=True),
                        ".cursor/rules/c.mdc": "---\nalwaysApply: true\n---\nC.\n"})
    rule_project.write_global({"mine.md": rule_text("Mine.", alwaysApply=True)})
    make_rules(rule_project.home / ".config" / "pi-rules", {"config.toml": 'disable = ["c"]\n'})
    engine = Engine(env={"HOME": str(rule_project.home), "PI_RULES_DISABLE_PLUGINS": "native"})
    evaluation = engine.evaluate(Facts(cwd=str(rule_project.cwd)))
    assert [(o.rule.id, o.status, o.reasons) for o in evaluation.outcomes] == [
        ("c", "inactive", ('disabled in ~/.config/pi-rules/config.toml ("c")',)),
        ("mine", "active", ()),
    ]


# -- the deadline: the cut's one line, and the exists scans (simulated clock) ----------------

_CUT_TAIL = (": the call's time budget ran out (PI_RULES_DEADLINE_MS, default 10000 ms); a repository "
             "that makes pi-rules this slow is worth a look with pi-rules check")


@pytest.fixture
def frozen_clock(monkeypatch):
    """``time.monotonic`` that stands still until a test moves it (``.now``)."""
    class _Clock:
        now = 1000.0

        def __call__(self) -> float:
            return self.now
    fake = _Clock()
    monkeypatch.setattr(deadline_module.time, "monotonic", fake)
    return fake


class _SpendOnFirst:
    """A matcher that spends the whole budget while judging the rule ``a``."""

    def __init__(self, clock) -> None:
        self.clock = clock

    @hookimpl
    def pi_rules_match(self, rule, context):
        if rule.id == "a":
            self.clock.now += 60
        return []


@pytest.mark.parametrize(("after", "what"), [(["b"], "1 rule not judged"), (["b", "c"], "2 rules not judged")])
def test_a_cut_evaluation_says_how_many_rules_it_left_unjudged_in_one_line(rule_project, frozen_clock, after, what):
    rule_project.env["PI_RULES_DEADLINE_MS"] = "1000"
    rule_project.write({f".pi/rules/{n}.md": rule_text(globs=["src/**"]) for n in ["a", *after]})
    engine = rule_project.engine(plugins=[("spend", _SpendOnFirst(frozen_clock))])
    evaluation = engine.evaluate(rule_project.facts(touched=["src/x.ts"]))
    assert [(o.rule.id, o.status) for o in evaluation.outcomes] == [
        ("a", "active"), *((n, "inactive") for n in after)]
    cuts = [(e.kind, e.path, e.message, e.plugin) for e in evaluation.errors if "time budget" in e.message]
    assert cuts == [("source-unreadable", str(rule_project.cwd), what + _CUT_TAIL, "engine")]


class _OverrunIn:
    """An exists scanner whose walk of one root is cut (as ``check()`` cuts a walk past the
    deadline) and that leaves every other root to the built-in scanner (``None``: the next
    implementation answers). Only that root's scan overruns, so the call goes on."""

    def __init__(self, root: str) -> None:
        self.root, self.calls = root, 0

    @hookimpl
    def pi_rules_scan(self, root, queries, git_root):
        if root == self.root:
            self.calls += 1
            raise deadline_module.DeadlineExceeded
        return None


def test_an_overrun_root_is_cut_then_skipped_while_the_next_root_is_still_scanned(rule_project):
    rule_project.write({
        "one/.pi/rules/e1.md": rule_text(globs=["**/*.ts"], match="exists"), "one/a.ts": "",
        "two/.pi/rules/e2.md": rule_text(globs=["**/*.ts"], match="exists"), "two/b.ts": "",
    })
    one = str(rule_project.cwd / "one")
    slow = _OverrunIn(one)
    engine = rule_project.engine(plugins=[("slow", slow)])
    first = engine.evaluate(rule_project.facts())
    statuses = {o.rule.id: o.status for o in first.outcomes}
    assert [(e.path, e.message) for e in first.errors] == [(one, (
        "the exists scan was cut; exists matching sees no files there for the rest of this session" + _CUT_TAIL))]
    second = engine.evaluate(rule_project.facts(prompt="again"))
    assert [(e.path, e.message) for e in second.errors] == [(one, (
        "its exists scan overran the deadline earlier, so it is not scanned again in this session" + _CUT_TAIL))]
    assert slow.calls == 1
    # The root after the overrun one is still scanned, every time.
    assert {o.rule.id: o.status for o in second.outcomes} == statuses == {"e1": "inactive", "e2": "active"}


class _Failing:
    @hookimpl
    def pi_rules_scan(self, root, queries, git_root):
        raise RuntimeError("disk on fire")


def test_a_failing_exists_scan_is_reported_with_its_cause_and_the_rule_stays_inactive(rule_project):
    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"), "a.ts": ""})
    evaluation = rule_project.engine(plugins=[("failing", _Failing())]).evaluate(rule_project.facts())
    assert [(e.kind, e.path, e.message, e.plugin) for e in evaluation.errors] == [(
        "source-unreadable", str(rule_project.cwd),
        "the exists scan failed (RuntimeError: scanner plugin 'failing': RuntimeError: disk on fire); "
        "exists matching saw no files there this time",
        "scanner")]
    assert [o.status for o in evaluation.outcomes] == ["inactive"]


def test_the_exists_scan_honours_the_repositorys_gitignore(rule_project):
    from suite_helpers import git_init

    git_init(rule_project.cwd)
    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"),
                        ".gitignore": "*.gen.ts\n", "src/x.gen.ts": ""})
    engine = rule_project.engine()
    assert [(o.status, o.reasons) for o in engine.evaluate(rule_project.facts()).outcomes] == [
        ("inactive", ("no existing path matches globs **/*.ts",))]
    rule_project.write({"src/y.ts": ""})  # positive control: a file git sees
    engine.invalidate_scans()
    assert [(o.status, o.reasons) for o in engine.evaluate(rule_project.facts()).outcomes] == [
        ("active", ("exists src/y.ts",))]


class _CountScans:
    """Counts the exists scans that reach a walker (answers nothing itself)."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(tryfirst=True)
    def pi_rules_scan(self, root, queries, git_root):
        self.calls += 1
        return None


def test_a_later_engine_answers_a_trusted_projects_exists_scan_from_the_persistent_cache(rule_project, monkeypatch):
    from suite_helpers import git_init, settle_racy_clock

    git_init(rule_project.cwd)
    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"), "src/a.ts": ""})
    settle_racy_clock(monkeypatch)
    answers = []
    for _ in range(2):  # two engines: two processes of the same user
        counter = _CountScans()
        outcomes = rule_project.engine(plugins=[("count", counter)]).evaluate(rule_project.facts()).outcomes
        answers.append(([(o.status, o.reasons) for o in outcomes], counter.calls))
    assert answers == [([("active", ("exists src/a.ts",))], 1), ([("active", ("exists src/a.ts",))], 0)]


def test_an_engine_without_arguments_reads_the_process_environment(rule_project, monkeypatch):
    from rules_core.engine import Engine
    from rules_core.model import Facts

    rule_project.write_global({"mine.md": rule_text("Mine.", alwaysApply=True)})
    monkeypatch.setenv("HOME", str(rule_project.home))
    monkeypatch.setenv("PI_RULES_DISABLE_PLUGINS", "native")
    rule_project.write({".pi/rules/project.md": rule_text(alwaysApply=True)})  # blocked with `native`
    outcomes = Engine().evaluate(Facts(cwd=str(rule_project.cwd))).outcomes
    assert [(o.rule.id, o.status) for o in outcomes] == [("mine", "active")]


def test_an_engines_home_overrides_the_environments(rule_project, tmp_path):
    from rules_core.engine import Engine
    from rules_core.model import Facts
    from rules_core.rule_tests.pytest_plugin import fresh_manager

    rule_project.write_global({"mine.md": rule_text("Mine.", alwaysApply=True)})
    other = tmp_path / "other-home"
    other.mkdir()
    for home, expected in ((str(rule_project.home), [("mine", "active")]), (None, [])):
        engine = Engine(fresh_manager(), home=home, env={"HOME": str(other)})
        assert [(o.rule.id, o.status) for o in engine.evaluate(Facts(cwd=str(rule_project.cwd))).outcomes] == expected


def test_the_section_names_an_on_demand_rule_the_way_the_hosts_agent_fetches_it(rule_project):
    rule_project.write({".pi/rules/lazy.md": rule_text("Lazy body.", alwaysApply=True, load="on-demand")})
    engine = rule_project.engine()
    index = {host: engine.evaluate(rule_project.facts(host=host)).section.splitlines()[-1]
             for host in ("claude-code", "pi", None)}
    assert index == {
        "claude-code": f"- {rule_project.cwd}/.pi/rules/lazy.md — A test rule (read it with the Read tool)",
        "pi": "- lazy.md — A test rule (fetch with the read_rule tool)",
        None: "- lazy.md — A test rule (fetch with the read_rule tool)",
    }


def test_a_pointer_stays_while_the_host_reads_the_file_itself_and_is_inlined_once_it_does_not(rule_project):
    rule_project.write({"CLAUDE.md": "Claude notes.\n\n@AGENTS.md\n", "AGENTS.md": "Agents text.\n"})
    pointer = "Claude notes.\n\n(AGENTS.md reaches you as a rule of its own)\n"
    engine = rule_project.engine()

    def claude(evaluation):
        return [(o.status, o.rule.body) for o in evaluation.outcomes if o.rule.id == "project/CLAUDE"]

    pi = engine.evaluate(rule_project.facts(host="pi"))  # Pi reads AGENTS.md itself
    assert [(o.rule.id, o.status) for o in pi.outcomes] == [("project/AGENTS", "inactive"), ("project/CLAUDE", "active")]
    assert claude(pi) == [("active", pointer)]
    # Disabled, AGENTS.md is read by nobody: its text goes inline, under Pi as without a host.
    rule_project.write({".pi/rules.toml": 'disable = ["project/AGENTS"]\n'})
    for host in ("pi", None):
        (status, body), = claude(engine.evaluate(rule_project.facts(host=host)))
        assert status == "active" and "Agents text." in body and "reaches you" not in body


def test_stream_specs_honour_the_hosts_settings_table_mutes_and_trust(rule_project):
    rule_project.write({".pi/rules/todo.md": rule_text(condition="TODO", alwaysApply=True),
                        ".pi/rules.toml": '[hosts.claude-code]\ndisable = ["todo"]\n'})
    rule_project.write_global({"fixme.md": rule_text(condition="FIXME", alwaysApply=True)})
    engine = rule_project.engine()

    def armed(**facts):
        return sorted(spec.rule.id for spec in engine.stream_specs(rule_project.facts(**facts)))

    assert armed() == armed(host="pi") == ["fixme", "todo"]
    assert armed(host="claude-code") == ["fixme"]
    assert armed(mutes=["fixme"]) == ["todo"]
    assert armed(trusted=False) == ["fixme"]  # an untrusted project's own rules are not read


def test_a_memory_files_tokens_are_counted_in_its_pool_not_the_main_budget(rule_project):
    rule_project.write({"AGENTS.md": "Agents text.\n"})
    evaluation = rule_project.engine().evaluate(rule_project.facts())
    assert [(pool.name, used) for pool, used in evaluation.pools] == [("memory", 4)]
    assert evaluation.budget_used == 0 and [o.tokens for o in evaluation.outcomes] == [4]


# -- a host's settings table through discover and stream_specs; warnings reach evaluate ------

def test_a_hosts_import_and_required_plugins_reach_discover_evaluate_and_stream_specs(rule_project):
    rule_project.write({
        ".pi/rules/todo.md": rule_text(condition="TODO", alwaysApply=True),
        ".cursor/rules/fixme.mdc": "---\ndescription: fixme\ncondition: FIXME\nalwaysApply: true\n---\nNo FIXME.\n",
        ".pi/rules.toml": ('[hosts.claude-code]\nimport = "none"\n[hosts.claude-code.plugins]\n'
                           'required = ["pi-rules-nope"]\n[hosts.nobody]\nattach = false\n'),
    })
    engine = rule_project.engine()
    required = ("line 4: plugins.required names 'pi-rules-nope' in [hosts.claude-code], which is not installed "
                "(no plugin or distribution of that name); install the distribution (pip install pi-rules-nope) "
                "or remove it from the list")
    unknown = [("unknown-host", "line 5: [hosts.nobody] names no known host; its keys apply to nothing (known hosts: "
                "claude-code, codex, copilot, cursor, gemini, kiro, pi, windsurf)")]
    seen = {}
    for host in (None, "claude-code"):
        facts = rule_project.facts(host=host)
        discovery = engine.discover(str(rule_project.cwd), True, host)
        evaluation = engine.evaluate(facts)
        assert [(w.code, w.message) for w in evaluation.warnings] == unknown
        assert [e.message for e in evaluation.errors] == [e.message for e in discovery.errors]
        seen[host] = ([r.id for r in discovery.rules], [e.message for e in discovery.errors],
                      sorted(s.rule.id for s in engine.stream_specs(facts)),
                      [e.rule.id for e in engine.explain(facts, "a.py").entries],
                      engine.read_rule(facts, "fixme.mdc").refusal)
    assert seen == {None: (["todo", "fixme"], [], ["fixme", "todo"], ["todo", "fixme"], None),
                    "claude-code": (["todo"], [required], ["todo"], ["todo"], "Unknown rule: fixme.mdc")}


# -- the `except Exception` fallbacks, reached through third-party plugins -------------------

_BROKEN_RENDERER = ("from rules_core import hookimpl\n\n\n@hookimpl(tryfirst=True)\n"
                    "def pi_rules_render(kind, data):\n    if kind == 'section':\n"
                    "        raise ValueError('renderer broke')\n")
_INTERNAL = "pi-rules internal error ({}); no rules were evaluated — please report this"


def test_an_installed_renderer_that_raises_costs_the_evaluation_one_internal_error(rule_project, tmp_path, monkeypatch):
    """Hooks.render raises a renderer's fault by design; evaluate turns it into one error."""
    import sys

    from rules_core.engine import Engine
    from rules_core.model import Evaluation, Facts, RuleError
    from rules_core.rule_tests.pytest_plugin import make_rules

    site = tmp_path / "site"  # a distribution as pip leaves it: the pluggy entry point loads it
    make_rules(site, {"mutcore_render_plugin.py": _BROKEN_RENDERER})
    make_rules(site / "mutcore_render-1.0.dist-info", {
        "METADATA": "Metadata-Version: 2.1\nName: mutcore_render\nVersion: 1.0\n",
        "entry_points.txt": "[pi_rules]\nbrokenrender = mutcore_render_plugin\n"})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(sys.modules, "mutcore_render_plugin", None)  # the import is undone at teardown
    del sys.modules["mutcore_render_plugin"]
    rule_project.write({".pi/rules/a.md": rule_text("A.", alwaysApply=True)})
    engine = Engine(env={"HOME": str(rule_project.home)})
    assert engine.pm.origins.get("brokenrender") == "mutcore_render 1.0"
    muted = engine.evaluate(Facts(cwd=str(rule_project.cwd), mutes=frozenset({"a"})))  # nothing to render
    assert (muted.errors, [o.status for o in muted.outcomes]) == ((), ["muted"])
    facts = Facts(cwd=str(rule_project.cwd))
    where = f"ValueError: renderer broke at {site / 'mutcore_render_plugin.py'}:7"
    assert engine.evaluate(facts) == Evaluation(
        facts, (), (RuleError("source-unreadable", str(rule_project.cwd), _INTERNAL.format(where), "engine"),),
        (), (), "", 0, 0)


class _NotVerdicts:
    """A matcher that breaks the hook's contract: strings, not ``Verdict``s."""

    @hookimpl
    def pi_rules_match(self, rule, context):
        return ["not a verdict"]


class _NotAHost:
    """A host declaration that is not a ``HostInfo``."""

    @hookimpl
    def pi_rules_hosts(self):
        return ["not a host"]


def test_a_matcher_answering_no_verdicts_costs_explain_an_internal_error_and_stream_specs_nothing(rule_project):
    rule_project.write({".pi/rules/src.md": rule_text(globs=["src/**"], match="touched"),
                        ".pi/rules/todo.md": rule_text(condition="TODO", tools=["edit"])})
    facts = rule_project.facts(tools=["edit"])
    good = rule_project.engine()
    assert [s.rule.id for s in good.stream_specs(facts)] == ["todo"]  # positive control
    assert good.explain(facts, "./src//a.ts").errors == ()
    engine = rule_project.engine(plugins=[("bad", _NotVerdicts())])
    assert engine.stream_specs(facts) == ()
    explanation = engine.explain(facts, "./src//a.ts")
    assert (explanation.path, explanation.entries) == ("./src//a.ts", ())  # the path as given
    (error,) = explanation.errors
    assert (error.kind, error.path, error.plugin) == ("source-unreadable", str(rule_project.cwd), "engine")
    assert error.message.startswith(
        "pi-rules internal error (AttributeError: 'str' object has no attribute 'rank' at ")
    assert error.message.endswith("); no rules were evaluated — please report this")


def test_a_host_declaration_that_is_no_hostinfo_costs_read_rule_an_internal_error_refusal(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text("A.", alwaysApply=True)})
    assert rule_project.engine().read_rule(rule_project.facts(host="pi"), "a.md").body == "A."  # positive control
    reading = rule_project.engine(plugins=[("bad", _NotAHost())]).read_rule(rule_project.facts(host="pi"), "a.md")
    assert (reading.rule, reading.shared) == (None, ())
    assert reading.refusal.startswith(
        "Unknown rule: pi-rules internal error (AttributeError: 'str' object has no attribute 'name' at ")
    assert reading.refusal.endswith("); no rules were evaluated — please report this")


# -- the call's Resolved value, a relative cwd, the probe explain matches with ----------------

def test_a_resolved_value_for_a_sessions_own_environment_is_what_every_entry_point_reads(rule_project):
    """A host resolves once with its session's env (``Resolved.with_env``) and passes it on;
    re-reading the engine's own settings instead would import every tool's files and leave
    CLAUDE.md to Claude Code."""
    rule_project.write({
        ".pi/rules/todo.md": rule_text(condition="TODO", alwaysApply=True),
        ".cursor/rules/fixme.mdc": "---\ndescription: fixme\ncondition: FIXME\nalwaysApply: true\n---\nNo FIXME.\n",
        "CLAUDE.md": "Claude notes.\n",
    })
    engine, cwd = rule_project.engine(), str(rule_project.cwd)
    facts = rule_project.facts(host="claude-code")
    session = engine.resolve(cwd, True, "claude-code").with_env({"PI_RULES_IMPORT": "claude-md"})

    def answers(resolved):
        discovery = engine.discover(cwd, True, "claude-code", resolved)
        return ([r.id for r in discovery.rules],
                {o.rule.id: o.status for o in engine.evaluate(facts, resolved=resolved).outcomes},
                [(e.rule.id, e.verdict) for e in engine.explain(facts, "a.py", resolved).entries],
                [s.rule.id for s in engine.stream_specs(facts, resolved=resolved)],
                engine.read_rule(facts, "CLAUDE.md", resolved=resolved).body,
                engine.read_rule(facts, "fixme.mdc", resolved=resolved).refusal,
                [r.id for r in engine.reachable(discovery.rules, facts, resolved)])

    assert answers(session) == (
        ["todo", "project/CLAUDE"], {"todo": "inactive", "project/CLAUDE": "active"},
        [("todo", "no-match"), ("project/CLAUDE", "path-independent")], ["todo"], "Claude notes.\n",
        "Unknown rule: fixme.mdc", ["todo", "project/CLAUDE"])
    assert answers(None) == (
        ["todo", "fixme", "project/CLAUDE"], {"todo": "inactive", "fixme": "inactive", "project/CLAUDE": "inactive"},
        [("todo", "no-match"), ("fixme", "no-match"), ("project/CLAUDE", "no-match")], ["todo", "fixme"], None,
        None, ["todo", "fixme"])


def test_a_relative_cwd_is_taken_from_the_process_folder_by_explain_and_stream_specs(rule_project, monkeypatch):
    rule_project.write({
        ".pi/rules/src.md": rule_text(globs=["src/**"], match="touched"),
        ".pi/rules/ex.md": rule_text(globs=["src/**"], match="exists"),
        ".pi/rules/todo.md": rule_text(condition="TODO", alwaysApply=True),
        "sub/.pi/rules/nested.md": rule_text(condition="NESTED", load="on-demand"),  # sub/'s: armed there only
    })
    engine = rule_project.engine()
    monkeypatch.chdir(rule_project.cwd.parent)
    for facts in (rule_project.facts(), rule_project.facts(cwd=rule_project.cwd.name)):
        explanation = engine.explain(facts, "src/a.ts")
        assert [(e.rule.id, e.verdict, e.reasons) for e in explanation.entries if e.rule.id != "todo"] == [
            ("ex", "no-match", ("no existing path matches globs src/** (touched src/a.ts matches, but match is exists)",)),
            ("src", "matches", ("touched src/a.ts",)),
            ("nested", "no-match",
             ("stream rule: fires when text, tool output matches /NESTED/; interruptMode always, repeat once",)),
        ]
        assert [s.rule.id for s in engine.stream_specs(facts)] == ["todo"]
        touched = dataclasses.replace(facts, touched=("src/a.ts",))
        assert [(o.rule.id, o.reasons) for o in engine.evaluate(touched).outcomes if o.status == "active"] == [
            ("src", ("touched src/a.ts",))]


class _GlobsFromFacts:
    """A third-party path matcher (condition ``globs``) that judges by ``context.facts``."""

    @hookimpl(tryfirst=True)
    def pi_rules_match(self, rule, context):
        facts = context.facts
        return [Verdict("globs", False, (f"facts touched {facts.touched!r}, prompt {facts.prompt!r}",), 1)]


def test_explain_asks_a_path_matcher_with_the_probed_path_as_the_only_touched_path_and_no_prompt(rule_project):
    rule_project.write({".pi/rules/src.md": rule_text(globs=["src/**"], match="touched")})
    engine = rule_project.engine(plugins=[("facts", _GlobsFromFacts())])
    facts = rule_project.facts(touched=["other.py"], prompt="fix the python")
    (entry,) = engine.explain(facts, "./src//a.ts").entries
    assert entry.reasons == ("facts touched ('src/a.ts',), prompt ''", "touched src/a.ts")


def test_a_stream_rule_with_globs_is_armed_whatever_the_touched_existing_and_prompted_paths(rule_project):
    """The ``globs`` gate is the stream's (it checks each tool call's path), so arming asks
    the path matcher with nothing touched, nothing scanned, no intents, and ignores it."""
    rule_project.write({
        ".pi/rules/both.md": rule_text(condition="TODO", globs=["src/**"], match="both"),
        ".pi/rules/exists.md": rule_text(condition="FIXME", globs=["**/*.py"], match="exists"),
    })
    facts = rule_project.facts(prompt="fix the python code")
    assert [s.rule.id for s in rule_project.engine().stream_specs(facts)] == ["both", "exists"]


def test_read_rule_by_path_names_the_other_rules_at_that_path_and_by_url_none(rule_project):
    rule_project.write({".pi/rules/style.md": rule_text("Project style.", alwaysApply=True)})
    rule_project.write_global({"style.md": rule_text("My style.", alwaysApply=True)})
    engine, facts = rule_project.engine(), rule_project.facts()
    by_path = engine.read_rule(facts, "style.md")
    assert (by_path.body, [r.body for r in by_path.shared]) == ("Project style.", ["My style."])
    by_url = engine.read_rule(facts, "rule://style")
    assert (by_url.body, by_url.shared) == ("Project style.", ())


def test_explain_says_an_agent_requested_rule_applies_wherever_the_agent_works(rule_project):
    rule_project.write({".cursor/rules/req.mdc": "---\ndescription: Agent requested\n---\nBody.\n"})
    entries = rule_project.engine().explain(rule_project.facts(), "a.py").entries
    assert [(e.verdict, e.reasons) for e in entries] == [
        ("path-independent", ("no conditions: it applies wherever the agent works",))]


def test_an_engine_reads_its_settings_through_the_cache_it_was_given(rule_project):
    """The CLI makes the settings cache first (for ``[plugins] block``) and hands it over."""
    from rules_core.engine import Engine
    from rules_core.rule_tests.pytest_plugin import fresh_manager
    from rules_core.settings.load import SettingsCache

    rule_project.write({".pi/rules/style.md": rule_text(alwaysApply=True),
                        ".cursor/rules/c.mdc": "---\nalwaysApply: true\n---\nC.\n"})
    home, env = str(rule_project.home), {"HOME": str(rule_project.home)}
    for cache_env, expected in (({"PI_RULES_IMPORT": "none"}, ["style"]), (env, ["style", "c"])):
        engine = Engine(fresh_manager(), home=home, env=env, settings=SettingsCache(cache_env, home, lambda cwd: None))
        assert [r.id for r in engine.discover(str(rule_project.cwd)).rules] == expected


def test_evaluate_judges_the_discovery_it_was_given(rule_project):
    rule_project.write({".pi/rules/old.md": rule_text(alwaysApply=True)})
    engine = rule_project.engine()
    given = engine.discover(str(rule_project.cwd))
    rule_project.write({".pi/rules/new.md": rule_text(alwaysApply=True)})
    assert [o.rule.id for o in engine.evaluate(rule_project.facts(), given).outcomes] == ["old"]
    assert [o.rule.id for o in engine.evaluate(rule_project.facts(prompt="again")).outcomes] == ["new", "old"]


def test_git_never_runs_in_an_untrusted_project_and_does_in_a_trusted_one(rule_project, tmp_path, monkeypatch):
    """git reads the repository's own config: an untrusted project gets no git at all."""
    from rules_core.discovery.git import git_executable
    from suite_helpers import git_init

    real = git_executable()
    log, bin_dir = tmp_path / "git.log", tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$PWD $1" >> \'{log}\'\nexec \'{real}\' "$@"\n')
    (bin_dir / "git").chmod(0o755)
    git_init(rule_project.cwd)
    rule_project.write({".pi/rules/r.md": rule_text(globs=["src/**"], match="exists"), "src/a.ts": ""})
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    engine = rule_project.engine()
    untrusted = engine.evaluate(rule_project.facts(trusted=False))
    assert [o.rule.id for o in untrusted.outcomes] == [] and not log.exists()
    trusted = engine.evaluate(rule_project.facts())
    assert [(o.rule.id, o.status) for o in trusted.outcomes] == [("r", "active")]
    assert f"{rule_project.cwd} rev-parse" in log.read_text().splitlines()  # positive control


def test_a_dropped_duplicate_says_duplicate_and_an_over_budget_rule_says_budget(rule_project):
    rule_project.write({
        ".pi/rules/a.md": rule_text("Same text.", alwaysApply=True, priority=2),
        ".pi/rules/b.md": rule_text("Same text.", alwaysApply=True),
        ".pi/rules/big.md": rule_text("word " * 400, alwaysApply=True),
    })
    evaluation = rule_project.engine().evaluate(rule_project.facts(max_tokens=100))
    assert [(o.rule.id, o.status, o.cause) for o in evaluation.outcomes] == [
        ("a", "active", None), ("b", "dropped", "duplicate"), ("big", "dropped", "budget")]


class _PointsToBig:
    """An importer-like plugin whose ``pointer.md`` points to ``big.md`` (``Rule.points_to``)
    instead of copying it, as the memory importers do for ``@AGENTS.md``."""

    def __init__(self, big: str) -> None:
        self.big = big

    @hookimpl(wrapper=True)
    def pi_rules_parse(self, rule_file, text, extra_keys):
        result = yield
        if rule_file.relative_path != "pointer.md" or result is None or result.rule is None:
            return result
        rule = dataclasses.replace(result.rule, points_to=(self.big,), inlined=result.rule.body + "\nBig, inlined.")
        return dataclasses.replace(result, rule=rule)


def test_a_pointer_to_a_rule_the_index_lists_under_overflow_index_stays_a_pointer(rule_project):
    rule_project.write({
        ".pi/rules/pointer.md": rule_text("See big.md.", alwaysApply=True, priority=5),
        ".pi/rules/big.md": rule_text("word " * 400, alwaysApply=True),
    })
    engine = rule_project.engine(plugins=[("points", _PointsToBig(str(rule_project.cwd / ".pi/rules/big.md")))])
    bodies = {}
    for overflow in ("index", "drop"):
        evaluation = engine.evaluate(rule_project.facts(max_tokens=100, overflow=overflow))
        bodies[overflow] = [(o.rule.id, o.status, "Big, inlined." in o.rule.body) for o in evaluation.outcomes]
    assert bodies == {"index": [("big", "dropped", False), ("pointer", "active", False)],
                      "drop": [("big", "dropped", False), ("pointer", "active", True)]}


def test_a_parent_folders_exists_scan_is_kept_for_the_next_engine_too(rule_project, monkeypatch):
    """cwd below the git root, the rule's root above cwd: the scan walks the repository, and
    the persistent store (bounded by the git root, not by cwd) keeps it for the next process."""
    from suite_helpers import git_init, settle_racy_clock

    git_init(rule_project.cwd)
    rule_project.write({".pi/rules/e.md": rule_text(globs=["**/*.ts"], match="exists"), "lib/a.ts": "", "sub/x": ""})
    settle_racy_clock(monkeypatch)
    answers = []
    for _ in range(2):
        counter = _CountScans()
        engine = rule_project.engine(plugins=[("count", counter)])
        outcomes = engine.evaluate(rule_project.facts(cwd=str(rule_project.cwd / "sub"))).outcomes
        answers.append(([(o.rule.id, o.status, o.reasons) for o in outcomes], counter.calls))
    found = [("e", "active", (f"exists {rule_project.cwd}/lib/a.ts",))]
    assert answers == [(found, 1), (found, 0)]


def test_only_a_rule_that_can_match_by_existing_files_makes_an_exists_scan(rule_project):
    """A scan walks the tree: touched-only, always-applied, inactive and negation-only rules
    never cost one."""
    rule_project.write({
        ".pi/rules/touched.md": rule_text(globs=["**/*.ts"], match="touched"),
        ".pi/rules/always.md": rule_text(alwaysApply=True, globs=["**/*.ts"], match="exists"),
        ".pi/rules/negated.md": rule_text(globs=["!**/*.ts"], match="exists"),
        "a.ts": "",
    })
    counter = _CountScans()
    engine = rule_project.engine(plugins=[("count", counter)])
    assert [(o.rule.id, o.status) for o in engine.evaluate(rule_project.facts()).outcomes] == [
        ("always", "active"), ("negated", "inactive"), ("touched", "inactive")]
    assert counter.calls == 0
    rule_project.write({".pi/rules/exists.md": rule_text(globs=["**/*.ts"], match="exists")})  # positive control
    assert {o.rule.id: o.status for o in engine.evaluate(rule_project.facts()).outcomes}["exists"] == "active"
    assert counter.calls == 1


def test_a_projects_import_choice_leaves_the_users_own_memory_file_loaded(rule_project):
    rule_project.write({".pi/rules.toml": 'import = "none"\n', "CLAUDE.md": "Project memory.\n"})
    (rule_project.home / ".claude").mkdir()
    (rule_project.home / ".claude" / "CLAUDE.md").write_text("My memory.\n")
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert [(r.source, r.body) for r in discovery.rules] == [("global", "My memory.\n")]


def test_a_lint_ignore_entry_with_a_glob_silences_the_warnings_of_the_files_it_matches(rule_project):
    """``code:glob`` globs are cwd-relative."""
    rule_project.write({".pi/rules.toml": '[hosts.nobody]\nattach = false\n[lint]\nignore = ["unknown-host:.pi/*.toml"]\n'})
    engine = rule_project.engine()
    assert engine.discover(str(rule_project.cwd)).warnings == ()
    rule_project.write({".pi/rules.toml": '[hosts.nobody]\nattach = false\n[lint]\nignore = ["unknown-host:other/**"]\n'})
    assert [w.code for w in engine.discover(str(rule_project.cwd)).warnings] == ["unknown-host"]  # positive control


def test_resolve_reads_the_settings_for_the_folder_trust_and_host_it_is_asked_for(rule_project, monkeypatch):
    rule_project.write({".pi/rules.toml": "max_tokens = 3000\n"})
    engine = rule_project.engine()
    monkeypatch.chdir(rule_project.cwd.parent)
    default = engine.resolve(rule_project.cwd.name)
    assert (default.cwd, default.trusted, default.host, default.max_tokens) == (str(rule_project.cwd), True, None, 3000)
    untrusted = engine.resolve(rule_project.cwd.name, False, "pi")
    assert (untrusted.cwd, untrusted.trusted, untrusted.host, untrusted.max_tokens) == (
        str(rule_project.cwd), False, "pi", 2000)  # an untrusted project's file is not read


def test_an_empty_memory_files_explanation_names_the_rule_and_why_it_is_off(rule_project):
    rule_project.write({"CLAUDE.md": ""})
    entries = rule_project.engine().explain(rule_project.facts(), "a.py").entries
    assert [(e.rule.id, e.verdict, e.reasons) for e in entries] == [
        ("project/CLAUDE", "no-match", ("turned off: the file is empty, so there is nothing to send",))]


def test_without_a_section_the_section_is_empty_and_costs_no_tokens(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text("A.", alwaysApply=True)})
    nothing_active = rule_project.engine().evaluate(rule_project.facts(mutes=["a"]))
    no_renderer = rule_project.engine(blocked=["markdown"]).evaluate(rule_project.facts())
    assert [o.status for o in no_renderer.outcomes] == ["active"]
    for evaluation in (nothing_active, no_renderer):
        assert (evaluation.section, evaluation.section_tokens) == ("", 0)
