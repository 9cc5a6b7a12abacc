"""Round trip (issue 28): export generated native rules to each target, import the
exported files with pi-rules' own importer, and compare activation on a table of facts.

A rule is followed by its body (each generated body is unique): on each row of facts it is
*pinned* (its body reaches the section), *on-demand* (listed in the index) or *off*.
What a target cannot express is left out by the exporter; the test holds it to that
honestly: such a rule must be named in ``skipped`` with the condition, must be absent from
the import, and every other rule must activate exactly as the native one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules_core.engine.core import Engine
from rules_core.model import Facts
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text
from rules_hosts.cli import main

TARGETS = ("cursor", "copilot", "claude", "windsurf", "kiro", "continue", "cline", "agents-md", "gemini-md")
# What each target cannot say (docs/export.md): the exporter must leave those rules out.
NO_ON_DEMAND = {"copilot", "claude", "cline", "agents-md", "gemini-md"}
NO_GLOBS = {"agents-md", "gemini-md"}
GLOBS = ("src/**/*.ts", "**/*.py", "docs/**", "*.md", "lib/*.js", "{src,lib}/**/*.js", "tests/test_*.py",
         "!src/**/*.test.ts", "!docs/internal/**")
FACTS = ((), ("src/a.ts",), ("src/a.test.ts",), ("main.py",), ("pkg/mod/x.py",), ("docs/guide.md",),
         ("docs/internal/x.md",), ("README.md",), ("lib/a.js",), ("lib/sub/a.js",), ("tests/test_a.py",),
         ("src/x/y/z.js",), ("src/a.ts", "README.md"))
KINDS = ("always", "touched", "on-demand", "on-demand-globs", "tools", "model")

globs = st.lists(st.sampled_from(GLOBS), min_size=1, max_size=3, unique=True)
rules = st.lists(st.tuples(st.sampled_from(KINDS), globs), min_size=1, max_size=6)


def _native(kind: str, chosen: list[str], n: int) -> str:
    body = f"Body {n} of a {kind} rule."
    keys: dict[str, object] = {"globs": chosen, "match": "touched"}
    if kind == "always":
        keys = {"alwaysApply": True}
    elif kind == "on-demand":
        keys = {"alwaysApply": True, "load": "on-demand"}
    elif kind == "on-demand-globs":
        keys["load"] = "on-demand"
    elif kind == "tools":
        keys["tools"] = ["edit"]
    elif kind == "model":
        keys["model"] = "*sonnet*"
    return rule_text(body, description=f"Rule {n}, {kind}", **keys)


def _states(folder: str, home: str, importer: str, touched: tuple[str, ...]) -> dict[str, str]:
    """Each body marker's state (pinned / on-demand) under ``touched``; absent = off."""
    env = {"HOME": home, "PI_RULES_IMPORT": importer}
    engine = Engine(fresh_manager(), home=home, env=env)
    evaluation = engine.evaluate(Facts(cwd=folder, touched=touched, max_tokens=1_000_000, branch=None))
    states: dict[str, str] = {}
    for state, outcomes in (("pinned", evaluation.active), ("on-demand", evaluation.on_demand)):
        for outcome in outcomes:
            for line in outcome.rule.body.splitlines():
                if line.startswith("Body "):
                    states[line.split(" of ")[0]] = state
    return states


@pytest.mark.parametrize("target", TARGETS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(generated=rules)
def test_exported_rules_activate_as_the_native_ones(target, generated, monkeypatch, capsys):
    with tempfile.TemporaryDirectory() as scratch:
        native, out, home = (os.path.join(scratch, name) for name in ("native", "out", "home"))
        os.makedirs(home)
        monkeypatch.setenv("HOME", home)
        make_rules(native, {f".pi/rules/r{n}.md": _native(kind, chosen, n) for n, (kind, chosen) in enumerate(generated)})
        code = main(["--cwd", native, "--json", "export", "--to", target, "--out", out])
        report = json.loads(capsys.readouterr().out)
        assert code == 0
        skipped = {entry["rule"]: entry["reason"] for entry in report["skipped"]}
        for n, (kind, chosen) in enumerate(generated):
            cannot = kind in ("tools", "model") or (kind == "on-demand-globs") or (
                kind == "on-demand" and target in NO_ON_DEMAND) or (kind == "touched" and target in NO_GLOBS)
            assert (f"r{n}" in skipped) == cannot, (f"r{n}", kind, skipped)
        importer = "agents-md" if target == "agents-md" else target
        for touched in FACTS:
            expected = _states(native, home, "none", touched)
            expected = {body: state for body, state in expected.items() if f"r{body.split()[1]}" not in skipped}
            assert _states(out, home, importer, touched) == expected, (touched, Path(out).as_posix())


text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from("\n#:'\"-{}[]*&!|>%@`"),
               min_size=1, max_size=40)


@pytest.mark.parametrize("target", TARGETS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(description=text.filter(lambda t: t.strip() and "\n" not in t), body=text)
def test_any_description_and_body_come_back_without_errors(target, description, body, monkeypatch, capsys):
    """Whatever the text, the exported file parses in its own importer and keeps the body."""
    body = "Body 0 marker.\n" + body.replace("\r", "")
    with tempfile.TemporaryDirectory() as scratch:
        native, out, home = (os.path.join(scratch, name) for name in ("native", "out", "home"))
        os.makedirs(home)
        monkeypatch.setenv("HOME", home)
        make_rules(native, {".pi/rules/r0.md": rule_text(body, description=description, alwaysApply=True)})
        source = Engine(fresh_manager(), home=home, env={"HOME": home, "PI_RULES_IMPORT": "none"})
        native_rules = source.discover(native).rules
        if not native_rules:
            return  # the text did not make a valid native rule (e.g. a body that closes the frontmatter)
        assert main(["--cwd", native, "export", "--to", target, "--out", out]) == 0
        capsys.readouterr()
        env = {"HOME": home, "PI_RULES_IMPORT": target}
        found = Engine(fresh_manager(), home=home, env=env).discover(out)
        assert found.errors == ()
        assert any(native_rules[0].body.strip() in rule.body for rule in found.rules)
