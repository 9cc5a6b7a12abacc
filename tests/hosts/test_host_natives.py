"""Files a host's agent reads itself are left out for that host, and shown as such."""

from __future__ import annotations

import json
import subprocess

import pytest

from rules_core.model import Facts, HostInfo
from rules_core.rule_tests.pytest_plugin import fresh_manager
from rules_core import Engine, hookimpl
from rules_hosts.cli import main

ROOT_AGENTS = "# Repository guide\n\nRun `make test` before committing.\n"
NESTED_AGENTS = "# Web package\n\nUse pnpm here.\n"
CLAUDE_RULE = "---\npaths: src/**\n---\n# Claude rule\n\nPrefer small functions.\n"


@pytest.fixture
def repo(rule_project):
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    rule_project.write({
        "AGENTS.md": ROOT_AGENTS,
        "packages/web/AGENTS.md": NESTED_AGENTS,
        "packages/web/src/app.ts": "",
        ".claude/rules/style.md": CLAUDE_RULE,
    })
    return rule_project


def _report(repo, monkeypatch, capsys, *args: str) -> dict:
    monkeypatch.setenv("HOME", str(repo.home))
    monkeypatch.delenv("PI_RULES_IMPORT", raising=False)
    assert main(["--cwd", str(repo.cwd), "--json", "report", *args]) == 0
    return {o["id"]: o for o in json.loads(capsys.readouterr().out)["rules"]}


def _statuses(report: dict) -> dict:
    return {rule_id: outcome["status"] for rule_id, outcome in report.items()}


def test_without_a_host_every_file_is_sent(repo, monkeypatch, capsys):
    report = _report(repo, monkeypatch, capsys, "--touched", "src/a.ts")
    assert _statuses(report) == {"style": "active", "project/AGENTS": "active", "project/packages/web/AGENTS": "inactive"}


def test_claude_code_leaves_out_its_rules_and_agents_md_where_no_claude_md_is(repo, monkeypatch, capsys):
    report = _report(repo, monkeypatch, capsys, "--touched", "packages/web/src/app.ts", "--host", "claude-code")
    assert _statuses(report) == {
        "style": "inactive", "project/AGENTS": "inactive", "project/packages/web/AGENTS": "inactive",
    }
    assert report["style"]["reasons"] == [
        "Claude Code reads this file itself; pi-rules leaves it out so it is not sent twice"
    ]
    assert report["project/AGENTS"]["reasons"][0].startswith("Claude Code reads AGENTS.md itself")


def test_claude_code_does_not_read_agents_md_when_a_claude_md_is_in_the_way(repo, monkeypatch, capsys):
    repo.write({"CLAUDE.md": "# Claude\n\nSee the docs.\n"})
    report = _report(repo, monkeypatch, capsys, "--host", "claude-code")
    assert report["project/AGENTS"]["status"] == "active"


def test_pi_leaves_out_agents_md_of_cwd_and_above_but_not_nested_ones(repo, monkeypatch, capsys):
    report = _report(repo, monkeypatch, capsys, "--touched", "packages/web/src/app.ts", "--touched", "src/a.ts",
                     "--host", "pi")
    assert _statuses(report) == {
        "style": "active", "project/AGENTS": "inactive", "project/packages/web/AGENTS": "active",
    }
    assert report["project/AGENTS"]["reasons"] == [
        "Pi reads this file itself (one AGENTS.md or CLAUDE.md per folder from cwd up); not sent twice"
    ]


def test_pi_rules_import_overrides_the_host(repo, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(repo.home))
    monkeypatch.setenv("PI_RULES_IMPORT", "claude,agents-md")
    assert main(["--cwd", str(repo.cwd), "--json", "report", "--host", "claude-code"]) == 0
    report = {o["id"]: o["status"] for o in json.loads(capsys.readouterr().out)["rules"]}
    assert report["project/AGENTS"] == "active"


def test_render_for_a_host_leaves_its_files_out_of_the_section(repo, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(repo.home))
    monkeypatch.delenv("PI_RULES_IMPORT", raising=False)
    assert main(["--cwd", str(repo.cwd), "render", "--touched", "src/a.ts", "--host", "claude-code"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["--cwd", str(repo.cwd), "render", "--touched", "src/a.ts"]) == 0
    assert "Run `make test` before committing." in capsys.readouterr().out


def test_an_unknown_host_name_is_refused_with_the_known_ones(repo, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--cwd", str(repo.cwd), "report", "--host", "vim"])
    assert exit_info.value.code == 2
    assert "claude-code" in capsys.readouterr().err


def test_read_rule_for_a_host_does_not_reach_what_it_leaves_out(repo):
    engine = repo.engine()
    facts = Facts(cwd=str(repo.cwd), host="claude-code")
    assert engine.read_rule(facts, "style.md").rule is None
    assert engine.read_rule(Facts(cwd=str(repo.cwd)), "style.md").rule is not None


class _Editor:
    """A third-party host whose agent reads every AGENTS.md itself."""

    @hookimpl
    def pi_rules_hosts(self):
        return [HostInfo("my-editor", "an editor", self.reads)]

    @staticmethod
    def reads(rule, facts):
        return "my-editor reads AGENTS.md" if rule.file.plugin == "agents-md" else None


class _Broken:
    @hookimpl
    def pi_rules_hosts(self):
        def reads(rule, facts):
            raise RuntimeError("boom")
        return [HostInfo("broken", "a host whose check fails", reads)]


def test_a_third_party_host_declares_what_its_agent_reads(repo):
    engine = Engine(fresh_manager([("editor", _Editor())]), home=str(repo.home), env={"HOME": str(repo.home)})
    evaluation = engine.evaluate(Facts(cwd=str(repo.cwd), host="my-editor"))
    statuses = {o.rule.id: (o.status, o.reasons) for o in evaluation.outcomes}
    assert statuses["project/AGENTS"] == ("inactive", ("my-editor reads AGENTS.md",))
    assert statuses["style"][0] == "inactive"  # globs: nothing touched


def test_a_host_check_that_fails_leaves_the_rule_in(repo):
    engine = Engine(fresh_manager([("broken", _Broken())]), home=str(repo.home), env={"HOME": str(repo.home)})
    evaluation = engine.evaluate(Facts(cwd=str(repo.cwd), host="broken"))
    assert {o.rule.id: o.status for o in evaluation.outcomes}["project/AGENTS"] == "active"


def test_plugins_lists_the_hosts(monkeypatch, capsys, rule_project):
    assert main(["--cwd", str(rule_project.cwd), "--json", "plugins"]) == 0
    hosts = json.loads(capsys.readouterr().out)["hosts"]
    assert [h["name"] for h in hosts] == ["claude-code", "codex", "copilot", "cursor", "gemini", "kiro", "pi",
                                          "windsurf"]
    assert main(["--cwd", str(rule_project.cwd), "plugins"]) == 0
    assert ("\nhosts (--host NAME leaves out what that host's agent reads itself; a preview shows what its agent "
            "loads by itself):\n  claude-code  ") in capsys.readouterr().out
