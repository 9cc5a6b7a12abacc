"""Nothing above the git root is read, listed or stat-ed; an untrusted project reads no
project directory (RULE-SPEC §1). Every filesystem access the engine makes is recorded
(tests/importer_helpers.py ``record``): ``open``, ``os.scandir`` and ``os.listdir``
through a Python audit hook, ``os.stat`` and ``os.lstat`` (behind ``os.path.isdir`` and
friends) by wrapping them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_core import Engine, Facts
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

from importer_helpers import record  # noqa: F401 - the access-recording fixture

FIXTURE = Path(__file__).parent.parent / "fixtures" / "monorepo"
@pytest.fixture
def world(tmp_path) -> dict[str, Path]:
    """A repository with decoy rules and files above its root, and a home directory."""
    make_rules(tmp_path, {
        ".pi/rules/decoy.md": rule_text(globs=["**"]),
        "src/decoy.ts": "x",
        ".gitignore": "*\n",
    })
    repo = tmp_path / "work" / "repo"
    shutil.copytree(FIXTURE, repo)
    make_rules(repo, {".gitignore": "dist/\n", "dist/out.ts": "x"})
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    home = tmp_path / "home"
    make_rules(home, {".pi/agent/rules/g.md": rule_text(globs=["**/*.ts"]), "secret/.pi/rules/s.md": "x"})
    return {"tmp": tmp_path, "repo": repo, "home": home}


IMPORTER_FILES = {
    ".github/instructions/ts.instructions.md": "---\napplyTo: '**/*.ts'\n---\nCopilot.\n",
    ".claude/rules/ts.md": "---\npaths: src/**\n---\nClaude.\n",
    ".cursor/rules/ts.mdc": "---\nglobs: src/**\n---\nCursor.\n",
    ".cursorrules": "Legacy cursor.\n",
    ".windsurf/rules/ts.md": "---\ntrigger: always_on\n---\nWindsurf.\n",
    ".windsurfrules": "Legacy windsurf.\n",
    ".clinerules": "Cline.\n",
    ".agent/rules/a.md": "Agent.\n",
    ".agents/rules/b.md": "Agents.\n",
    ".omp/rules/c.md": "Omp.\n",
    ".xcsh/rules/d.md": "Xcsh.\n",
}
IMPORTER_ROOTS = [".github", ".claude", ".cursor", ".cursorrules", ".windsurf", ".windsurfrules", ".devin",
                  ".clinerules", ".agent", ".agents", ".omp", ".xcsh", ".codeium"]


def run_everything(world, cwd: Path, trusted: bool, env: dict[str, str] | None = None) -> Engine:
    engine = Engine(fresh_manager(), home=str(world["home"]), env=env or {})
    facts = Facts(cwd=str(cwd), trusted=trusted, touched=("src/index.ts", "../../src/main.ts"),
                  prompt="typescript python", tools=("edit",))
    engine.evaluate(facts)
    engine.evaluate(facts)
    engine.invalidate_scans()
    engine.evaluate(facts)
    engine.explain(facts, "src/index.ts")
    return engine


# User-level rule locations the global sources and importers may read ($HOME is not the
# project: global rules load whatever the trust). Everything else in $HOME is off limits.
USER_LEVEL = [".pi/agent/rules", ".cursor/rules", ".codeium/windsurf/memories", ".agent/rules",
              ".agents/rules", ".omp/agent", ".xcsh/agent", ".claude/CLAUDE.md", ".gemini/GEMINI.md",
              ".kiro/steering", ".continue/rules", ".roo", ".augment/rules",
              ".agents/skills", ".claude/skills",  # user skills (docs/importers.md, "The skills importer")
              ".config/pi-rules/config.toml"]  # the user settings file (docs/configuration.md)


def user_level(home: Path) -> list[Path]:
    return [home / p for p in USER_LEVEL]


def outside(recorded: list[str], allowed: list[Path], tmp: Path) -> list[str]:
    roots = [str(a) for a in allowed]
    return sorted({
        p for p in recorded
        if p.startswith(str(tmp)) and not any(p == r or p.startswith(r + os.sep) for r in roots)
    })


@pytest.mark.parametrize("where", ["repo", "repo/packages/a", "repo/packages/a/lib/b"])
def test_trusted_discovery_never_touches_anything_above_the_git_root(world, record, where):
    cwd = world["tmp"] / "work" / where
    engine = run_everything(world, cwd, trusted=True)
    allowed = [world["repo"], *user_level(world["home"])]
    assert outside(record, allowed, world["tmp"]) == []
    # ...while it did read the ancestors up to the root and the global rules.
    assert str(world["repo"] / ".pi" / "rules") in record
    ids = {r.id for r in engine.discover(str(cwd)).rules}
    assert "decoy" not in ids and "g" in ids


def test_untrusted_project_reads_no_project_directory_at_all(world, record):
    cwd = world["repo"] / "packages" / "a"
    run_everything(world, cwd, trusted=False)
    assert outside(record, user_level(world["home"]), world["tmp"]) == []


def test_outside_git_only_cwd_and_below_are_read(world, record):
    plain = make_rules(world["tmp"] / "plain" / "proj", {".pi/rules/p.md": rule_text(globs=["a"]),
                                                          "sub/.pi/rules/n.md": rule_text(globs=["a"])})
    run_everything(world, plain, trusted=True)
    assert outside(record, [plain, *user_level(world["home"])], world["tmp"]) == []


def test_import_none_lists_stats_and_reads_no_importer_root(world, record):
    for directory in (world["repo"], world["repo"] / "packages" / "a", world["home"]):
        make_rules(directory, IMPORTER_FILES)
    # No exists-mode rule may walk the whole tree here: a scan legitimately lists every
    # directory its globs can reach, importer folders included.
    make_rules(world["home"], {".pi/agent/rules/g.md": rule_text(globs=["**/*.ts"], match="touched")})
    for rule in (world["repo"] / ".pi/rules").glob("*.md"):
        rule.write_text(rule.read_text().replace("match: exists", "match: touched"))
    for rule in world["repo"].rglob(".pi/rules/inner.md"):
        rule.write_text(rule_text(globs=["src/**"], match="touched"))
    record.clear()  # only what the engine does counts
    cwd = world["repo"] / "packages" / "a"
    engine = run_everything(world, cwd, trusted=True, env={"PI_RULES_IMPORT": " None "})
    touched = [p for p in record if any(f"{os.sep}{root}" in p for root in IMPORTER_ROOTS)]
    assert touched == []
    assert {r.file.plugin for r in engine.discover(str(cwd)).rules} <= {"native", "ancestors", "nested", "global"}


def test_importers_read_nothing_above_the_git_root(world, record):
    make_rules(world["tmp"], IMPORTER_FILES)  # decoys above the repository
    make_rules(world["tmp"] / "work", IMPORTER_FILES)
    make_rules(world["repo"], IMPORTER_FILES)
    record.clear()  # only what the engine does counts
    run_everything(world, world["repo"] / "packages" / "a", trusted=True)
    allowed = [world["repo"], *user_level(world["home"])]
    assert outside(record, allowed, world["tmp"]) == []


def test_untrusted_project_settings_file_is_never_opened_the_users_is(world, record):
    make_rules(world["repo"], {".pi/rules.toml": 'disable = ["g"]\nmax_tokens = 5\n'})
    user = make_rules(world["home"] / ".config" / "pi-rules", {"config.toml": "max_tokens = 7\n"}) / "config.toml"
    record.clear()  # only what the engine does counts
    engine = run_everything(world, world["repo"], trusted=False)
    assert [p for p in record if p.endswith("rules.toml")] == []  # not opened, not even stat-ed
    assert str(user) in record  # the user's own file is read whatever the trust
    assert outside(record, user_level(world["home"]), world["tmp"]) == []
    assert engine.settings(str(world["repo"]), trusted=False).value("max_tokens").value == 7


def test_a_settings_file_linked_from_outside_the_git_root_is_never_opened(world, record):
    secret = world["tmp"] / "secret.toml"
    secret.write_text("max_tokens = 5\n")
    os.symlink(secret, world["repo"] / ".pi" / "rules.toml")
    record.clear()
    engine = run_everything(world, world["repo"], trusted=True)
    assert str(secret) not in record
    assert outside(record, [world["repo"], *user_level(world["home"])], world["tmp"]) == []
    [error] = [e for e in engine.discover(str(world["repo"])).errors if e.path.endswith("rules.toml")]
    assert error.kind == "read-failure" and "leads outside the git root" in error.message
