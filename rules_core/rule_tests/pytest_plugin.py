"""Test helpers for pi-rules and its plugin authors (opt-in pytest plugin).

Enable with ``pytest_plugins = ["rules_core.rule_tests.pytest_plugin"]`` in a ``conftest.py``; then the
``rule_project`` fixture gives a fresh project, home directory and engine per test::

    def test_my_source(rule_project):
        rule_project.write({".pi/rules/style.md": rule_text(globs=["src/**"])})
        engine = rule_project.engine(plugins=[("mine", my_plugin)])
        assert [r.id for r in engine.discover(rule_project.cwd).rules] == ["style"]
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import pytest
import yaml

from rules_core.engine.core import Engine
from rules_core.plugins.manager import RulesPluginManager, make_plugin_manager
from rules_core.model import Facts


def rule_text(body: str = "Follow the rule.", *, description: str = "A test rule", **keys: Any) -> str:
    """A native (v1) rule file: ``version: 1``, the description and ``keys`` as given.

    Pass ``version=None`` or ``description=None`` to leave them out; keys are written in
    the order given (``always_apply`` style names are not translated: use ``alwaysApply``).
    """
    data: dict[str, Any] = {}
    if description is not None:
        data["description"] = description
    version = keys.pop("version", 1)
    if version is not None:
        data["version"] = version
    data.update(keys)
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True) if data else ""
    return f"---\n{front}---\n{body}\n"


def make_rules(root: str | os.PathLike[str], files: Mapping[str, str | bytes]) -> Path:
    """Write ``files`` (relative path -> text or bytes) below ``root``; returns ``root``."""
    base = Path(root)
    for relative, content in files.items():
        target = base / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return base


def fresh_manager(
    plugins: Iterable[tuple[str, object]] = (), blocked: Iterable[str] = ()
) -> RulesPluginManager:
    """Built-ins plus ``plugins``; installed entry points are NOT loaded (hermetic)."""
    return make_plugin_manager(blocked, entry_points=False, env={}, extra=plugins)


@dataclass
class RuleProject:
    """A project directory and a separate home directory for one test."""

    cwd: Path
    home: Path
    env: dict[str, str] = field(default_factory=dict)

    def write(self, files: Mapping[str, str | bytes]) -> Path:
        return make_rules(self.cwd, files)

    def write_global(self, files: Mapping[str, str | bytes]) -> Path:
        return make_rules(self.home / ".pi" / "agent" / "rules", files)

    def engine(
        self, plugins: Iterable[tuple[str, object]] = (), blocked: Iterable[str] = ()
    ) -> Engine:
        env = {"HOME": str(self.home), **self.env}
        return Engine(fresh_manager(plugins, blocked), home=str(self.home), env=env)

    def facts(self, **values: Any) -> Facts:
        values.setdefault("cwd", str(self.cwd))
        for key in ("touched", "tools"):
            if key in values:
                values[key] = tuple(values[key])
        if "mutes" in values:
            values["mutes"] = frozenset(values["mutes"])
        return Facts(**values)


@pytest.fixture
def rule_project(tmp_path: Path) -> RuleProject:
    cwd = tmp_path / "project"
    home = tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return RuleProject(cwd=cwd, home=home)


@pytest.fixture
def plugin_manager() -> RulesPluginManager:
    """A fresh, hermetic plugin manager (built-ins only) for each test."""
    return fresh_manager()


# -- declarative rule tests (docs/testing-rules.md) ------------------------------------------
# With this plugin enabled, pytest collects `.pi/rules.test.yaml` and `.pi/tests/*.yaml`:
# one item per case, failing with the text `pi-rules test` prints.

_PI_DIR = ".pi"


def _case_project(path: Path) -> Path | None:
    """The project a test file belongs to (the folder holding ``.pi``), or None when
    ``path`` is not a rule-test file."""
    if path.suffix != ".yaml":
        return None
    if path.name == "rules.test.yaml" and path.parent.name == _PI_DIR:
        return path.parent.parent
    if path.parent.name == "tests" and path.parent.parent.name == _PI_DIR:
        return path.parent.parent.parent
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> Iterator[None]:
    """pytest skips dot-folders (``norecursedirs``); ``.pi`` is entered so its test files
    are collected. An explicit ``--ignore`` or ``--ignore-glob`` still wins."""
    outcome = yield
    if outcome.get_result() and collection_path.name == _PI_DIR and collection_path.is_dir():
        if not _ignored_on_purpose(collection_path, config):
            outcome.force_result(False)


def _ignored_on_purpose(path: Path, config: pytest.Config) -> bool:
    resolved = path.resolve()
    if any(Path(p).resolve() == resolved for p in config.getoption("ignore", None) or []):
        return True
    return any(fnmatch.fnmatch(str(path), pattern) for pattern in config.getoption("ignore_glob", None) or [])


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _case_project(file_path) is None:
        return None
    return RuleTestFile.from_parent(parent, path=file_path)


class RuleTestFile(pytest.File):
    """One test file: an item per case, and one failing item per validation error."""

    def collect(self) -> Iterable[pytest.Item]:
        from rules_core.rule_tests.cases import read_case_file
        from rules_core.rule_tests.run import CaseRunner, project_engine

        project = _case_project(self.path) or self.path.parent
        read = read_case_file(str(self.path))
        for number, error in enumerate(read.errors, 1):
            yield RuleTestError.from_parent(self, name=f"invalid test file [{number}]", error=error)
        if read.cases:
            runner = CaseRunner(project_engine(str(project), os.environ), str(project))
            for case in read.cases:
                yield RuleTestItem.from_parent(self, name=case.name, case=case, runner=runner)


class RuleTestFailed(Exception):
    """A failed rule-test case; its message is the text ``pi-rules test`` prints."""


class RuleTestItem(pytest.Item):
    def __init__(self, *, case: Any, runner: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.runner = runner

    def runtest(self) -> None:
        from rules_core.rule_tests.report import case_lines

        result = self.runner.run(self.case)
        if not result.passed:
            raise RuleTestFailed("\n".join(case_lines(result, str(self.config.invocation_params.dir))))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RuleTestFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"rule test: {self.case.name}"


class RuleTestError(pytest.Item):
    def __init__(self, *, error: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        from rules_core.rule_tests.report import error_line

        raise RuleTestFailed(error_line(self.error, str(self.config.invocation_params.dir)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RuleTestFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, max(self.error.line - 1, 0), self.name
