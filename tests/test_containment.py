"""Nothing above the git root is read, listed or stat-ed; an untrusted project reads no
project directory (RULE-SPEC §1). Every filesystem access the engine makes is recorded:
``open``, ``os.scandir`` and ``os.listdir`` through a Python audit hook, ``os.stat`` and
``os.lstat`` (behind ``os.path.isdir`` and friends) by wrapping them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rules_core import Engine, Facts
from rules_core.testing import fresh_manager, make_rules, rule_text

FIXTURE = Path(__file__).parent / "fixtures" / "monorepo"
_recording: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _recording is not None and event in ("open", "os.scandir", "os.listdir") and args:
        _record(args[0])


def _record(path: object) -> None:
    if _recording is not None and isinstance(path, (str, bytes, os.PathLike)):
        text = os.fsdecode(path)
        _recording.append(os.path.abspath(text))


sys.addaudithook(_audit)


@pytest.fixture
def record(monkeypatch):
    global _recording
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path, *args, **kwargs):
        _record(path)
        return real_stat(path, *args, **kwargs)

    def lstat(path, *args, **kwargs):
        _record(path)
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    _recording = []
    try:
        yield _recording
    finally:
        _recording = None


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


def run_everything(world, cwd: Path, trusted: bool) -> Engine:
    engine = Engine(fresh_manager(), home=str(world["home"]), env={})
    facts = Facts(cwd=str(cwd), trusted=trusted, touched=("src/index.ts", "../../src/main.ts"),
                  prompt="typescript python", tools=("edit",))
    engine.evaluate(facts)
    engine.evaluate(facts)
    engine.invalidate_scans()
    engine.evaluate(facts)
    engine.explain(facts, "src/index.ts")
    return engine


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
    allowed = [world["repo"], world["home"] / ".pi" / "agent" / "rules"]
    assert outside(record, allowed, world["tmp"]) == []
    # ...while it did read the ancestors up to the root and the global rules.
    assert str(world["repo"] / ".pi" / "rules") in record
    ids = {r.id for r in engine.discover(str(cwd)).rules}
    assert "decoy" not in ids and "g" in ids


def test_untrusted_project_reads_no_project_directory_at_all(world, record):
    cwd = world["repo"] / "packages" / "a"
    run_everything(world, cwd, trusted=False)
    assert outside(record, [world["home"] / ".pi" / "agent" / "rules"], world["tmp"]) == []


def test_outside_git_only_cwd_and_below_are_read(world, record):
    plain = make_rules(world["tmp"] / "plain" / "proj", {".pi/rules/p.md": rule_text(globs=["a"]),
                                                          "sub/.pi/rules/n.md": rule_text(globs=["a"])})
    run_everything(world, plain, trusted=True)
    assert outside(record, [plain, world["home"] / ".pi" / "agent" / "rules"], world["tmp"]) == []
