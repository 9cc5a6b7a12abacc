"""Reading and validating rule-test files (`rules_core.rule_tests.cases`): every problem is an
error naming the line and the fix; whatever the input, nothing raises."""

from __future__ import annotations

import os

import yaml
from hypothesis import given, settings, strategies as st

from rules_core.discovery.reading import MAX_RULE_BYTES
from rules_core.rule_tests.cases import ErrorExpectation, parse_cases, read_case_file


def errors_of(text: str) -> list[tuple[int, str]]:
    return [(e.line, e.message) for e in parse_cases(text, "t.yaml").errors]


def test_a_full_case_reads_every_fact_and_expectation():
    (case,) = parse_cases("""\
- name: everything
  touched: [src/a.ts, src/a.ts, src/b.ts]
  prompt: fix the handler
  tool: [edit, read]
  model: claude-sonnet-4
  branch: release/1
  agent: reviewer
  host: pi
  env: {PI_RULES_MAX_TOKENS: 50, PI_RULES_OVERFLOW: index}
  expect:
    active: typescript
    not_active: [release]
    on_demand: [api]
    dropped: [big]
    errors: [yaml-syntax, {kind: invalid-value, path: /.pi/rules/x.md}]
    section_contains: "## typescript"
    tokens_at_most: 0
""", "t.yaml").cases
    assert case.line == 1 and case.touched == ("src/a.ts", "src/b.ts") and case.tools == ("edit", "read")
    assert (case.model, case.branch, case.agent, case.host) == ("claude-sonnet-4", "release/1", "reviewer", "pi")
    assert case.env == {"PI_RULES_MAX_TOKENS": "50", "PI_RULES_OVERFLOW": "index"}
    assert case.expect.active == ("typescript",) and case.expect.tokens_at_most == 0
    assert case.expect.errors == (ErrorExpectation("yaml-syntax"), ErrorExpectation("invalid-value", ".pi/rules/x.md"))
    assert not case.is_stream


def test_a_stream_case_reads_text_tool_and_path():
    (case,) = parse_cases("- name: s\n  text: console.log(1)\n  tool: edit\n  path: src/a.ts\n"
                          "  expect: {fires: [no-console], does_not_fire: quiet}\n", "t.yaml").cases
    assert case.is_stream and case.text == "console.log(1)" and case.tools == ("edit",) and case.path == "src/a.ts"
    assert case.expect.fires == ("no-console",) and case.expect.does_not_fire == ("quiet",)


def test_yaml_1_2_words_stay_text_so_a_branch_named_on_is_a_branch():
    (case,) = parse_cases("- name: x\n  branch: on\n  model: yes\n  expect: {active: [no]}\n", "t.yaml").cases
    assert (case.branch, case.model, case.expect.active) == ("on", "yes", ("no",))


def test_unknown_keys_get_a_did_you_mean():
    assert errors_of("- name: a\n  promt: hi\n  expect: {active: [x]}\n") == [
        (2, "case 'a': unknown key 'promt' — did you mean 'prompt'?")]
    assert errors_of("- name: a\n  expect:\n    on-demand: [x]\n") == [
        (3, "case 'a': unknown key 'expect.on-demand' — did you mean 'on_demand'?")]
    assert errors_of("- name: a\n  expect:\n    tokensAtMost: 3\n") == [
        (3, "case 'a': unknown key 'expect.tokensAtMost' — did you mean 'tokens_at_most'?")]
    assert errors_of("- name: a\n  dropped: [x]\n  expect: {active: [y]}\n") == [
        (2, "case 'a': unknown key 'dropped' — did you mean 'expect: {dropped: …}'? Expectations go under 'expect'")]
    assert errors_of("- name: a\n  expect: {errors: [{kind: x, file: y}]}\n") == [
        (2, "case 'a': unknown key 'expect.errors.file'; known keys: kind, path")]
    zzz = errors_of("- name: a\n  zzz: 1\n  expect: {active: [x]}\n")[0][1]
    assert zzz.startswith("case 'a': unknown key 'zzz'; known keys: name, touched")


def test_wrong_types_say_what_to_write():
    cases = {
        "  touched: 3\n": "'touched' must be text or a list of texts; quote numbers and words like true",
        "  model: [a]\n": "'model' must be text, not a list; quote it",
        "  env: [A]\n": "'env' must be a mapping of variable names to values, e.g. env: {PI_RULES_MAX_TOKENS: '50'}",
        "  env: {A: true}\n": "env A: a value must be text or a whole number, not true/false; quote it",
    }
    for fact, message in cases.items():
        ((line, got),) = errors_of(f"- name: a\n{fact}  expect: {{active: [x]}}\n")
        assert line == 2 and got == f"case 'a': {message}", got
    for expect, message in {
        "{tokens_at_most: true}": "'expect.tokens_at_most' must be a whole number of tokens (0 or more), not True",
        "{tokens_at_most: -1}": "'expect.tokens_at_most' must be a whole number of tokens (0 or more), not -1",
        "{active: ['']}": "'expect.active' has a blank rule id; write ids as `pi-rules list` shows them",
        "{errors: [3]}": "'expect.errors' items are error kinds or {kind, path} mappings, not a number",
        "{errors: [{path: a.md}]}": "each 'expect.errors' mapping needs a 'kind' (e.g. invalid-value)",
        "[active]": "'expect' must be a mapping, e.g. expect: {active: [my-rule]}",
        "{}": "'expect' is empty; say what must hold",
    }.items():
        ((_, got),) = errors_of(f"- name: a\n  expect: {expect}\n")
        assert got == f"case 'a': {message}", got


