"""The ``skills`` importer on the skills of six real repositories (tests/fixtures/skills/,
each with its SOURCE), through the CLI a user runs: indexed, linted, ``paths:`` activation,
host profiles, shadowing, ``read_rule``, lenient parsing, and the report's catalogue."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from golden_files import check_golden
from importer_helpers import SkillProject

FIXTURES = Path(__file__).parent.parent / "fixtures" / "skills"
# Where each repository's skills go in the test project: every folder the importer reads.
LAYOUT = {
    "anthropics-skills": ".agents/skills",
    "obra-superpowers": ".claude/skills",
    "vercel-labs-agent-skills": ".cursor/skills",
    "openai-skills": ".gemini/skills",
    "trailofbits-skills": ".kiro/skills",
    "getsentry-skills": "~/.agents/skills",
}
OFFERED = {"pdf", "mcp-builder", "systematic-debugging", "test-driven-development", "web-design-guidelines",
           "composition-patterns", "gh-fix-ci", "create-plan", "commit", "iterate-pr"}


class Project(SkillProject):
    def skills_root(self, where: str) -> Path:
        return self.home / where[2:] if where.startswith("~/") else self.cwd / where

    def add_repo(self, repo: str, where: str | None = None) -> None:
        target = self.skills_root(where or LAYOUT[repo])
        for folder in (FIXTURES / repo).iterdir():
            if folder.is_dir():
                shutil.copytree(folder, target / folder.name)

    def statuses(self, *args: str, cwd: Path | None = None) -> dict[str, str]:
        return {r["id"]: r["status"] for r in self.json("report", *args, cwd=cwd)["rules"]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Project:
    return Project(tmp_path, monkeypatch, capsys)


@pytest.fixture
def real(project: Project) -> Project:
    for repo in LAYOUT:
        project.add_repo(repo)
    return project


def test_every_fixture_records_its_source() -> None:
    repos = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
    assert repos == sorted(LAYOUT) and len(repos) >= 5
    for repo in repos:
        first = (FIXTURES / repo / "SOURCE").read_text().splitlines()[0]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", first), first


def test_real_skills_are_indexed_by_name_and_description(real: Project) -> None:
    statuses = real.statuses()
    assert {i for i, s in statuses.items() if s == "on-demand"} == OFFERED
    assert statuses["git-cleanup"] == "inactive"  # disable-model-invocation: true
    report = real.json("report")
    cleanup = next(r for r in report["rules"] if r["id"] == "git-cleanup")
    assert cleanup["reasons"][0].startswith("disable-model-invocation: true")
    section = report["section"]
    assert "- systematic-debugging — Use when encountering any bug, test failure, or unexpected behavior, before " \
           "proposing fixes (fetch with the read_rule tool)" in section
    assert "- commit — Use for every request to commit changes" in section  # a user skill
    assert "git-cleanup" not in section
    # A folded or multi-line description is one line in the index.
    assert all(not line.startswith("  ") for line in section.splitlines())


def test_real_skills_are_linted_against_the_specification(real: Project) -> None:
    code, out = real.run("check")
    assert code == 0  # warnings only
    found = {(w["code"], Path(w["path"]).parent.name) for w in real.json("check")["warnings"]}
    assert found == {
        ("skill-name", "composition-patterns"),  # name: vercel-composition-patterns, upstream too
        ("skill-missing-file", "mcp-builder"),  # the reference files SOURCE says were left out
        ("skill-missing-file", "test-driven-development"),
        ("skill-missing-file", "iterate-pr"),
    }
    assert "warning skill-name .cursor/skills/composition-patterns/SKILL.md: name 'vercel-composition-patterns' " \
           "differs from its folder 'composition-patterns'" in out
    missing = [w["message"] for w in real.json("check")["warnings"] if "mcp-builder" in w["path"]]
    assert len(missing) == 3 and all("reference/" in m for m in missing)


def test_paths_makes_a_real_skill_a_touched_rule(real: Project) -> None:
    # No fetched skill uses Claude Code's paths: key; add it to a real one.
    skill = real.cwd / ".cursor/skills/web-design-guidelines/SKILL.md"
    skill.write_text(skill.read_text().replace("metadata:", 'paths: "src/**/*.tsx, app/**/*.tsx"\nmetadata:', 1))
    assert real.statuses()["web-design-guidelines"] == "inactive"
    for facts in (("--touched", "src/App.tsx"), ("--shell", "cat > app/page.tsx <<EOF\nx\nEOF")):
        report = real.json("report", *facts)
        rule = next(r for r in report["rules"] if r["id"] == "web-design-guidelines")
        assert rule["status"] == "on-demand" and rule["reasons"][0].startswith("touched ")
        assert "- web-design-guidelines — Review UI code" in report["section"]
    assert real.statuses("--touched", "src/App.ts")["web-design-guidelines"] == "inactive"


def test_nested_skills_belong_to_their_folder(project: Project) -> None:
    project.add_repo("getsentry-skills", "packages/web/.agents/skills")
    assert project.statuses()["commit"] == "inactive"
    assert project.statuses("--touched", "packages/web/src/a.ts")["commit"] == "on-demand"
    assert project.statuses("--touched", "packages/api/src/a.ts")["commit"] == "inactive"


def test_ancestor_skills_apply_below_them(project: Project) -> None:
    project.add_repo("obra-superpowers", ".agents/skills")
    below = project.cwd / "packages" / "api"
    below.mkdir(parents=True)
    assert project.statuses(cwd=below)["systematic-debugging"] == "on-demand"


def test_claude_code_gets_none_of_its_own_skill_folders(real: Project) -> None:
    real.add_repo("trailofbits-skills", "~/.claude/skills")  # git-cleanup again, as a user skill
    real.write("packages/web/.claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Ship it.\n---\nGo.\n")
    plain = real.json("report", "--touched", "packages/web/x.ts")
    assert {"systematic-debugging", "test-driven-development", "deploy"} <= {
        r["id"] for r in plain["rules"] if r["status"] == "on-demand"}  # positive control
    report = real.json("report", "--host", "claude-code", "--touched", "packages/web/x.ts")
    by_id = {r["id"]: r for r in report["rules"]}
    for name in ("systematic-debugging", "test-driven-development", "deploy"):
        assert by_id[name]["status"] == "inactive"
        assert by_id[name]["reasons"][0].startswith("Claude Code reads .claude/skills itself")
    user = next(r for r in report["rules"] if r["path"].startswith(str(real.home / ".claude")))
    assert user["reasons"][0].startswith("Claude Code reads ~/.claude/skills itself")
    section = report["section"]
    assert "/.claude/skills/" not in section
    assert f"- {real.cwd}/.agents/skills/pdf/SKILL.md — Use this skill whenever" in section
    assert section.count("(read it with the Read tool)") == 8  # the 10 offered, less Claude's own two
    assert "/home/.agents/skills/commit/SKILL.md" in section  # ~/.agents/skills is not Claude's


def test_pi_gets_none_of_the_folders_pi_reads(real: Project) -> None:
    real.add_repo("obra-superpowers", "packages/web/.agents/skills")
    report = real.json("report", "--host", "pi", "--touched", "packages/web/x.ts")
    by_path = {r["path"]: r for r in report["rules"]}
    for path, rule in by_path.items():
        read_by_pi = "/proj/.agents/skills/" in path or "/home/.agents/skills/" in path
        assert (rule["status"] == "inactive" and rule["reasons"][0].startswith("Pi reads")) == read_by_pi, path
    nested = [r for p, r in by_path.items() if "/packages/web/.agents/" in p]
    assert nested and all(r["status"] == "on-demand" for r in nested)  # Pi does not read below cwd


def test_read_rule_returns_the_body_and_the_folder_listing(real: Project) -> None:
    code, out = real.run("read", "systematic-debugging")
    assert code == 0 and "# Systematic Debugging" in out
    folder = real.cwd / ".claude/skills/systematic-debugging"
    assert "This skill's folder is .claude/skills/systematic-debugging (from the repository root);" in out
    for name in ("root-cause-tracing.md", "defense-in-depth.md", "condition-based-waiting.md"):
        assert f"- {name}\n" in out
    # Names only: no other file's text is ever sent unasked.
    assert max((folder / "root-cause-tracing.md").read_text().splitlines(), key=len) not in out
    assert "- SKILL.md" not in out


def test_project_skills_shadow_user_skills_with_a_warning(real: Project) -> None:
    real.add_repo("getsentry-skills", ".agents/skills")  # commit and iterate-pr, now also in the project
    report = real.json("report")
    by_id = {r["id"]: r for r in report["rules"]}
    assert by_id["commit"]["status"] == "on-demand" and by_id["commit"]["path"].startswith(str(real.cwd))
    user = by_id["~/.agents/skills/commit"]
    assert user["status"] == "inactive" and user["reasons"][0].startswith("shadowed by the skill of the same name")
    warnings = [w for w in real.json("check")["warnings"] if w["code"] == "skill-shadowed"]
    assert {Path(w["path"]).parent.name for w in warnings} == {"commit", "iterate-pr"}


def test_untrusted_projects_read_user_skills_only(real: Project) -> None:
    statuses = real.statuses("--untrusted")
    assert set(statuses) == {"commit", "iterate-pr"}


def test_the_importer_can_be_turned_off(real: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(real.statuses("-p", "no:skills")) == set()


def test_lenient_frontmatter_and_every_warning(project: Project) -> None:
    long_body = "word " * 30_000
    project.write(".agents/skills/colon/SKILL.md",
                  "---\nname: colon\ndescription: Use when: the user asks: anything\n---\nBody.\n")
    project.write(".agents/skills/bare/SKILL.md", "# Bare skill\n\nNo frontmatter at all.\n")
    project.write(".agents/skills/Bad_Name/SKILL.md", f"---\nname: {'x' * 70}_X\ndescription: d\n---\nB\n")
    project.write(".agents/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nNo description.\n")
    project.write(".agents/skills/wordy/SKILL.md",
                  f"---\nname: wordy\ndescription: {'d' * 1100}\ncompatibility: {'c' * 600}\n---\n{long_body}\n")
    project.write(".agents/skills/links/SKILL.md",
                  "---\nname: links\ndescription: d\n---\nSee [here](docs/x.md), [web](https://e.com/a.md), "
                  "[up](../other/x.md), [anchor](#top) and `scripts/run.sh`.\n")
    project.write(".agents/skills/links/docs/x.md", "x\n")
    report = project.json("report")
    by_id = {r["id"]: r for r in report["rules"]}
    assert by_id["colon"]["description"] == "Use when: the user asks: anything"
    assert by_id["bare"]["description"] == "Bare skill" and by_id["bare"]["status"] == "on-demand"
    assert report["errors"] == []
    warnings = {(w["code"], Path(w["path"]).parent.name) for w in project.json("check")["warnings"]}
    assert warnings == {
        ("skill-no-frontmatter", "bare"), ("skill-name", "Bad_Name"), ("skill-description", "nodesc"),
        ("skill-description", "wordy"), ("skill-compatibility", "wordy"), ("skill-body-size", "wordy"),
        ("skill-missing-file", "links"),
    }
    missing = [w["message"] for w in project.json("check")["warnings"] if w["code"] == "skill-missing-file"]
    assert len(missing) == 1 and "scripts/run.sh" in missing[0]


def test_a_damaged_skill_is_an_error_naming_the_file(project: Project) -> None:
    path = project.write(".agents/skills/broken/SKILL.md", "---\nname: broken\ndescription: [unclosed\n  - x: y\n")
    errors = project.json("report")["errors"]
    assert [e["path"] for e in errors] == [str(path)] and errors[0]["kind"] == "yaml-syntax"


def test_report_shows_the_catalogue_cost(real: Project) -> None:
    def stable(text: str) -> str:
        return text.replace(str(real.home), "<home>").replace(str(real.cwd), "<project>")

    code, text = real.run("report", "--no-branch")
    assert code == 0 and "catalogue: 10 index lines, ~" in text
    check_golden("skills-report.txt", stable(text))
    _, data = real.run("report", "--no-branch", "--json")
    catalogue = json.loads(data)["catalogue"]
    assert catalogue["lines"] == 10 and catalogue["plugins"][0]["plugin"] == "skills"
    check_golden("skills-report.json", stable(data))
