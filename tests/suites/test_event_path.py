"""One Claude Code PostToolUse event, followed through the code (docs/architecture.md,
"One Claude Code PostToolUse event, through the wings"): the settings are resolved once
and the rooms it enters are counted.

"Enters" means: a function whose code lives in a module of ``rules_core`` or
``rules_hosts`` runs during the event, in a warm process (the start-up imports already
done, as in the resident hook server), counted with ``sys.setprofile``. Plugin modules
(what the plugin manager registers) are counted apart: their number grows with the
plugins installed, not with the house's layout.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import rules_core
import rules_hosts
import rules_core.settings.load as settings_load
from rules_core.engine.core import Engine
from rules_core.model import Facts
from rules_core.plugins.manager import make_plugin_manager
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_hosts.cli import app

# What the event enters today (docs/architecture.md says why not 12): a regression bound.
MAX_WING_MODULES = 47
MAX_ROOMS = 12  # the figure, met when counted by room (wing or package top)
_WINGS = tuple(str(Path(p.__file__).parent) + "/" for p in (rules_core, rules_hosts))


class _Counter:
    """Distinct wing modules whose functions run, and calls of the settings readers."""

    def __init__(self, plugin_files: set[str]) -> None:
        self.plugin_files = plugin_files
        self.modules: set[str] = set()
        self.resolutions = 0
        self.file_reads = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code.co_filename.startswith(_WINGS) and code.co_filename not in self.plugin_files:
            self.modules.add(code.co_filename)
        if code is settings_load.SettingsCache.settings.__code__:
            self.resolutions += 1
        elif code is settings_load.read_settings_text.__code__:
            self.file_reads += 1

    def run(self, action: Callable[[], Any]) -> Any:
        sys.setprofile(self)
        try:
            return action()
        finally:
            sys.setprofile(None)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cwd, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(cwd)], check=True)
    make_rules(cwd, {
        ".pi/rules/always.md": rule_text("Be kind to reviewers.", alwaysApply=True),
        ".pi/rules/ts.md": rule_text("Use strict TypeScript.", description="TypeScript", globs=["src/**/*.ts"]),
        ".pi/rules.toml": "max_tokens = 3000\n",
    })
    for name in [n for n in __import__("os").environ if n.startswith("PI_RULES_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PI_RULES_HOOK_SERVER", "off")  # in this process, as the server runs it
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(cwd)  # Claude Code runs its hooks in the project
    return cwd


def _hook(monkeypatch: pytest.MonkeyPatch, payload: dict[str, Any]) -> str:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload)))
    monkeypatch.setattr(sys, "stdout", out)
    try:
        assert app.main(["hook", "claude-code"]) == 0
    finally:
        monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    return out.getvalue()


def _plugin_files() -> set[str]:
    pm = make_plugin_manager(env={})
    return {getattr(plugin, "__file__", "") for _, plugin in pm.list_name_plugin() if plugin is not None}


def test_a_post_tool_use_event_reads_the_settings_once_and_enters_few_rooms(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = {"session_id": "s1", "cwd": str(project), "transcript_path": str(project / "t.jsonl")}
    assert "Be kind to reviewers." in _hook(monkeypatch, {**base, "hook_event_name": "SessionStart",
                                                          "source": "startup"})
    counter = _Counter(_plugin_files())
    post = {**base, "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": str(project / "src/a.ts")}, "tool_response": {"success": True}}
    output = counter.run(lambda: _hook(monkeypatch, post))
    assert "Use strict TypeScript." in output  # the event did the whole path: evaluated and attached
    assert counter.resolutions == 1
    assert counter.file_reads == 1  # .pi/rules.toml (the user file does not exist)
    rooms = {m.split("/site-packages/")[-1] for m in counter.modules}
    assert any(m.endswith("rules_core/engine/core.py") for m in rooms)
    assert any(m.endswith("rules_core/settings/resolved.py") for m in rooms)
    assert len(rooms) <= MAX_WING_MODULES, sorted(rooms)
    wings = {m.rsplit("/", 1)[0] for m in rooms}  # rules_core, rules_core/engine, rules_hosts/cli ...
    assert len(wings) <= MAX_ROOMS, sorted(wings)


def test_the_counter_sees_every_resolution_of_an_engine_used_without_one(project: Path) -> None:
    """Positive control: the library API without a ``Resolved`` value resolves once per
    public call, and the counter sees each."""
    engine = Engine(env={"HOME": str(project.parent / "home")})
    facts = Facts(cwd=str(project))
    counter = _Counter(set())
    counter.run(lambda: (engine.evaluate(facts), engine.explain(facts, "src/a.ts")))
    assert counter.resolutions == 2
    resolved = engine.resolve(str(project))
    again = _Counter(set())
    again.run(lambda: (engine.evaluate(facts, resolved=resolved), engine.explain(facts, "src/a.ts", resolved)))
    assert again.resolutions == 0


@pytest.mark.parametrize("argv", [["report", "--json", "--touched", "src/a.ts"], ["explain", "src/a.ts"],
                                  ["check"], ["config"], ["list"], ["map", "--format", "json"]])
def test_a_command_reads_the_settings_once(project: Path, monkeypatch: pytest.MonkeyPatch,
                                           argv: list[str]) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    counter = _Counter(set())
    code = counter.run(lambda: app.main(argv))
    output = sys.stdout.getvalue()  # type: ignore[attr-defined]
    monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    assert code == 0 and output
    assert counter.resolutions == 1


def test_settings_read_for_another_folder_are_never_applied(tmp_path: Path) -> None:
    rule = {".pi/rules/always.md": rule_text("Be kind to reviewers.", alwaysApply=True)}
    make_rules(tmp_path / "a", {**rule, ".pi/rules.toml": 'disable = ["always"]\n'})
    make_rules(tmp_path / "b", rule)
    engine = Engine(env={"HOME": str(tmp_path / "home")})
    read_in_a = engine.resolve(str(tmp_path / "a"))

    def status(folder: str) -> tuple[str, tuple[str, ...]]:
        outcome = engine.evaluate(Facts(cwd=str(tmp_path / folder)), resolved=read_in_a).outcomes[0]
        return outcome.status, outcome.reasons

    state, reasons = status("a")  # positive control: the value applies where it was read
    assert state == "inactive" and "disabled in .pi/rules.toml" in reasons[0]
    assert status("b")[0] == "active"
