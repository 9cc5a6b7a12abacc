"""Declarative rule tests (``pi-rules test``, docs/testing-rules.md): reading and
validating a case file.

A case file is a YAML list of cases. Each case gives facts (``touched``, ``prompt``,
``tool``, ``model``, ``branch``, ``agent``, ``host``, ``env``) and an ``expect`` mapping;
a stream case gives ``text`` (and ``tool``/``path``) and expects ``fires`` or
``does_not_fire``. The file is validated like a rule file: an unknown key or a wrong type
is an error naming the file, the line and the fix, never an exception. Running the cases
is ``rule_tests_run``'s job.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from rules_core.model import RuleError
from rules_core.discovery.reading import read_rule_text
from rules_core.rule_tests.yaml_cases import MAP_TAG, Problem, case_nodes, line_of, pairs_of, value_of

CASE_KEYS = ("name", "touched", "prompt", "tool", "model", "branch", "agent", "host", "env", "text", "path", "expect")
EVALUATION_EXPECT = ("active", "not_active", "on_demand", "dropped", "errors", "section_contains", "tokens_at_most")
STREAM_EXPECT = ("fires", "does_not_fire")
EXPECT_KEYS = (*EVALUATION_EXPECT, *STREAM_EXPECT)
# A test file is read like a rule file, and bounded beyond that: no YAML nesting deeper
# than a case needs, and no more cases than anyone writes by hand.
MAX_CASES = 5000



@dataclass(frozen=True)
class ErrorExpectation:
    """An expected error: its kind, and (when given) its path relative to the project."""

    kind: str
    path: str | None = None


@dataclass(frozen=True)
class Expect:
    """What a case expects; ``None`` means "not checked", an empty tuple "none at all"."""

    active: tuple[str, ...] = ()
    not_active: tuple[str, ...] = ()
    on_demand: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    errors: tuple[ErrorExpectation, ...] | None = None
    section_contains: tuple[str, ...] = ()
    tokens_at_most: int | None = None
    fires: tuple[str, ...] = ()
    does_not_fire: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleCase:
    """One case of a test file; ``line`` is where it starts (1-based)."""

    name: str
    file: str
    line: int
    expect: Expect
    touched: tuple[str, ...] = ()
    prompt: str = ""
    tools: tuple[str, ...] = ()
    model: str | None = None
    branch: str | None = None
    agent: str = "main"
    host: str | None = None
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    text: str | None = None  # set: a stream case
    path: str | None = None

    @property
    def is_stream(self) -> bool:
        return self.text is not None


@dataclass(frozen=True)
class CaseFileError:
    """A problem with a test file; ``line`` is 0 when the whole file is at fault."""

    file: str
    line: int
    message: str


@dataclass(frozen=True)
class CaseFile:
    path: str
    cases: tuple[RuleCase, ...]
    errors: tuple[CaseFileError, ...]


def read_case_file(path: str) -> CaseFile:
    """Read and validate one test file. Never raises."""
    text = read_rule_text(path)
    if text is None:
        return CaseFile(path, (), (CaseFileError(path, 0, "no such file; pass an existing test file"),))
    if isinstance(text, RuleError):
        # Same bounds as a rule file, but the fix for a test file is another test file.
        message = text.message.replace("for a rule; split it into smaller rules",
                                       "for a test file; split it into files under .pi/tests/")
        return CaseFile(path, (), (CaseFileError(path, 0, message),))
    return parse_cases(text, path)


def parse_cases(text: str, path: str) -> CaseFile:
    """Validate the text of a test file: the cases that are well formed, and one error
    per problem. Never raises."""
    try:
        nodes = case_nodes(text, "test file", MAX_CASES, "split the file under .pi/tests/", "docs/testing-rules.md")
    except Problem as problem:
        return CaseFile(path, (), (CaseFileError(path, problem.line, problem.message),))
    cases: list[RuleCase] = []
    errors: list[CaseFileError] = []
    names: dict[str, int] = {}
    for node in nodes:
        try:
            case = _case(node, path)
        except Problem as problem:
            errors.append(CaseFileError(path, problem.line, problem.message))
            continue
        if case.name in names:
            errors.append(CaseFileError(path, case.line, f"duplicate case name {case.name!r} (first on line "
                                        f"{names[case.name]}); give each case its own name"))
            continue
        names[case.name] = case.line
        cases.append(case)
    return CaseFile(path, tuple(cases), tuple(errors))


# -- one case ------------------------------------------------------------------------------


def _case(node: yaml.Node, path: str) -> RuleCase:
    line = line_of(node)
    if not isinstance(node, yaml.MappingNode) or node.tag != MAP_TAG:
        raise Problem(line, "a case is a mapping with 'name' and 'expect' (docs/testing-rules.md)")
    seen: set[int] = set()
    pairs = pairs_of(node, seen)
    if "name" not in pairs:
        raise Problem(line, "the case has no 'name'; add one (it names the case in the output)")
    name_line, name_node = pairs["name"]
    name = _text({"name": (value_of(name_node, seen), name_line)}, "name")
    if not name.strip():
        raise Problem(name_line, "'name' is blank; give the case a name")
    where = f"case {name!r}: "
    try:
        for key, (key_line, _) in pairs.items():
            if key not in CASE_KEYS:
                raise Problem(key_line, _unknown_case_key(key))
        values = {key: (value_of(node, seen), key_line) for key, (key_line, node) in pairs.items()
                  if key not in ("expect", "name")}
        stream = "text" in values
        if "path" in values and not stream:
            raise Problem(values["path"][1], "'path' is the file a stream case's tool call writes; add 'text'")
        if "expect" not in pairs:
            raise Problem(line, "the case has no 'expect'; say what must hold (e.g. expect: {active: [my-rule]})")
        expect = _expect(pairs["expect"][1], seen, stream)
        tools = _texts(values, "tool")
        if stream and len(tools) > 1:
            raise Problem(values["tool"][1], "a stream case's 'tool' is the one tool whose arguments 'text' is")
        return RuleCase(
            name=name, file=path, line=line, expect=expect,
            touched=_texts(values, "touched"), prompt=_text(values, "prompt", ""), tools=tools,
            model=_optional(values, "model"), branch=_optional(values, "branch"),
            agent=_optional(values, "agent") or "main", host=_optional(values, "host"),
            env=_env(values), text=_text(values, "text") if stream else None, path=_optional(values, "path"),
        )
    except Problem as problem:
        raise Problem(problem.line, where + problem.message) from None


def _expect(node: yaml.Node, seen: set[int], stream: bool) -> Expect:
    if not isinstance(node, yaml.MappingNode) or node.tag != MAP_TAG:
        raise Problem(line_of(node), "'expect' must be a mapping, e.g. expect: {active: [my-rule]}")
    pairs = pairs_of(node, seen)
    if not pairs:
        raise Problem(line_of(node), "'expect' is empty; say what must hold")
    allowed = STREAM_EXPECT if stream else EVALUATION_EXPECT
    for key, (key_line, _) in pairs.items():
        if key in allowed:
            continue
        if key in EXPECT_KEYS:
            raise Problem(key_line, f"expect.{key}: " + (
                "a stream case (it has 'text') expects only fires/does_not_fire; put this in a case without 'text'"
                if stream else "fires/does_not_fire check a stream rule against 'text'; add 'text' to the case"))
        raise Problem(key_line, _unknown(f"expect.{key}", key, EXPECT_KEYS))
    values = {key: (value_of(node, seen), key_line) for key, (key_line, node) in pairs.items()}
    return Expect(
        active=_ids(values, "active"), not_active=_ids(values, "not_active"),
        on_demand=_ids(values, "on_demand"), dropped=_ids(values, "dropped"),
        errors=_errors(values) if "errors" in values else None,
        section_contains=_texts(values, "section_contains", "expect."),
        tokens_at_most=_count(values) if "tokens_at_most" in values else None,
        fires=_ids(values, "fires"), does_not_fire=_ids(values, "does_not_fire"),
    )


# -- value checks ---------------------------------------------------------------------------

_Values = Mapping[str, tuple[Any, int]]


def _text(values: _Values, key: str, default: str | None = None) -> str:
    if key not in values and default is not None:
        return default
    value, line = values[key]
    if not isinstance(value, str):
        raise Problem(line, f"'{key}' must be text, not {_kind(value)}; quote it")
    return value


def _optional(values: _Values, key: str) -> str | None:
    if key not in values:
        return None
    value = _text(values, key)
    return value if value.strip() else None


def _texts(values: _Values, key: str, prefix: str = "") -> tuple[str, ...]:
    """A text or a list of texts (``touched: src/a.ts`` reads as ``[src/a.ts]``)."""
    if key not in values:
        return ()
    value, line = values[key]
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise Problem(line, f"'{prefix}{key}' must be text or a list of texts; quote numbers and words like true")
    return tuple(dict.fromkeys(items))


def _ids(values: _Values, key: str) -> tuple[str, ...]:
    ids = _texts(values, key, "expect.")
    if any(not i.strip() for i in ids):
        raise Problem(values[key][1], f"'expect.{key}' has a blank rule id; write ids as `pi-rules list` shows them")
    return ids


def _count(values: _Values) -> int:
    value, line = values["tokens_at_most"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Problem(line, f"'expect.tokens_at_most' must be a whole number of tokens (0 or more), not {value!r}")
    return value


def _errors(values: _Values) -> tuple[ErrorExpectation, ...]:
    value, line = values["errors"]
    items = [value] if isinstance(value, (str, dict)) else value
    if not isinstance(items, list):
        raise Problem(line, "'expect.errors' must be a list of error kinds or {kind, path} mappings")
    found = []
    for item in items:
        if isinstance(item, str) and item.strip():
            found.append(ErrorExpectation(item))
        elif isinstance(item, dict):
            for key in item:
                if key not in ("kind", "path"):
                    raise Problem(line, _unknown(f"expect.errors.{key}", str(key), ("kind", "path")))
            kind, where = item.get("kind"), item.get("path")
            if not isinstance(kind, str) or not kind.strip():
                raise Problem(line, "each 'expect.errors' mapping needs a 'kind' (e.g. invalid-value)")
            if where is not None and not isinstance(where, str):
                raise Problem(line, "'expect.errors' 'path' must be text: the file, relative to the project")
            found.append(ErrorExpectation(kind, where.strip("/") if where else None))
        else:
            raise Problem(line, f"'expect.errors' items are error kinds or {{kind, path}} mappings, not {_kind(item)}")
    return tuple(found)


# What a case's ``env`` may set (issue 26): the settings' own variables. A test file is the
# repository's; a variable such as COPILOT_CUSTOM_INSTRUCTIONS_DIRS or HOME would point
# pi-rules at folders outside the project (their files then load as global rules, links
# and all) and turn `section_contains` into an oracle for them in CI logs.
CASE_ENV = ("PI_RULES_MAX_TOKENS", "PI_RULES_OVERFLOW", "PI_RULES_IMPORT", "PI_RULES_ATTACH",
            "PI_RULES_DEADLINE_MS", "PI_RULES_STREAM_BUDGET_MS")


def _env(values: _Values) -> dict[str, str]:
    if "env" not in values:
        return {}
    value, line = values["env"]
    if not isinstance(value, dict):
        raise Problem(line, "'env' must be a mapping of variable names to values, e.g. env: {PI_RULES_MAX_TOKENS: '50'}")
    env = {}
    for key, item in value.items():
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise Problem(line, f"env {key}: a value must be text or a whole number, not {_kind(item)}; quote it")
        if key not in CASE_ENV:
            raise Problem(line, f"env {key}: a rule test may set only pi-rules' settings variables "
                                f"({', '.join(CASE_ENV)}); a test must not point pi-rules at other folders")
        env[key] = str(item)
    return env


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    return {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "a mapping"}.get(
        type(value), "text")


# -- did you mean ----------------------------------------------------------------------------


def _normal(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_")


def _unknown(shown: str, key: str, known: tuple[str, ...]) -> str:
    normal = _normal(key)
    close = [k for k in known if k == normal] or difflib.get_close_matches(normal, known, n=1, cutoff=0.6)
    if close:
        return f"unknown key {shown!r} — did you mean {close[0]!r}?"
    return f"unknown key {shown!r}; known keys: {', '.join(known)}"


def _unknown_case_key(key: str) -> str:
    normal = _normal(key)
    if normal in EXPECT_KEYS:  # an expectation written beside the facts
        return f"unknown key {key!r} — did you mean 'expect: {{{normal}: …}}'? Expectations go under 'expect'"
    return _unknown(key, key, CASE_KEYS)
