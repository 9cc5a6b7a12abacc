"""All formats in one repository: one namespace, one order, one golden listing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from golden_files import check_golden
from rules_hosts.cli import main
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

FIXTURES = Path(__file__).parent.parent / "fixtures" / "importers"


@pytest.fixture
def everything(tmp_path, monkeypatch) -> Path:
    """Every importer's fixture repository merged into one, plus colliding names."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for fixture in sorted(FIXTURES.iterdir()):
        shutil.copytree(fixture, repo, dirs_exist_ok=True)
    make_rules(repo, {
        ".pi/rules/typescript.md": rule_text("Native TS.", globs=["src/**/*.ts"], match="touched"),
        ".github/instructions/typescript.instructions.md": "---\napplyTo: 'src/**/*.{ts,tsx}, docs/**'\n---\nCopilot TS.\n",
        ".claude/rules/typescript.md": "---\npaths:\n  - src/**/*.ts\n---\n# TypeScript for Claude\nClaude TS.\n",
    })
    home = tmp_path / "home"
    make_rules(home, {".pi/agent/rules/typescript.md": rule_text("Global TS.", globs=["**/*.ts"], match="touched")})
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_MAX_TOKENS", "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"):
        monkeypatch.delenv(name, raising=False)
    return repo


def listing(capsys, repo: Path, *args: str) -> dict:
    code = main(["--cwd", str(repo), *args, "--json", "list"])
    assert code == 0
    return json.loads(capsys.readouterr().out.replace(str(repo.parent), "<tmp>"))


def test_spec_example_one_namespace_across_sources(capsys, everything):
    rules = listing(capsys, everything)["rules"]
    ts = [(r["id"], r["plugin"], r["relativePath"]) for r in rules if r["id"].startswith("typescript")]
    assert ts[:3] == [
        ("typescript", "native", "typescript.md"),
        ("typescript-2", "copilot", "typescript.instructions.md"),
        ("typescript-3", "claude", "typescript.md"),
    ]
    assert ts[-1][1] == "global" and ts[-1][0] == f"typescript-{len(ts)}"


def test_importers_come_after_nested_and_before_global_in_fixed_order(capsys, everything):
    plugins = [r["plugin"] for r in listing(capsys, everything)["rules"]]
    order = ["native", "nested", "copilot", "claude", "cursor", "windsurf", "cline", "agents", "global"]
    seen = [p for i, p in enumerate(plugins) if p not in plugins[:i]]
    assert [p for p in order if p in seen] == [p for p in seen if p in order]
    assert seen[-1] == "global"


def test_import_none_leaves_only_native_sources(capsys, everything, monkeypatch):
    monkeypatch.setenv("PI_RULES_IMPORT", "  None ")
    plugins = {r["plugin"] for r in listing(capsys, everything)["rules"]}
    assert plugins <= {"native", "ancestors", "nested", "global"}


def test_golden_list_json_for_every_format_at_once(capsys, everything, monkeypatch):
    text = json.dumps(listing(capsys, everything), indent=2, ensure_ascii=False) + "\n"
    check_golden("list-all-formats.json", text)