def test_stream_and_evaluation_expectations_do_not_mix():
    assert errors_of("- name: a\n  text: hi\n  expect: {active: [x]}\n") == [(3, (
        "case 'a': expect.active: a stream case (it has 'text') expects only fires/does_not_fire; "
        "put this in a case without 'text'"))]
    assert errors_of("- name: a\n  path: src/a.ts\n  expect: {active: [x]}\n") == [(2, (
        "case 'a': 'path' is the file a stream case's tool call writes; add 'text'"))]
    assert errors_of("- name: a\n  text: hi\n  tool: [edit, write]\n  expect: {fires: [x]}\n") == [(3, (
        "case 'a': a stream case's 'tool' is the one tool whose arguments 'text' is"))]


def test_the_document_shape_is_checked():
    assert errors_of("") == [(0, "the file is empty; write a list of cases (docs/testing-rules.md)")]
    assert errors_of("name: a\n") == [(1, "a test file is a list of cases: start each case with '- name: …'")]
    assert errors_of("- just text\n") == [(1, "a case is a mapping with 'name' and 'expect' (docs/testing-rules.md)")]
    assert errors_of("- expect: {active: [x]}\n") == [
        (1, "the case has no 'name'; add one (it names the case in the output)")]
    assert errors_of("- name: a\n") == [
        (1, "case 'a': the case has no 'expect'; say what must hold (e.g. expect: {active: [my-rule]})")]
    assert errors_of("- name: a\n  expect: {active: [x]}\n- name: a\n  expect: {active: [y]}\n") == [
        (3, "duplicate case name 'a' (first on line 1); give each case its own name")]
    assert errors_of("- name: a\n  name: b\n  expect: {active: [x]}\n") == [(2, "duplicate key 'name'; keep one of them")]


def test_one_bad_case_leaves_the_others_runnable():
    read = parse_cases("- name: good\n  expect: {active: [x]}\n- name: bad\n  tuched: a\n  expect: {active: [x]}\n"
                       "- name: also good\n  expect: {active: [y]}\n", "t.yaml")
    assert [c.name for c in read.cases] == ["good", "also good"] and len(read.errors) == 1


def test_hostile_yaml_is_refused_before_it_can_grow():
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
    bomb += "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    ((_, message),) = errors_of(f"- name: a\n  env:\n    {bomb.replace(chr(10), chr(10) + '    ')}\n  expect: {{active: [x]}}\n")
    assert "anchors and aliases are not allowed" in message
    ((_, deep),) = errors_of("- name: a\n  env: " + "[" * 5000 + "]" * 5000 + "\n  expect: {active: [x]}\n")
    assert "nested too deeply" in deep
    ((_, tag),) = errors_of("- name: !!binary aGk=\n  expect: {active: [x]}\n")
    assert "the tag 'tag:yaml.org,2002:binary' is not allowed here" in tag


def test_a_file_bigger_than_a_rule_file_is_not_read(tmp_path):
    big = tmp_path / "rules.test.yaml"
    big.write_text("- name: a\n  prompt: '" + "x" * MAX_RULE_BYTES + "'\n  expect: {active: [x]}\n")
    read = read_case_file(str(big))
    assert read.cases == () and len(read.errors) == 1
    assert read.errors[0].message.endswith("limit for a test file; split it into files under .pi/tests/")


def test_a_fifo_in_place_of_a_test_file_never_hangs(tmp_path):
    fifo = tmp_path / "rules.test.yaml"
    os.mkfifo(fifo)
    read = read_case_file(str(fifo))
    assert read.cases == () and "not a regular file" in read.errors[0].message


# -- whatever the document, the parser answers -------------------------------------------------

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                     st.sampled_from(["name", "expect", "active", "touched", "env", "text", "fires", "errors"]))
_keys = st.one_of(st.sampled_from(["name", "expect", "touched", "tool", "env", "text", "path", "active",
                                   "not_active", "errors", "tokens_at_most", "fires", "kind", "section_contains"]),
                  st.text(max_size=8))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_keys, inner, max_size=5)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(st.lists(_values, max_size=5))
def test_random_case_documents_give_cases_or_errors_never_an_exception(document):
    read = parse_cases(yaml.safe_dump(document), "t.yaml")
    assert all(e.file == "t.yaml" and e.line >= 0 and e.message for e in read.errors)
    assert len(read.cases) + len(read.errors) <= max(len(document), 1)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_random_text_never_raises(text):
    read = parse_cases(text, "t.yaml")
    assert read.cases or read.errors or text.strip().startswith("[") or text.strip() == ""
