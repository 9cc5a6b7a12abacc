"""The exists scanner finds exactly what matching every file against every glob finds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core.globs import GlobError, compile_glob
from rules_plugins.scanner import pi_rules_scan

DATA = Path(__file__).parent / "data" / "picomatch-dot.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines()]
PATTERNS = sorted({r["pattern"] for r in ROWS if not r["pattern"].startswith(("/", "../", "!"))})
PATHS = sorted({r["path"] for r in ROWS if r["path"] and not r["path"].startswith(("/", "..")) and ".." not in r["path"].split("/")})


def brute_force(files: list[str], patterns: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for pattern in patterns:
        try:
            glob = compile_glob(pattern)
        except GlobError:
            found[pattern] = []
            continue
        found[pattern] = sorted(f for f in files if glob.match_normalized(f))
    return found


def make_tree(root: Path, files: list[str]) -> list[str]:
    made = []
    for rel in files:
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                continue
            target.write_text("x")
        except (OSError, ValueError):
            continue
        made.append(rel)
    # A path can be both a file and a directory prefix in the data; keep only real files,
    # and none the scanner must never enter.
    return [
        rel for rel in made
        if (root / rel).is_file() and not {".git", "node_modules"} & set(rel.split("/")[:-1])
    ]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.sampled_from(PATHS), max_size=25, unique=True),
       patterns=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=12, unique=True))
def test_scan_equals_brute_force(tmp_path, files, patterns):
    root = tmp_path / "tree"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    real = make_tree(root, files)
    assert pi_rules_scan(str(root), patterns) == brute_force(real, patterns)


def test_scan_skips_git_node_modules_and_symlinked_dirs(tmp_path):
    real = make_tree(tmp_path, ["a.ts", "src/d.ts", "outside/e.ts"])
    make_tree(tmp_path, [".git/b.ts", "node_modules/c.ts", "x/node_modules/f.ts"])
    (tmp_path / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert "outside/e.ts" in real
    assert pi_rules_scan(str(tmp_path), ["**/*.ts"]) == {"**/*.ts": ["a.ts", "outside/e.ts", "src/d.ts"]}
