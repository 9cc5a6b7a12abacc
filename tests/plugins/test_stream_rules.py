"""Stream rules in the schema and the buckets (issue 6, items 1–2): strict keys, every bad
value an error with its fix, the scope grammar, and a stream rule never in the section."""

from __future__ import annotations

from rules_core.model import Facts

import pytest

from rules_hosts.cli import main
from rules_core.engine.core import Engine
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text
from rules_plugins import _ast
from rules_plugins._stream_grammar import (
    is_likely_file_glob,
    parse_condition,
    parse_scope,
    split_condition,
    split_top_level,
)


def errors(project, **engine_args):
    return [(e.kind, e.message) for e in project.engine(**engine_args).discover(str(project.cwd)).errors]


def outcome(project, rule_id, **facts):
    evaluation = project.engine().evaluate(project.facts(**facts))
    return next(o for o in evaluation.outcomes if o.rule.id == rule_id), evaluation


# -- the schema ------------------------------------------------------------------------------


def test_a_condition_alone_is_a_valid_activation_trigger(rule_project):
    rule_project.write({".pi/rules/x.md": rule_text(condition="TODO")})
    assert errors(rule_project) == []


def test_with_the_stream_plugin_blocked_the_keys_are_unknown_again(rule_project):
    rule_project.write({".pi/rules/x.md": rule_text(
        condition="TODO", scope="text", interruptMode="never", repeat="once", globs=["a"])})
    engine = Engine(fresh_manager(blocked=["stream"]), env={})
    kinds = sorted(e.message.split(" —")[0].split(";")[0] for e in engine.discover(str(rule_project.cwd)).errors)
    assert kinds == [
        "unknown key 'condition'", "unknown key 'interruptMode'", "unknown key 'repeat'", "unknown key 'scope'",
    ]


def test_native_rules_do_not_take_the_legacy_spelling(rule_project):
    rule_project.write({".pi/rules/x.md": rule_text(ttsr_trigger="TODO", globs=["a"])})
    assert errors(rule_project)[0][0] == "unknown-key"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("condition", "(unclosed", "condition: pattern '(unclosed' is not a valid regular expression "
         "(missing ) at position 9); escape special characters such as ( [ . * + ? with a backslash"),
        ("condition", "a*", "condition: pattern 'a*' matches empty text, so it would fire on every output; "
         "make it require at least one character (e.g. use + instead of *)"),
        ("condition", 3, 'condition: must be a string or a list of strings, e.g. condition: "console\\.log\\("'),
        ("condition", [], 'condition: is empty; write e.g. condition: "console\\.log\\(" or remove the key'),
        ("condition", "src/{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}/*.ts", "condition: file glob 'src/{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}/*.ts' cannot be used: "
         "brace expansion yields more than 1000 patterns"),
        ("scope", "txt", "scope: scope token 'txt' is not one of text, thinking, tool, tool:<name>, "
         "tool:<name>(<glob>) — did you mean 'text'?"),
        ("scope", "tool:edit()", "scope: scope token 'tool:edit()' has empty parentheses; write "
         "tool:edit(*.ts) or tool:edit"),
        ("scope", "tool:edit({a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v})", "scope: scope token 'tool:edit({a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v})': glob '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}' cannot be used"),
        ("interruptMode", "prose", "interruptMode: is 'prose'; use one of never, prose-only, tool-only, always "
         "— did you mean 'prose-only'?"),
        ("repeat", "twice", "repeat: is 'twice'; write repeat: once, or repeat: after-gap 3"),
        ("repeat", "after-gap 0", "repeat: is 'after-gap 0'; write repeat: once"),
    ],
)
def test_every_bad_value_is_an_invalid_value_error_with_its_fix(rule_project, key, value, message):
    keys = {"condition": "TODO", key: value}
    rule_project.write({".pi/rules/x.md": rule_text(**keys)})
    found = errors(rule_project)
    assert len(found) == 1 and found[0][0] == "invalid-value"
    assert found[0][1].startswith(message)


def test_ast_condition_without_ast_grep_is_reported_not_dropped(rule_project, monkeypatch):
    monkeypatch.setattr(_ast, "available", lambda: False)
    rule_project.write({".pi/rules/x.md": rule_text(astCondition="console.log($A)")})
    assert errors(rule_project) == [("invalid-value", "astCondition: " + _ast.INSTALL_HINT)]
    assert "pip install 'pi-rules[ast]'" in _ast.INSTALL_HINT


def test_imported_rules_accept_the_legacy_keys_and_validate_them_the_same_way(rule_project):
    rule_project.write({
        ".cursor/rules/legacy.mdc": "---\ndescription: d\nttsr_trigger: 'FIXME'\n---\nNo FIXMEs.\n",
        ".cursor/rules/broken.mdc": "---\ndescription: d\ncondition: '(oops'\n---\nBody.\n",
    })
    discovery = rule_project.engine().discover(str(rule_project.cwd))
    assert [r.id for r in discovery.rules] == ["legacy"]
    assert [(e.kind, e.path.rsplit("/", 1)[1]) for e in discovery.errors] == [("invalid-value", "broken.mdc")]
    assert "condition: pattern '(oops' is not a valid regular expression" in discovery.errors[0].message
    spec = rule_project.engine().hooks.stream_spec(discovery.rules[0])
    assert [p.source for p in spec.patterns] == ["FIXME"]


# -- buckets ----------------------------------------------------------------------------------


