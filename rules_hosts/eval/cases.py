"""Reading eval case files (``.pi/evals/*.yaml``, docs/eval.md) with the bounded YAML of
rule tests: an unknown key or a wrong type is an error naming the file, the line and the
fix, never an exception."""

from __future__ import annotations

import difflib
import os
import shlex
from dataclasses import dataclass
from typing import Any

import yaml

from rules_core.model import RuleError
from rules_core.discovery.reading import read_rule_text
from rules_core.rule_tests.yaml_cases import MAP_TAG, Problem, case_nodes, line_of, pairs_of, value_of

CASE_KEYS = ("name", "rule", "prompt", "fixture", "runs", "runner", "command", "checks", "min_compliance", "variant")
CHECK_KEYS = ("file_contains", "file_lacks", "exists", "absent", "exit")
DEFAULT_RUNS = 5
DEFAULT_RUNNER = "claude-code"
MAX_CASES = 500  # each case starts agents: nobody writes more by hand
MAX_RUNS = 1000
MAX_CHECKS = 100


@dataclass(frozen=True)
class Check:
    """One check: ``kind`` is a ``CHECK_KEYS`` entry; ``path``/``text`` for files,
    ``command``/``status`` for ``exit``."""

    kind: str
    path: str = ""
    text: str = ""
    command: tuple[str, ...] = ()
    status: int = 0


@dataclass(frozen=True)
class EvalCase:
    name: str
    rule: str
    prompt: str
    fixture: str  # absolute folder
    runs: int
    runner: str
    command: tuple[str, ...]
    checks: tuple[Check, ...]
    min_compliance: float | None
    variant: str | None  # another body for the rule: a third arm
    file: str
    line: int


@dataclass(frozen=True)
class CaseFileError:
    file: str
    line: int
    message: str


def read_cases(path: str, project: str) -> tuple[list[EvalCase], list[CaseFileError]]:
    """The well-formed cases of one file and one error per problem. Never raises."""
    text = read_rule_text(path)
    if text is None:
        return [], [CaseFileError(path, 0, "no such file; pass an existing eval case file")]
    if isinstance(text, RuleError):
        return [], [CaseFileError(path, 0, text.message.replace("for a rule; split it into smaller rules",
                                                                "for a case file; split it into smaller files"))]
    try:
        nodes = case_nodes(text, "case file", MAX_CASES, "split the file", "docs/eval.md")
    except Problem as problem:
        return [], [CaseFileError(path, problem.line, problem.message)]
    cases: list[EvalCase] = []
    errors: list[CaseFileError] = []
    names: set[str] = set()
    for node in nodes:
        try:
            case = _case(node, path, project)
            if case.name in names:
                raise Problem(case.line, f"duplicate case name {case.name!r}; give each case its own name")
        except Problem as problem:
            errors.append(CaseFileError(path, problem.line, problem.message))
            continue
        names.add(case.name)
        cases.append(case)
    return cases, errors


