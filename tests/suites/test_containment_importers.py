"""The containment audit for the memory-file and single-file importers (issue 13): their
files, their ``@imports`` and Kiro's ``#[[file:]]`` references never read anything above
the git root (or, for global files, outside the home folder); an untrusted project reads
only the user's own files; ``PI_RULES_IMPORT=none`` touches none of their paths at all.
Every filesystem access is recorded as in tests/suites/test_containment.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rules_core import Engine, Facts
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules

from importer_helpers import record  # noqa: F401 - the access-recording fixture

SECRET = "SECRET-ABOVE-THE-REPOSITORY"
HOME_SECRET = "SECRET-OUTSIDE-HOME"

# Every format at once, each pointing at the secret above the repository where it can.
PROJECT_FILES = {
    "AGENTS.md": "# Agents\n\nBe careful.\n",
    "CLAUDE.md": "# Claude\n\n@../secret.md\n@~/notes/extra.md\n@docs/style.md\n",
    "docs/style.md": "Style text.\n",
    ".claude/CLAUDE.md": "# Claude dir\n\n@../../secret.md\n",
    "CLAUDE.local.md": "# Local\n",
    "GEMINI.md": "# Gemini\n\n@../secret.md\n@./docs/style.md\n",
    ".github/copilot-instructions.md": "# Copilot\n\nUse tabs.\n",
    ".kiro/steering/product.md": "---\ninclusion: always\n---\n# Product\n\n#[[file:../secret.md]]\n#[[file:docs/style.md]]\n",
    ".continue/rules/style.md": "---\nname: Style\nalwaysApply: true\n---\nContinue style.\n",
    ".roo/rules/01-general.md": "Roo general.\n",
    ".roo/rules-code/01-code.md": "Roo code mode.\n",
    ".amazonq/rules/q.md": "Amazon Q rule.\n",
    ".junie/guidelines.md": "# Junie\n\nJunie guidelines.\n",
    ".augment/rules/a.md": "---\ntype: always_apply\n---\nAugment rule.\n",
    ".rules": "Zed rules.\n",
    ".trae/rules/project_rules.md": "Trae rules.\n",
    "packages/a/AGENTS.md": "# Package a\n",
    "packages/a/CLAUDE.md": "# Package a Claude\n\n@../../../secret.md\n",
    "packages/a/GEMINI.md": "# Package a Gemini\n",
    "packages/a/src/index.ts": "x",
}
# Names a disabled importer must not even stat.
IMPORTER_NAMES = ["AGENTS.md", "AGENT.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", "copilot-instructions.md",
                  ".kiro", ".continue", ".roo", ".roorules", ".amazonq", ".junie", ".augment", ".rules", ".trae"]
# The user's own files the global importers may read ($HOME is not the project).
USER_LEVEL = [".pi/agent/rules", ".cursor/rules", ".codeium/windsurf/memories", ".agent/rules", ".agents/rules",
              ".omp/agent", ".xcsh/agent", ".claude/CLAUDE.md", ".gemini/GEMINI.md", ".kiro/steering",
              ".continue/rules", ".roo", ".augment/rules", "notes", ".config/pi-rules/config.toml",
              ".agents/skills", ".claude/skills"]  # user skills (docs/importers.md, "The skills importer")


@pytest.fixture
def world(tmp_path) -> dict[str, Path]:
    make_rules(tmp_path, {"secret.md": SECRET + "\n", "work/secret.md": SECRET + "\n",
                          "outside-home.md": HOME_SECRET + "\n", "AGENTS.md": SECRET + "\n"})
    repo = tmp_path / "work" / "repo"
    make_rules(repo, PROJECT_FILES)
    os.symlink(tmp_path / "secret.md", repo / "packages" / "a" / "AGENT.md")  # a link leading out
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    home = tmp_path / "home"
    make_rules(home, {
        ".claude/CLAUDE.md": "# Mine\n\n@~/notes/extra.md\n@../../outside-home.md\n",
        ".gemini/GEMINI.md": "# My Gemini\n\n@../../outside-home.md\n",
        ".kiro/steering/mine.md": "# Mine\n",
        ".continue/rules/mine.md": "My continue rule.\n",
        "notes/extra.md": "Extra notes.\n",
        "secret/CLAUDE.md": HOME_SECRET + "\n",
    })
    return {"tmp": tmp_path, "repo": repo, "home": home}


def run_everything(world, cwd: Path, trusted: bool, env: dict[str, str] | None = None) -> Engine:
    engine = Engine(fresh_manager(), home=str(world["home"]), env=env or {})
    facts = Facts(cwd=str(cwd), trusted=trusted, touched=("src/index.ts", "packages/a/src/index.ts"),
                  prompt="typescript #product", agent="code")
    engine.evaluate(facts)
    engine.invalidate_scans()
    engine.evaluate(facts)
    engine.explain(facts, "packages/a/src/index.ts")
    engine.read_rule(facts, "CLAUDE.md")
    return engine


def outside(recorded: list[str], allowed: list[Path], tmp: Path, home: Path) -> list[str]:
    """Accesses under ``tmp`` that are neither in an allowed folder nor a folder between
    the home folder and one (a global file's imports resolve one folder at a time from
    $HOME); nothing above the git root is ever allowed."""
    roots = [str(a) for a in allowed]
    on_the_way = {str(parent) for a in allowed for parent in a.parents if parent == home or home in parent.parents}
    return sorted({
        p for p in recorded
        if p.startswith(str(tmp)) and p not in on_the_way and not any(p == r or p.startswith(r + os.sep) for r in roots)
    })


def _bodies(engine: Engine, cwd: Path, trusted: bool = True) -> str:
    return "\n".join(r.body for r in engine.discover(str(cwd), trusted).rules)


@pytest.mark.parametrize("where", ["repo", "repo/packages/a"])
def test_trusted_importers_read_nothing_above_the_git_root(world, record, where):
    cwd = world["tmp"] / "work" / where
    record.clear()
    engine = run_everything(world, cwd, trusted=True)
    allowed = [world["repo"], *(world["home"] / p for p in USER_LEVEL)]
    assert outside(record, allowed, world["tmp"], world["home"]) == []
    bodies = _bodies(engine, cwd)
    assert SECRET not in bodies and HOME_SECRET not in bodies
    # ...while the files inside did load, their inside imports expanded.
    assert "Style text." in bodies and "Extra notes." in bodies
    plugins = {r.file.plugin for r in engine.discover(str(cwd)).rules}
    assert {"agents-md", "claude-md", "gemini-md", "kiro", "continue"} <= plugins


def test_imports_leaving_the_bound_are_reported_not_read(world):
    engine = Engine(fresh_manager(), home=str(world["home"]), env={})
    errors = engine.discover(str(world["repo"])).errors
    reported = {os.path.relpath(e.path, world["tmp"]) for e in errors}
    assert {"work/repo/CLAUDE.md", "work/repo/GEMINI.md", "work/repo/.kiro/steering/product.md",
            "home/.claude/CLAUDE.md"} <= reported


def test_untrusted_project_reads_only_the_users_own_files(world, record):
    record.clear()
    engine = run_everything(world, world["repo"] / "packages" / "a", trusted=False)
    assert outside(record, [world["home"] / p for p in USER_LEVEL], world["tmp"], world["home"]) == []
    assert {r.source for r in engine.discover(str(world["repo"]), False).rules} <= {"global"}


def test_import_none_touches_no_importer_path(world, record):
    record.clear()
    engine = run_everything(world, world["repo"] / "packages" / "a", trusted=True, env={"PI_RULES_IMPORT": "none"})
    touched = [p for p in record if any(os.path.basename(p) == name or f"{os.sep}{name}{os.sep}" in p
                                        for name in IMPORTER_NAMES)]
    assert touched == []
    assert engine.discover(str(world["repo"])).rules == ()