def test_a_stream_rule_never_enters_the_section_or_the_index(rule_project):
    rule_project.write({
        ".pi/rules/watch.md": rule_text("Never.", condition="TODO", globs=["**"]),
        ".pi/rules/lazy.md": rule_text("Lazy.", condition="TODO", load="on-demand", globs=["**"]),
        ".pi/rules/plain.md": rule_text("Plain.", globs=["**"]),
    })
    watch, evaluation = outcome(rule_project, "watch", touched=["a.ts"])
    assert watch.status == "inactive"
    assert watch.reasons == ("stream rule: fires when text, tool output matches /TODO/; "
                             "interruptMode always, repeat once",)
    assert [o.rule.id for o in evaluation.active] == ["plain"] and evaluation.on_demand == ()
    assert "Never." not in evaluation.section and "lazy" not in evaluation.section


def test_condition_beats_always_apply_and_the_report_says_so(rule_project):
    # oh-my-pi does the same silently ("the fourth bucket"); here the reason says it.
    rule_project.write({".pi/rules/both.md": rule_text("Both.", condition="TODO", alwaysApply=True)})
    both, evaluation = outcome(rule_project, "both")
    assert evaluation.section == ""
    assert both.reasons[0].endswith("(alwaysApply is ignored: a stream rule never enters the section)")


def test_read_rule_and_rule_urls_reach_stream_rules(rule_project):
    rule_project.write({".pi/rules/watch.md": rule_text("Watch body.", condition="TODO")})
    engine = rule_project.engine()
    rules = engine.discover(str(rule_project.cwd)).rules
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="rule://watch").body == "Watch body."
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="watch.md").body == "Watch body."


def test_explain_says_a_stream_rule_is_not_path_activated(rule_project, capsys):
    rule_project.write({".pi/rules/watch.md": rule_text(condition="TODO", globs=["src/**"])})
    assert main(["--cwd", str(rule_project.cwd), "explain", "src/a.ts"]) == 0
    assert "stream rule: fires when text, tool output matches /TODO/" in capsys.readouterr().out


def test_armed_specs_follow_agents_model_and_mutes(rule_project):
    rule_project.write({
        ".pi/rules/claude.md": rule_text(condition="TODO", model="claude-*"),
        ".pi/rules/scout.md": rule_text(condition="TODO", agents=["scout"]),
        ".pi/rules/all.md": rule_text(condition="TODO"),
    })
    engine = rule_project.engine()

    def armed(**facts):
        return [s.rule.id for s in engine.stream_specs(rule_project.facts(**facts))]

    assert armed() == ["all"]
    assert armed(model="claude-opus") == ["all", "claude"]
    assert armed(agent="scout", model="gpt-5") == ["all", "scout"]
    assert armed(mutes=frozenset({"all"})) == []


# -- the grammar (seed 003 §6.5) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        ("text, thinking", ("text", "thinking")),
        (["text", "thinking"], ("text", "thinking")),
        ('"text","thinking"', ("text", "thinking")),  # the malformed spelling oh-my-pi tolerates
        ("toolcall", ("tool",)),
        ("tool:edit(*.ts), tool:write(*.ts)", ("tool:edit(*.ts)", "tool:write(*.ts)")),
        ("tool:Edit(src/**/*.{ts,tsx})", ("tool:edit(src/**/*.{ts,tsx})",)),
        # A comma inside the parentheses separates globs (oh-my-pi kept one glob that never matched).
        ("tool:edit(a.ts, b.ts), text", ("tool:edit(a.ts)", "tool:edit(b.ts)", "text")),
        ("tool:bash", ("tool:bash",)),
        ("text, text", ("text",)),
    ],
)
def test_scope_cases(value, tokens):
    assert parse_scope(value) == tokens
    assert parse_scope(parse_scope(value)) == tokens  # canonical forms re-parse to themselves


def test_commas_inside_parentheses_brackets_or_braces_stay_together():
    assert split_top_level("tool:edit(a,b), [x,y], {c,d}, e") == ["tool:edit(a,b)", "[x,y]", "{c,d}", "e"]


@pytest.mark.parametrize(
    ("token", "is_glob"),
    [("*.rs", True), ("src/**/*.ts", True), ("*.{ts,tsx}", True), ("console.log", False),
     ("foo|bar", False), ("^\\*\\.ts$", False), ("*.ts(x)", False), ("todo*", False), ("a?b", False)],
)
def test_the_file_glob_shorthand_heuristic(token, is_glob):
    assert is_likely_file_glob(token) is is_glob


def test_a_file_glob_condition_becomes_edit_and_write_scopes():
    assert split_condition(parse_condition(["*.rs", "unsafe"])) == (
        ("unsafe",), ("tool:edit(*.rs)", "tool:write(*.rs)"))
    # Alone, it fires on any character written to such a file (never on nothing).
    assert split_condition(parse_condition("*.rs")) == (("(?s).",), ("tool:edit(*.rs)", "tool:write(*.rs)"))


def test_leading_flags_are_honoured_and_js_named_groups_translated(rule_project):
    rule_project.write({
        ".pi/rules/ci.md": rule_text(condition="(?i)pre.existing"),
        ".pi/rules/named.md": rule_text(condition="(?<word>ab)\\k<word>"),
    })
    engine = rule_project.engine()
    specs = {s.rule.id: s for s in engine.stream_specs(rule_project.facts())}
    assert specs["ci"].patterns[0].regex.search("A PRE-EXISTING bug")
    assert specs["named"].patterns[0].regex.search("xxababyy")
    assert not specs["named"].patterns[0].joinable
