"""Test helpers for pi-rules and its plugin authors (opt-in pytest plugin).

Enable with ``pytest_plugins = ["rules_core.testing"]`` in a ``conftest.py``; then the
``rule_project`` fixture gives a fresh project, home directory and engine per test::

    def test_my_source(rule_project):
        rule_project.write({".pi/rules/style.md": rule_text(globs=["src/**"])})
        engine = rule_project.engine(plugins=[("mine", my_plugin)])
        assert [r.id for r in engine.discover(rule_project.cwd).rules] == ["style"]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import pytest
import yaml

from .engine import Engine
from .manager import RulesPluginManager, make_plugin_manager
from .model import Facts


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
