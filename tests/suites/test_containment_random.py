"""The access audit of tests/test_containment.py over randomised trees (issue 7).

Each seed builds a repository with rule files of every source and importer scattered
over random directories (nested packages, dot-directories, ``node_modules``, symlinked
directories pointing above the root, odd names), decoys of every kind above the git root
and in unrelated corners of ``$HOME``, and a random working directory inside it. Then the
engine runs everything a session does — evaluate (twice, for the caches), invalidate the
scans, evaluate, explain, ``read_rule`` — under four modes: trusted with the default
importers, trusted with ``PI_RULES_IMPORT=all``, trusted with ``PI_RULES_IMPORT=none``,
and untrusted. Every ``open``/``scandir``/``listdir``/``stat``/``lstat`` is recorded.

``PI_RULES_FUZZ_SCALE=N`` runs N times as many seeds (benchmarks/fuzz_long.py).
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from rules_core import Engine, Facts
from rules_hosts.session.runtime import Session
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

from importer_helpers import record  # noqa: F401 - the access-recording fixture
from test_containment import IMPORTER_FILES, IMPORTER_ROOTS, USER_LEVEL, outside

SCALE = max(1, int(os.environ.get("PI_RULES_FUZZ_SCALE", "1") or 1))
SEEDS = list(range(6 * SCALE))
MODES = ["default", "all", "none", "untrusted"]
NAMES = ["src", "lib", "packages", "a", "b", "app", "docs", ".hidden", "node_modules", "my dir", "ünï", "x.md",
         "-dash", "tests", ".config"]
DECOY = "DECOY-ABOVE-ROOT"


def _native(rng: random.Random, exists: bool) -> str:
    globs = rng.choice([["**"], ["**/*.ts"], ["src/**"], ["*.md"], ["!x", "**/*"], ["../**"], ["/abs/**"]])
    match = rng.choice(["touched", "exists", "both"]) if exists else "touched"
    return rule_text(f"Body {rng.random()}.", globs=globs, match=match,
                     load=rng.choice(["pinned", "on-demand"]))


def build(tmp: Path, seed: int, *, exists: bool = True) -> dict[str, Path]:
    """A random repository below ``tmp/work/repo``, decoys above it, a HOME beside it."""
    rng = random.Random(seed)
    decoys = {**{k: v.replace(".", f" {DECOY}.", 1) for k, v in IMPORTER_FILES.items()},
              ".pi/rules/decoy.md": rule_text(DECOY, globs=["**"]), "src/decoy.ts": DECOY,
              ".gitignore": "*\n"}
    make_rules(tmp, decoys)
    make_rules(tmp / "work", decoys)
    repo = tmp / "work" / "repo"
    dirs = [Path(".")]
    for _ in range(rng.randint(3, 12)):
        parent = rng.choice(dirs)
        if len(parent.parts) < 5:
            dirs.append(parent / rng.choice(NAMES))
    files: dict[str, str] = {}
    for directory in dirs:
        for _ in range(rng.randint(0, 3)):
            kind = rng.choice(["native", "importer", "source", "gitignore"])
            if kind == "native":
                files[str(directory / ".pi/rules" / f"r{rng.randint(0, 99)}.md")] = _native(rng, exists)
            elif kind == "importer":
                place, text = rng.choice(sorted(IMPORTER_FILES.items()))
                files[str(directory / place)] = text
            elif kind == "source":
                files[str(directory / f"f{rng.randint(0, 9)}.{rng.choice(['ts', 'py', 'md'])}")] = "x"
            else:
                files[str(directory / ".gitignore")] = rng.choice(["dist/\n", "*.py\n", "!keep\n", "/lib\n"])
    cwd_dir = rng.choice(dirs)
    for place, text in IMPORTER_FILES.items():  # every importer has something to read at cwd
        files.setdefault(str(cwd_dir / place), text)
    make_rules(repo, files)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for directory in rng.sample(dirs, k=min(2, len(dirs))):  # escapes that must not be followed
        link = repo / directory / ".pi" / "rules" / "escape"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(tmp / ".pi" / "rules", target_is_directory=True)
    home = tmp / "home"
    make_rules(home, {".pi/agent/rules/g.md": _native(rng, exists), ".agents/rules/h.md": "Home agents.\n",
                      "secret/.pi/rules/s.md": rule_text(DECOY, globs=["**"]), ".claude/rules/c.md": DECOY,
                      ".github/instructions/i.instructions.md": DECOY})
    cwd = repo / cwd_dir
    cwd.mkdir(parents=True, exist_ok=True)
    return {"tmp": tmp, "repo": repo, "home": home, "cwd": cwd}


def run_everything(world: dict[str, Path], trusted: bool, env: dict[str, str]) -> Engine:
    engine = Engine(fresh_manager(), home=str(world["home"]), env=env)
    facts = Facts(cwd=str(world["cwd"]), trusted=trusted, prompt="typescript python", tools=("edit",),
                  touched=("src/a.ts", "../../src/decoy.ts", str(world["tmp"] / "src" / "decoy.ts")))
    engine.evaluate(facts)
    engine.evaluate(facts)
    engine.invalidate_scans()
    evaluation = engine.evaluate(facts)
    engine.explain(facts, "src/a.ts")
    session = Session(engine, str(world["cwd"]), trusted=trusted, host="pi")
    for rule in evaluation.rules:
        assert DECOY not in session.read_rule({"path": rule.relative_path})
    for name in ("../.pi/rules/decoy.md", "escape/decoy.md", "../../../.pi/rules/decoy.md"):
        assert session.read_rule({"path": name}).startswith("Unknown rule: ")
    assert not [r for r in evaluation.rules if DECOY in r.body or DECOY in r.file.path]
    return engine


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_tree_access_stays_inside_what_the_mode_allows(tmp_path, record, seed, mode):
    world = build(tmp_path, seed, exists=mode != "none")
    env = {"PI_RULES_IMPORT": mode} if mode in ("all", "none") else {}
    record.clear()  # only what the engine does counts
    engine = run_everything(world, trusted=mode != "untrusted", env=env)
    user_level = [world["home"] / p for p in USER_LEVEL]
    allowed = user_level if mode == "untrusted" else [world["repo"], *user_level]
    assert outside(record, allowed, world["tmp"]) == []
    # Nothing is ever read through the escaping symlinks (they point above the root).
    assert not [p for p in record if f"{os.sep}escape{os.sep}" in p]
    rules = engine.discover(str(world["cwd"]), mode != "untrusted").rules
    if mode == "untrusted":
        assert {r.source for r in rules} <= {"global"}
    if mode == "none":
        assert not [p for p in record if any(f"{os.sep}{root}" in p for root in IMPORTER_ROOTS)]
        assert {r.file.plugin for r in rules} <= {"native", "ancestors", "nested", "global"}
