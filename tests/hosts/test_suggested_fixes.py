"""Every fix an error names works (issue 15, item 5): take the message `check` prints,
apply its fix to the file literally, run `check` again.

The fix must clear the error; when a file has a second, independent problem the next
error is a different one, and its fix is walked the same way until `check` passes.
Where the fix carries a value, the rule that loads must hold what the author meant
(the glob ``src/\\[id\\]/*.ts`` keeps its backslashes, ``{sonnet,opus}`` stays a brace set).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rules_core.engine.core import Engine
from rules_hosts.cli import main

RULE = ".pi/rules/r.md"
HEAD = "---\ndescription: d\nversion: 1\n"


@pytest.fixture
def project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_IMPORT"):
        monkeypatch.delenv(name, raising=False)
    return rule_project


def check_errors(capsys, cwd: Path) -> tuple[int, list[dict[str, Any]]]:
    code = main(["--cwd", str(cwd), "--json", "check"])
    return code, json.loads(capsys.readouterr().out)["errors"]


# -- applying a message's fix literally ------------------------------------------------


def _key_index(lines: list[str], key: str) -> int | None:
    for index, line in enumerate(lines):
        if re.match(rf"{re.escape(key)}[ \t]*:", line):
            return index
    return None


def _set_line(lines: list[str], line: str, replace_key: str | None = None) -> None:
    """Write ``key: value`` over the entry of ``replace_key`` (default: its own key) —
    its line and the indented lines that continue it — or add it before the closing
    ``---``."""
    key = line.split(":", 1)[0]
    index = _key_index(lines, replace_key or key)
    if index is None:
        lines.insert(lines.index("---", 1), line)
        return
    end = index + 1
    while end < len(lines) and lines[end][:1] in (" ", "\t"):
        end += 1
    lines[index:end] = [line]


def _written_line(message: str) -> str | None:
    """The ``key: value`` a message says to write: the text after its last ``write``,
    the first of ``A or B``, the example after ``such as``."""
    found = re.search(r"(?:;|\?) write (.+)$", message)
    if not found:
        return None
    text = found.group(1)
    text = text.split("such as ", 1)[1] if "such as " in text else text
    text = text.split(" or ", 1)[0].rstrip(",")
    return text if re.match(r"[A-Za-z_]+: \S", text) else None


def apply_fix(text: str, error: dict[str, Any], alternative: int = 0) -> str:
    """``text`` with the fix ``error`` names applied exactly as a user would read it."""
    message, kind = error["message"], error["kind"]
    lines = text.split("\n")
    if kind == "missing-frontmatter":
        return "---\n" + text  # "must start with a '---' line"
    if "add a line containing only '---' after the last key" in message:
        last = max(i for i, line in enumerate(lines) if re.match(r"[A-Za-z_]+:", line))
        lines.insert(last + 1, "---")
        return "\n".join(lines)
    quoted = re.search(r"quote the value: (.+)$", message)
    if quoted:
        fixed = quoted.group(1)
        if fixed.startswith("- "):
            item = json.loads(fixed[2:])
            index = next(i for i, line in enumerate(lines) if line.strip() == f"- {item}")
            lines[index] = re.match(r"[ \t]*", lines[index]).group(0) + fixed
        else:
            _set_line(lines, fixed)
        return "\n".join(lines)
    duplicate = re.search(r"duplicate key '([^']+)'; keep one of them", message)
    if duplicate:
        indexes = [i for i, line in enumerate(lines) if line.startswith(f"{duplicate.group(1)}:")]
        del lines[indexes[-1]]
        return "\n".join(lines)
    unknown = re.match(r"unknown key '([^']+)'", message)
    if unknown:
        key = unknown.group(1)
        if "It is already set: remove" in message:
            del lines[_key_index(lines, key)]
        elif (line := _written_line(message)) is not None:
            _set_line(lines, line, replace_key=key)
        else:
            meant = re.search(r"did you mean '([^']+)'\?$", message).group(1)
            index = _key_index(lines, key)
            lines[index] = meant + lines[index][len(key):]
        return "\n".join(lines)
    if kind == "match-without-globs":
        if alternative == 0:
            del lines[_key_index(lines, "match")]  # "… or remove 'match'"
        else:
            _set_line(lines, re.search(r"'(globs: [^']+)'", message).group(1))
        return "\n".join(lines)
    if kind in ("missing-description", "no-activation-condition") or "write 'version: 1'" in message:
        # "add 'description: <…>'", "add … or 'alwaysApply: true'", "write 'version: 1'"
        _set_line(lines, re.findall(r"'([A-Za-z]+: [^']+)'", message)[-1])
        return "\n".join(lines)
    meant = re.search(r"^(\w+):? is .*; use one of ([^—]+?)(?: — did you mean '([^']+)'\?)?$", message)
    if meant:
        value = meant.group(3) or meant.group(2).split(", ")[0]
        _set_line(lines, f"{meant.group(1)}: {value}")
        return "\n".join(lines)
    near = re.search(r"^(\w+): .* — did you mean '([^']+)'\?$", message)
    if near:  # a plugin key's value: write the one meant, quoted
        _set_line(lines, f"{near.group(1)}: {json.dumps(near.group(2))}")
        return "\n".join(lines)
    line = _written_line(message)
    assert line is not None, f"the message names no fix to apply: {message}"
    _set_line(lines, line)
    return "\n".join(lines)


# -- the cases ------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    kind: str
    expect: dict[str, Any] = field(default_factory=dict)  # attributes of the rule that loads
    alternative: int = 0


CASES = [
    # Unquoted globs: YAML reads them as aliases, tags, flow mappings.
    Case("alias-glob", HEAD + "globs: *.ts\n---\nB\n", "yaml-syntax", {"globs": ("*.ts",)}),
    Case("alias-name-glob", HEAD + "globs: *ts\n---\nB\n", "yaml-syntax", {"globs": ("*ts",)}),
    Case("double-star", HEAD + "globs: **/*.ts\n---\nB\n", "yaml-syntax", {"globs": ("**/*.ts",)}),
    Case("comma-string", HEAD + "globs: **/*.ts, docs/**\n---\nB\n", "yaml-syntax",
         {"globs": ("**/*.ts", "docs/**")}),
    Case("brace-glob", HEAD + "globs: {src,lib}/**\n---\nB\n", "yaml-syntax", {"globs": ("{src,lib}/**",)}),
    Case("brace-set-mapping", HEAD + "globs: {a,b}\n---\nB\n", "invalid-value", {"globs": ("{a,b}",)}),
    Case("negation-tag", HEAD + "globs: !gen/**\n---\nB\n", "yaml-syntax", {"globs": ("!gen/**",)}),
    Case("flow-list", HEAD + "globs: [src/**, *.md]\n---\nB\n", "yaml-syntax", {"globs": ("src/**", "*.md")}),
    Case("flow-list-braces", HEAD + "globs: [src/{a,b}/**]\n---\nB\n", "yaml-syntax",
         {"globs": ("src/{a,b}/**",)}),
    Case("block-item", HEAD + 'globs:\n  - "src/**"\n  - !src/gen/**\n---\nB\n', "yaml-syntax",
         {"globs": ("src/**", "!src/gen/**")}),
    Case("block-item-alias", HEAD + "globs:\n  - *.ts\n---\nB\n", "yaml-syntax", {"globs": ("*.ts",)}),
    Case("comment-kept", HEAD + "globs: *.ts  # ts files\n---\nB\n", "yaml-syntax", {"globs": ("*.ts",)}),
    Case("anchor", HEAD + "globs: &a src\n---\nB\n", "yaml-syntax", {"globs": ("&a src",)}),
    Case("model-alias", HEAD + "model: *sonnet*\n---\nB\n", "yaml-syntax", {"model": "*sonnet*"}),
    Case("model-brace-set", HEAD + "model: {sonnet,opus}\n---\nB\n", "invalid-value", {"model": "{sonnet,opus}"}),
    Case("colon-in-value", "---\ndescription: Style: strict\nversion: 1\nalwaysApply: true\n---\nB\n",
         "yaml-syntax", {"description": "Style: strict"}),
    # A string where a list belongs.
    Case("glob-string", HEAD + "globs: src/**\n---\nB\n", "invalid-value", {"globs": ("src/**",)}),
    Case("glob-backslashes", HEAD + "globs: src/\\[id\\]/*.ts\n---\nB\n", "invalid-value",
         {"globs": ("src/\\[id\\]/*.ts",)}),
    Case("glob-comma-string", HEAD + 'globs: "src/**, docs/{a,b}/**"\n---\nB\n', "invalid-value",
         {"globs": ("src/**", "docs/{a,b}/**")}),
    Case("glob-number-item", HEAD + 'globs: ["a", 3]\n---\nB\n', "invalid-value", {"globs": ("a", "3")}),
    Case("tools-string", HEAD + "tools: edit\n---\nB\n", "invalid-value", {"tools": ("edit",)}),
    Case("keywords-string", HEAD + "keywords: a, b\nglobs: ['x']\n---\nB\n", "invalid-value",
         {"keywords": ("a", "b")}),
    Case("block-scalar", HEAD + "globs: |\n  *.ts\n---\nB\n", "invalid-value", {"globs": ("*.ts",)}),
    # Unknown keys: the did-you-mean, whole.
    Case("unknown-key-list", HEAD + 'glob: ["src/**"]\n---\nB\n', "unknown-key", {"globs": ("src/**",)}),
    Case("unknown-key-string", HEAD + "glob: src/**\n---\nB\n", "unknown-key", {"globs": ("src/**",)}),
    Case("unknown-key-already-set", HEAD + 'glob: ["a"]\nglobs: ["b"]\n---\nB\n', "unknown-key", {"globs": ("b",)}),
    Case("unknown-key-bool", HEAD + "alwaysapply: yes\n---\nB\n", "unknown-key", {"always_apply": True}),
    Case("unknown-key-choice", HEAD + "loads: ondemand\nalwaysApply: true\n---\nB\n", "unknown-key",
         {"load": "on-demand"}),
    Case("unknown-key-bad-int", HEAD + "prio: high\nalwaysApply: true\n---\nB\n", "unknown-key", {"priority": 10}),
    Case("unknown-key-case", HEAD + "AlwaysApply: true\n---\nB\n", "unknown-key", {"always_apply": True}),
    # Version and description.
    Case("version-float", "---\ndescription: d\nversion: 1.0\nalwaysApply: true\n---\nB\n", "invalid-version"),
    Case("version-string", "---\ndescription: d\nversion: '1'\nalwaysApply: true\n---\nB\n", "invalid-version"),
    Case("version-missing", "---\ndescription: d\nalwaysApply: true\n---\nB\n", "invalid-version"),
    Case("description-missing", "---\nversion: 1\nalwaysApply: true\n---\nB\n", "missing-description"),
    Case("description-blank", "---\ndescription: ''\nversion: 1\nalwaysApply: true\n---\nB\n",
         "missing-description"),
    Case("description-number", "---\ndescription: 5\nversion: 1\nalwaysApply: true\n---\nB\n", "invalid-value",
         {"description": "5"}),
    # Values of the wrong type or out of range.
    Case("bool-yes", HEAD + "alwaysApply: yes\n---\nB\n", "invalid-value", {"always_apply": True}),
    Case("bool-number", HEAD + "alwaysApply: 1\n---\nB\n", "invalid-value", {"always_apply": True}),
    Case("bool-unreadable", HEAD + "alwaysApply: sure\n---\nB\n", "invalid-value", {"always_apply": True}),
    Case("choice-near-miss", HEAD + "load: ondemand\nalwaysApply: true\n---\nB\n", "invalid-value",
         {"load": "on-demand"}),
    Case("choice-far-miss", HEAD + "enforcement: must\nalwaysApply: true\n---\nB\n", "invalid-value",
         {"enforcement": "enforce"}),
    Case("int-string", HEAD + "priority: '5'\nalwaysApply: true\n---\nB\n", "invalid-value", {"priority": 5}),
    Case("int-float", HEAD + "priority: 1.5\nalwaysApply: true\n---\nB\n", "invalid-value", {"priority": 10}),
    Case("string-list", HEAD + "model: [a]\n---\nB\n", "invalid-value", {"model": "a"}),
    Case("string-bool", HEAD + "branch: true\n---\nB\n", "invalid-value", {"branch": "true"}),
    Case("string-mapping", HEAD + "model: {a: 1}\n---\nB\n", "invalid-value", {"model": "*sonnet*"}),
    # Structure.
    Case("match-without-globs-remove", HEAD + "match: touched\ntools: [edit]\n---\nB\n", "match-without-globs",
         {"match": "both"}),
    Case("match-without-globs-add", HEAD + "match: touched\ntools: [edit]\n---\nB\n", "match-without-globs",
         {"globs": ("src/**",)}, alternative=1),
    Case("no-activation", HEAD + "---\nB\n", "no-activation-condition", {"always_apply": True}),
    Case("duplicate-key", HEAD + 'globs: ["a"]\nglobs: ["b"]\n---\nB\n', "yaml-syntax", {"globs": ("a",)}),
    Case("unclosed", HEAD + 'globs: ["a"]\nB\n', "yaml-syntax", {"globs": ("a",)}),
    # Keys a plugin adds to the native schema (stream rules).
    Case("plugin-choice", HEAD + 'condition: "foo"\ninterruptMode: sometimes\n---\nB\n', "invalid-value"),
    Case("plugin-write", HEAD + 'condition: "foo"\nrepeat: twice\n---\nB\n', "invalid-value"),
    Case("plugin-near-miss", HEAD + 'condition: "foo"\nscope: "tol:edit"\n---\nB\n', "invalid-value"),
    Case("plugin-unknown-key", HEAD + 'conditon: "foo"\n---\nB\n', "unknown-key"),
    Case("no-opening-line", 'description: d\nversion: 1\nglobs: ["a"]\n---\nB\n', "missing-frontmatter"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_fix_an_error_names_makes_check_pass(capsys, project, case):
    path = project.cwd / RULE
    project.write({RULE: case.text})
    code, errors = check_errors(capsys, project.cwd)
    assert code == 1 and [e["kind"] for e in errors] == [case.kind], errors
    seen = []
    for _ in range(3):  # the first fix, then at most two independent follow-ups
        error = errors[0]
        assert (error["kind"], error["message"]) not in seen, f"the fix led back to the same error: {error}"
        seen.append((error["kind"], error["message"]))
        path.write_text(apply_fix(path.read_text(encoding="utf-8"), error, case.alternative), encoding="utf-8")
        code, errors = check_errors(capsys, project.cwd)
        if not errors:
            break
    assert (code, errors) == (0, []), f"after {seen} the file still has errors; it reads:\n{path.read_text()}"
    assert len(seen) == 1, f"the first fix was not whole; it took {seen}"
    rule = only_rule(project)
    for name, value in case.expect.items():
        assert getattr(rule, name) == value, (name, getattr(rule, name))


def only_rule(project):
    discovery = Engine(home=str(project.home), env={"HOME": str(project.home)}).discover(str(project.cwd), True)
    assert discovery.errors == () and len(discovery.rules) == 1
    return discovery.rules[0]


def test_two_independent_problems_are_fixed_one_after_the_other(capsys, project):
    path = project.cwd / RULE
    project.write({RULE: "---\ndescription: d\nversion: 1.0\nglob: src/**\n---\nB\n"})
    code, errors = check_errors(capsys, project.cwd)
    assert code == 1 and sorted(e["kind"] for e in errors) == ["invalid-version", "unknown-key"]
    for error in errors:  # both named at once, each fix independent of the other
        path.write_text(apply_fix(path.read_text(encoding="utf-8"), error), encoding="utf-8")
    assert check_errors(capsys, project.cwd) == (0, [])
    assert only_rule(project).globs == ("src/**",)


def test_a_duplicate_key_hint_is_not_mistaken_for_a_quoting_problem(capsys, project):
    # `[a: b]` is valid YAML (a list holding a mapping) that a quoting fix would rewrite;
    # the duplicate's message must stay its own all the same.
    project.write({RULE: HEAD + 'keywords: [a: b]\nglobs: ["a"]\nglobs: ["b"]\n---\nB\n'})
    _, errors = check_errors(capsys, project.cwd)
    assert errors[0]["message"].endswith("duplicate key 'globs'; keep one of them")


# -- whatever the value, the quoting fix is what YAML reads back -----------------------------

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rules_core.model import RuleFile  # noqa: E402
from rules_plugins.native_fixes import split_commas  # noqa: E402
from rules_plugins.schema_v1 import parse_v1  # noqa: E402

_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30)
# Values a person types unquoted: most start with what YAML cannot read plainly.
_VALUE = st.one_of(
    st.tuples(st.sampled_from(list("*&!%@`{[") + ["**/", "src/{a,b}/", "[*.ts, ", "a: "]), _TEXT).map("".join),
    _TEXT,
).filter(lambda v: v.strip() == v and "\n" not in v and "\ufeff" not in v
          # U+FFFE/U+FFFF are outside YAML's printable set: no quoting can carry them (a yaml-syntax error).
          and "\ufffe" not in v and "\uffff" not in v)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(["globs", "model", "description"]), value=_VALUE)
@example(key="model", value="[*.ts, ]")  # found by hypothesis: a model is text, never a list
@example(key="globs", value="[*.ts, ]")
def test_a_quoting_fix_gives_back_the_value_as_written(key, value):
    head = {"globs": "description: d\nversion: 1\n", "model": "description: d\nversion: 1\n",
            "description": "version: 1\nalwaysApply: true\n"}[key]
    text = f"---\n{head}{key}: {value}\n---\nB\n"
    rule_file = RuleFile(path="/p/.pi/rules/r.md", rules_root="/p/.pi/rules", relative_path="r.md", base="/p",
                         plugin="native", schema="v1", source="project", order=(0, 0, "", "r.md"))
    result = parse_v1(rule_file, text, {})
    quoted = [e for e in result.errors if "quote the value: " in e.message]
    if not quoted:
        return
    fixed = quoted[0].message.split("quote the value: ", 1)[1]
    assert fixed.startswith(f"{key}: ")
    again = parse_v1(rule_file, text.replace(f"{key}: {value}\n", fixed + "\n"), {})
    assert again.rule is not None, (fixed, again.errors)
    written = re.split(r"[ \t]+#", value)[0]  # a trailing comment stays a comment
    if key == "globs" and written.startswith("[") and written.endswith("]"):  # a flow list: its items
        assert again.rule.globs == tuple(split_commas(written[1:-1]))
    elif key == "globs":  # a comma string is split outside {…}, as the message says
        assert again.rule.globs == tuple(split_commas(written) or [written])
    else:
        assert getattr(again.rule, key) == written