def _case(node: yaml.Node, path: str, project: str) -> EvalCase:
    if not (isinstance(node, yaml.MappingNode) and node.tag == MAP_TAG):
        raise Problem(line_of(node), "a case is a mapping: 'name: …', 'rule: …', 'prompt: …', 'checks: […]'")
    seen: set[int] = set()
    pairs = pairs_of(node, seen)
    for key, (line, _) in pairs.items():
        if key not in CASE_KEYS:
            close = difflib.get_close_matches(key, CASE_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"the keys are {', '.join(CASE_KEYS)}"
            raise Problem(line, f"unknown key {key!r}; {hint}")
    values = {key: (line, value_of(value, seen, 1)) for key, (line, value) in pairs.items()}
    start = line_of(node)
    name = _text(values, "name", start, required=True)
    runner = _text(values, "runner", start) or DEFAULT_RUNNER
    command = _argv(values, "command", start)
    if runner == "command" and not command:
        raise Problem(start, f"case {name!r}: the command runner needs 'command: [program, arg…]'")
    checks = _checks(values, start)
    if not checks:
        raise Problem(start, f"case {name!r}: 'checks' is required: a list such as "
                             "[{file_contains: {path: src/a.py, text: '…'}}]")
    fixture = _text(values, "fixture", start)
    folder = os.path.normpath(os.path.join(os.path.dirname(path), fixture)) if fixture else project
    if not os.path.isdir(folder):
        raise Problem(values["fixture"][0], f"fixture {fixture!r} is not a folder next to {path}; "
                                            "give a folder relative to the case file")
    runs = values.get("runs", (start, DEFAULT_RUNS))
    if isinstance(runs[1], bool) or not isinstance(runs[1], int) or not 1 <= runs[1] <= MAX_RUNS:
        raise Problem(runs[0], f"'runs' must be a whole number from 1 to {MAX_RUNS}")
    floor = values.get("min_compliance", (start, None))
    if floor[1] is not None and (isinstance(floor[1], bool) or not isinstance(floor[1], (int, float))
                                 or not 0 <= floor[1] <= 1):
        raise Problem(floor[0], "'min_compliance' is a rate from 0 to 1, such as 0.8")
    return EvalCase(
        name=name, rule=_text(values, "rule", start, required=True),
        prompt=_text(values, "prompt", start, required=True), fixture=folder, runs=runs[1], runner=runner,
        command=command, checks=checks, min_compliance=None if floor[1] is None else float(floor[1]),
        variant=_text(values, "variant", start) or None, file=path, line=start,
    )


def _text(values: dict[str, tuple[int, Any]], key: str, start: int, required: bool = False) -> str:
    line, value = values.get(key, (start, None))
    if value is None:
        if required:
            raise Problem(start, f"'{key}' is required")
        return ""
    if not isinstance(value, str) or not value.strip():
        raise Problem(line, f"'{key}' must be non-empty text; quote it")
    return value


def _argv(values: dict[str, tuple[int, Any]], key: str, start: int) -> tuple[str, ...]:
    line, value = values.get(key, (start, None))
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise Problem(line, f"'{key}' cannot be split into words ({exc}); write a list [program, arg…]") from None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise Problem(line, f"'{key}' must be a list of words [program, arg…] or one command line")


def _checks(values: dict[str, tuple[int, Any]], start: int) -> tuple[Check, ...]:
    line, value = values.get("checks", (start, None))
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_CHECKS:
        raise Problem(line, f"'checks' is a list of at most {MAX_CHECKS} checks")
    return tuple(_check(item, line) for item in value)


def _check(item: Any, line: int) -> Check:
    if not isinstance(item, dict) or len(item) != 1:
        raise Problem(line, f"each check is one of {', '.join(CHECK_KEYS)}, such as {{exists: src/a.py}}")
    kind, body = next(iter(item.items()))
    if kind not in CHECK_KEYS:
        close = difflib.get_close_matches(str(kind), CHECK_KEYS, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(CHECK_KEYS)}"
        raise Problem(line, f"unknown check {kind!r}; {hint}")
    if kind in ("exists", "absent"):
        return Check(kind, path=_relative(body, kind, line))
    if kind == "exit":
        if not isinstance(body, dict) or set(body) - {"command", "status"} or "command" not in body:
            raise Problem(line, "'exit' is {command: [program, arg…], status: 0}")
        status = body.get("status", 0)
        if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 255:
            raise Problem(line, "'exit' status is a whole number from 0 to 255")
        return Check(kind, command=_argv({"command": (line, body["command"])}, "command", line), status=status)
    if not isinstance(body, dict) or set(body) != {"path", "text"} or not isinstance(body["text"], str):
        raise Problem(line, f"'{kind}' is {{path: a file in the project, text: 'what it must {'' if kind == 'file_contains' else 'not '}hold'}}")
    return Check(kind, path=_relative(body["path"], kind, line), text=body["text"])


def _relative(value: Any, kind: str, line: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Problem(line, f"'{kind}' needs a path relative to the project")
    norm = os.path.normpath(value)
    if os.path.isabs(value) or norm == ".." or norm.startswith("../") or "\0" in value:
        raise Problem(line, f"'{kind}' path {value!r} leaves the project; give a path inside it")
    return norm
