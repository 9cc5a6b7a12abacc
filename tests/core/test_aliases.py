"""A symbolic link to another discovered rule file is one rule with two names (CONTRACT §7,
"One file, two names"): listed once, never its own duplicate, left out under a host that
reads either name. Real layout: vercel/ai (``CLAUDE.md -> AGENTS.md``, tests/fixtures/
layouts/vercel-ai/SOURCE); generated: a monorepo with 28 nested links."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_hosts.cli import main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "layouts" / "vercel-ai"
ROOT_LINE = "This file provides context for AI coding assistants"  # vercel/ai's root AGENTS.md
PACKAGES = 28


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("CLAUDE_CODE_MANAGED_SETTINGS_PATH", str(tmp_path / "managed"))
    for name in ("PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    # Room for both of vercel/ai's files: what the budget admits is not this test's concern.
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20000")
    return tmp_path


@pytest.fixture
def vercel(isolated):
    repo = isolated / "ai"
    shutil.copytree(FIXTURE, repo, symlinks=True)
    (repo / "SOURCE").unlink()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert (repo / "CLAUDE.md").is_symlink()
    return repo


@pytest.fixture
def nested(isolated):
    """A root AGENTS.md and 28 packages, each with AGENTS.md and CLAUDE.md -> AGENTS.md."""
    repo = isolated / "mono"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "AGENTS.md").write_text("# Root\n\nUse pnpm.\n")
    for n in range(PACKAGES):
        package = repo / "packages" / f"p{n:02d}"
        (package / "src").mkdir(parents=True)
        (package / "src" / "a.ts").write_text("")
        (package / "AGENTS.md").write_text(f"# Package p{n:02d}\n\nCanary p{n:02d}-9f3a.\n")
        os.symlink("AGENTS.md", package / "CLAUDE.md")
    return repo


def run(capsys, cwd, *args):
    code = main(["--cwd", str(cwd), *args])
    out = capsys.readouterr().out
    return code, out


def run_json(capsys, cwd, *args):
    code, out = run(capsys, cwd, "--json", *args)
    assert code == 0
    return json.loads(out)


def test_a_symlinked_claude_md_is_listed_once_with_both_names(capsys, vercel):
    rules = run_json(capsys, vercel, "list")["rules"]
    root = [r for r in rules if r["relativePath"] == "AGENTS.md"]
    assert len(root) == 1
    assert root[0]["path"] == str(vercel / "AGENTS.md")
    assert root[0]["aliases"] == [str(vercel / "CLAUDE.md")]
    assert not [r for r in rules if r["path"] == str(vercel / "CLAUDE.md")]
    # A rule with one name carries no aliases key.
    assert "aliases" not in next(r for r in rules if r["relativePath"] == "packages/ai/AGENTS.md")
    _, text = run(capsys, vercel, "list")
    assert "AGENTS.md (also CLAUDE.md)" in text


def test_the_root_instructions_reach_the_model_once_when_a_file_is_touched(capsys, vercel):
    report = run_json(capsys, vercel, "report", "--touched", "packages/ai/src/index.ts")
    assert report["section"].count(ROOT_LINE) == 1
    statuses = {r["relativePath"]: r["status"] for r in report["rules"]}
    assert statuses == {"AGENTS.md": "active", "packages/ai/AGENTS.md": "active"}
    assert not [r for r in report["rules"] if r["cause"] == "duplicate"]
    _, text = run(capsys, vercel, "report", "--touched", "packages/ai/src/index.ts")
    assert "active: ai/AGENTS — AGENTS.md (also CLAUDE.md) (project)" in text


def test_a_copy_instead_of_a_link_is_two_rules_and_one_is_a_duplicate(capsys, vercel):
    """Positive control: the report does see two files with one text when they are two files."""
    (vercel / "CLAUDE.md").unlink()
    shutil.copy(vercel / "AGENTS.md", vercel / "CLAUDE.md")
    report = run_json(capsys, vercel, "report", "--touched", "packages/ai/src/index.ts")
    assert [r["cause"] for r in report["rules"] if r["status"] == "dropped"] == ["duplicate"]
    assert not [r for r in report["rules"] if r.get("aliases")]


def test_under_claude_code_a_file_it_reads_through_the_link_is_left_out(capsys, vercel):
    report = run_json(capsys, vercel, "report", "--host", "claude-code", "--touched", "packages/ai/src/index.ts")
    root = next(r for r in report["rules"] if r["relativePath"] == "AGENTS.md")
    assert root["status"] == "inactive"
    assert "as CLAUDE.md, a link to this file" in root["reasons"][0]
    assert ROOT_LINE not in report["section"]
    # Without a host nothing is left out, and the same text is sent (the control).
    assert ROOT_LINE in run_json(capsys, vercel, "report", "--touched", "packages/ai/src/index.ts")["section"]


def test_twenty_eight_nested_links_load_and_are_reported(capsys, nested):
    rules = run_json(capsys, nested, "list")["rules"]
    linked = [r for r in rules if r.get("aliases")]
    assert len(linked) == PACKAGES
    for rule in linked:
        folder = os.path.dirname(rule["path"])
        assert rule["aliases"] == [os.path.join(folder, "CLAUDE.md")]
    assert len(rules) == PACKAGES + 1  # and no CLAUDE.md of its own
    report = run_json(capsys, nested, "report", "--touched", "packages/p07/src/a.ts")
    assert report["section"].count("Canary p07-9f3a.") == 1
    assert "Canary p08-9f3a." not in report["section"]


def test_twenty_eight_nested_links_are_all_left_out_for_claude_code(capsys, nested):
    report = run_json(capsys, nested, "report", "--host", "claude-code", "--touched", "packages/p07/src/a.ts")
    nested_rules = [r for r in report["rules"] if r["relativePath"].startswith("packages/")]
    assert len(nested_rules) == PACKAGES
    assert {r["status"] for r in nested_rules} == {"inactive"}
    assert "Canary p07-9f3a." not in report["section"]


def test_a_nested_link_leading_out_of_the_project_stays_refused(capsys, nested, isolated):
    outside = isolated / "outside.md"
    outside.write_text("# Outside\n\nSECRET-outside\n")
    link = nested / "packages" / "p03" / "CLAUDE.md"
    link.unlink()
    os.symlink(outside, link)
    found = run_json(capsys, nested, "list")
    errors = [e for e in found["errors"] if e["path"] == str(link)]
    assert [e["kind"] for e in errors] == ["read-failure"]
    assert "leads outside" in errors[0]["message"]
    assert not any("SECRET-outside" in json.dumps(r) for r in found["rules"])
    report = run_json(capsys, nested, "report", "--touched", "packages/p03/src/a.ts")
    assert "SECRET-outside" not in report["section"]
    assert "Canary p03-9f3a." in report["section"]  # its AGENTS.md still loads


def test_two_links_to_one_undiscovered_file_are_one_rule(capsys, isolated):
    repo = isolated / "two"
    (repo / "docs").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "docs" / "guide.md").write_text("# Guide\n\nOne text.\n")
    os.symlink("docs/guide.md", repo / "AGENTS.md")
    os.symlink("docs/guide.md", repo / "CLAUDE.md")
    rules = run_json(capsys, repo, "list")["rules"]
    assert len(rules) == 1
    assert len(rules[0]["aliases"]) == 1
    names = {rules[0]["path"], *rules[0]["aliases"]}
    assert names == {str(repo / "AGENTS.md"), str(repo / "CLAUDE.md")}


def test_a_symlinked_rules_folder_names_the_same_files(capsys, isolated):
    """Not only memory files: ``.claude/rules -> ../.cursor/rules`` gives each rule two names."""
    repo = isolated / "folders"
    (repo / ".cursor" / "rules").mkdir(parents=True)
    (repo / ".claude").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".cursor" / "rules" / "style.md").write_text("---\ndescription: Style\nalwaysApply: true\n---\nTabs.\n")
    os.symlink("../.cursor/rules", repo / ".claude" / "rules")
    rules = run_json(capsys, repo, "list")["rules"]
    assert len(rules) == 1
    assert rules[0]["aliases"] and len(rules[0]["aliases"]) == 1


def test_explain_json_names_both_paths(capsys, vercel):
    entries = run_json(capsys, vercel, "explain", "packages/ai/src/index.ts")["rules"]
    root = next(e for e in entries if e["id"] == "ai/AGENTS")
    assert (root["path"], root["aliases"]) == (str(vercel / "AGENTS.md"), [str(vercel / "CLAUDE.md")])
    assert "aliases" not in next(e for e in entries if e["id"] == "ai/packages/ai/AGENTS")


def test_read_finds_the_rule_by_either_name(capsys, vercel):
    for name in ("AGENTS.md", "CLAUDE.md"):
        code, out = run(capsys, vercel, "read", name)
        assert code == 0 and ROOT_LINE in out


# -- the pure merge, over any grouping ---------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rules_core.discovery.aliases import merge_aliases  # noqa: E402
from rules_core.model import Rule, RuleFile  # noqa: E402


def _rule(n: int) -> Rule:
    path = f"/p/r{n}.md"
    return Rule(file=RuleFile(path, "/p", f"r{n}.md", "/p", "native", "v1", "project", (0, 0, "", path)),
                description="d", body=f"b{n}", always_apply=True)


@settings(max_examples=200, deadline=None)
@given(targets=st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=12))
def test_merging_keeps_one_rule_per_physical_file_in_discovery_order(targets):
    rules = [_rule(n) for n in range(len(targets))]
    # A rule maps to /p/r<t>.md: its own path when t is its index (a real file), else a link.
    physical = {r.file.path: f"/p/r{t}.md" for r, t in zip(rules, targets) if t is not None}
    merged = merge_aliases(rules, physical)
    groups: dict[str, list[str]] = {}
    for rule in rules:
        if rule.file.path in physical:
            groups.setdefault(physical[rule.file.path], []).append(rule.file.path)
    assert len(merged) == len(rules) - sum(len(g) - 1 for g in groups.values())
    positions = [next(i for i, r in enumerate(rules) if r.file.path == m.file.path) for m in merged]
    assert positions == sorted(positions)
    every_name = sorted(p for m in merged for p in (m.file.path, *(a.path for a in m.aliases)))
    assert every_name == sorted(r.file.path for r in rules)
    for kept in merged:
        real = physical.get(kept.file.path)
        target_listed = real is not None and real in groups[real]
        if kept.aliases and target_listed:
            assert kept.file.path == real  # the link's target is the rule kept when it is listed
