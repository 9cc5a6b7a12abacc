"""Docs that state facts are compared with the code (issue 32): the warning-code table of
docs/lint.md, the command plugins docs/architecture.md lists, the ``PI_RULES_*``
variables, the CLI options, and the claims issue 32 found stale."""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import pkgutil
import re
import subprocess
from pathlib import Path
from typing import Any

import rules_hosts.plugins
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text
from rules_core.engine.core import Engine
from rules_hosts.cli.app import _parser
from rules_plugins.lint_env import KNOWN, SUITE
from suite_helpers import cli_process, git_init

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rules_core", "rules_plugins", "rules_importers", "rules_hosts")
CODE_SHAPE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _docs() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))


# -- the warning codes --------------------------------------------------------------------


def _codes_in_code() -> set[str]:
    """Every code a ``RuleWarning`` is made with: a literal, a module constant, or (in
    lint_formats.py, whose checks return ``(code, message, key)`` findings) a tuple's first item."""
    codes: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            constants = {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                         and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                         for t in n.targets if isinstance(t, ast.Name)}
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and node.args
                        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "RuleWarning"):
                    continue
                first = node.args[0]
                if isinstance(first, ast.Constant):
                    codes.add(first.value)
                elif isinstance(first, ast.Name) and first.id in constants:
                    codes.add(constants[first.id])
                else:  # a variable: the module's (code, message[, key]) tuples name it
                    codes |= {n.elts[0].value for n in ast.walk(tree) if isinstance(n, ast.Tuple) and len(n.elts) in (2, 3)
                              and isinstance(n.elts[0], ast.Constant) and isinstance(n.elts[0].value, str)
                              and CODE_SHAPE.fullmatch(n.elts[0].value)}
    return codes


def test_the_warning_code_table_lists_exactly_the_codes_the_code_emits():
    text = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    table = text.split("## Every warning code", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.MULTILINE))
    assert documented == _codes_in_code()


def test_the_code_collector_sees_a_code_of_each_kind():
    # Positive control: a literal, a constant and a pair's code are each found.
    assert {"ignore-file-skipped", "unknown-host", "dead-glob", "ignored-key", "ignored-file"} <= _codes_in_code()


# -- the command plugins ------------------------------------------------------------------


class _Recorder:
    def __init__(self) -> None:
        self.names: list[str] = []

    def command(self, name: str, help: str, run: Any) -> argparse.ArgumentParser:
        self.names.append(name)
        return argparse.ArgumentParser()

    def hook(self, host: str, help: str, run: Any) -> argparse.ArgumentParser:
        return argparse.ArgumentParser()


def _plugin_commands() -> set[str]:
    recorder = _Recorder()
    for info in pkgutil.iter_modules(rules_hosts.plugins.__path__):
        module = importlib.import_module(f"rules_hosts.plugins.{info.name}")
        if hasattr(module, "pi_rules_cli_commands"):
            module.pi_rules_cli_commands(recorder)
    return set(recorder.names)


def test_architecture_lists_every_command_plugin():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `rules_hosts/plugins/` |"))
    listed = set(re.findall(r"`([a-z-]+)`", row.split("register", 1)[1].split("through")[0]))
    assert listed == _plugin_commands()
    modules = [m for m in pkgutil.iter_modules(rules_hosts.plugins.__path__)
               if hasattr(importlib.import_module(f"rules_hosts.plugins.{m.name}"), "pi_rules_cli_commands")]
    assert f"the {_NUMBERS[len(modules)]} command plugins" in row


_NUMBERS = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


# -- environment variables ------------------------------------------------------------------

# Named in the docs on purpose though nothing reads them: the lint page's example of a
# misspelt name, and the suite's knob family written as a prefix.
NOT_VARIABLES = {"PI_RULES_MAX_TOKEN", "PI_RULES_FUZZ"}


def _names(text: str) -> set[str]:
    return set(re.findall(r"PI_RULES_[A-Z0-9_]*[A-Z0-9]", text))


def test_every_variable_the_code_reads_is_known_and_documented():
    read = set()
    for path in [*(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")), *(ROOT / "hosts" / "pi").glob("*.ts")]:
        read |= _names(path.read_text(encoding="utf-8"))
    assert read - SUITE == set(KNOWN)
    assert set(KNOWN) <= _names(_docs())


def test_every_variable_the_docs_name_is_read():
    assert _names(_docs()) - set(KNOWN) - SUITE == NOT_VARIABLES


def test_the_suites_own_variables_are_the_ones_the_tests_read():
    tests = ROOT / "tests"
    read = set().union(*(_names(p.read_text(encoding="utf-8")) for p in tests.rglob("*.py")))
    assert SUITE <= read | {"PI_RULES_FUZZ_MATCH_SECONDS"}  # read by benchmarks/ too


# -- CLI options ----------------------------------------------------------------------------


def _options() -> dict[str, set[tuple[str, ...]]]:
    """Every command (``pi-rules`` for the global ones) -> its options' option strings."""
    found: dict[str, set[tuple[str, ...]]] = {}

    def walk(parser: argparse.ArgumentParser, where: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{where} {name}")
            elif action.option_strings and not isinstance(action, argparse._HelpAction):
                found.setdefault(where, set()).add(tuple(action.option_strings))

    walk(_parser(Engine(fresh_manager(), home=str(ROOT / "no-home"), env={})), "pi-rules")
    return found


def _mentioned(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_every_cli_option_is_documented():
    docs = _docs()
    missing = [f"{where}: {'/'.join(strings)}" for where, options in _options().items() for strings in options
               if not any(_mentioned(s, docs) for s in strings)]
    assert missing == []


def test_every_option_the_readme_names_exists():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    real = {s for options in _options().values() for strings in options for s in strings}
    # The README's test and install commands name pip's and pytest's options;
    others = {"--update-goldens", "--no-deps", "--wheel-dir", "--quiet", "--approve"}  # and Pi's own --approve
    assert set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", readme)) - real - others == set()


def test_check_has_no_max_tokens_option_as_docs_lint_says():
    done = cli_process("check", "--max-tokens", "5", cwd=ROOT)
    assert done.returncode == 2 and "unrecognized arguments: --max-tokens" in done.stderr
    options = _options()
    assert not any("--max-tokens" in strings for strings in options["pi-rules check"])
    assert any("--max-tokens" in strings for strings in options["pi-rules report"])  # the control


# -- stale claims --------------------------------------------------------------------------


def _cli(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(ROOT)}
    return cli_process("--cwd", str(cwd), *args, env=env)


def test_check_prints_lint_warnings_and_report_does_not(tmp_path):
    project, home = tmp_path / "p", tmp_path / "home"
    make_rules(project, {".pi/rules/a.md": rule_text("A.", description="a", globs=["nothing/**"]),
                         "src/x.ts": ""})
    git_init(project)
    checked = _cli(project, home, "check")
    assert "warning dead-glob" in checked.stdout, checked
    reported = _cli(project, home, "report", "--touched", "src/x.ts")
    assert reported.returncode == 0 and "warning" not in reported.stdout + reported.stderr


def test_trust_of_root_is_refused_and_records_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done = _cli(tmp_path, home, "trust", "/")
    assert done.returncode == 1 and "never trusts it" in done.stderr
    assert not (home / ".config" / "pi-rules" / "trusted.json").exists()
    project = tmp_path / "p"
    project.mkdir()
    assert _cli(project, home, "trust").returncode == 0  # the control: a project is recorded
    stored = json.loads((home / ".config" / "pi-rules" / "trusted.json").read_text())
    assert str(project.resolve()) in json.dumps(stored) and '"/"' not in json.dumps(stored)
