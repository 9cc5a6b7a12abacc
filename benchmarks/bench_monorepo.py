"""Monorepo benchmark: ~100k files in ~5k directories, 220 rules. Run by hand, never in CI:

    python benchmarks/bench_monorepo.py [--files 100000] [--repeat 3] [--keep DIR]

Layout: a git repository ``mono/`` with 10 ancestor rules in ``mono/.pi/rules``; the
working directory ``mono/ws`` with 20 cwd rules and 60 packages under ``ws/packages``,
each with a nested ``.pi/rules`` of 3 rules; 10 global rules. About 40% of the rules are
``exists``/``both``. A realistic ``.gitignore`` (``dist/``, ``*.log``, ``coverage/`` …)
and ignored build output are part of the tree. Every figure is reported with its
baseline from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of, scandir_walk  # noqa: E402
from rules_core import Engine, Facts  # noqa: E402
from rules_core.globs.matching import _compile  # noqa: E402
from rules_core.rule_tests.pytest_plugin import fresh_manager  # noqa: E402

EXTS = ["ts", "tsx", "js", "json", "md", "css", "py", "go", "yml", "sql"]
AREAS = ["src", "src/components", "src/lib", "src/api", "test", "docs", "scripts"]
GITIGNORE = "node_modules/\ndist/\ncoverage/\n*.log\n.cache/\nbuild/\n!build/keep.txt\n*.tmp\n"


def rule(n: int, globs: list[str], mode: str, extra: str = "") -> str:
    return (f"---\ndescription: rule {n}\nversion: 1\nglobs: {json.dumps(globs)}\nmatch: {mode}\n"
            f"priority: {n % 4}\n{extra}---\nRule {n}: " + "keep it short. " * (n % 9) + "\n")


def mode_for(n: int) -> str:
    return ("exists", "both", "touched", "touched", "touched")[n % 5]  # 40% exists/both


def build(base: Path, files: int, seed: int = 11) -> tuple[Path, Path, list[str]]:
    rng = random.Random(seed)
    mono, ws, home = base / "mono", base / "mono" / "ws", base / "home"
    (mono / ".pi/rules").mkdir(parents=True)
    (ws / ".pi/rules").mkdir(parents=True)
    (home / ".pi/agent/rules").mkdir(parents=True)
    (mono / ".gitignore").write_text(GITIGNORE)
    packages = [f"packages/pkg{p:02d}" for p in range(60)]
    directories = []
    for package in packages:
        for area in AREAS:
            for sub in range(12):
                directories.append(f"{package}/{area}/m{sub}")
    made: list[str] = []
    for n in range(files):
        directory = directories[n % len(directories)]
        path = f"{directory}/f{n}.{rng.choice(EXTS)}"
        target = ws / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
        made.append(path)
    for package in packages[:20]:  # ignored build output and logs
        for k in range(40):
            (ws / package / "dist").mkdir(parents=True, exist_ok=True)
            (ws / package / "dist" / f"out{k}.js").write_text("x")
        (ws / package / "debug.log").write_text("x")
    for n in range(10):
        ext = EXTS[n % len(EXTS)]
        (mono / f".pi/rules/anc-{n}.md").write_text(rule(n, [f"ws/packages/*/src/**/*.{ext}"], mode_for(n)))
    for n in range(20):
        ext = EXTS[n % len(EXTS)]
        globs = [f"packages/*/{AREAS[n % len(AREAS)]}/**/*.{ext}", f"!packages/*/test/**/*.{ext}"]
        extra = "tools: [edit]\n" if n % 7 == 0 else ""
        (ws / f".pi/rules/cwd-{n}.md").write_text(rule(100 + n, globs, mode_for(n), extra))
    for p, package in enumerate(packages):
        rules_dir = ws / package / ".pi" / "rules"
        rules_dir.mkdir(parents=True)
        for k in range(3):
            ext = EXTS[(p + k) % len(EXTS)]
            (rules_dir / f"pkg-{k}.md").write_text(rule(200 + p * 3 + k, [f"src/**/*.{ext}"], mode_for(p + k)))
    for n in range(10):
        (home / f".pi/agent/rules/global-{n}.md").write_text(rule(900 + n, [f"**/*.{EXTS[n]}"], "touched"))
    subprocess.run(["git", "init", "-q", str(mono)], check=True)
    subprocess.run(["git", "-C", str(mono), "add", "-A"], check=True)
    return ws, home, made



def shell(command: str, cwd: Path) -> None:
    subprocess.run(command, shell=True, cwd=cwd, check=True, capture_output=True)



def node_scan(ws: Path, globs: list[str], tools: Path) -> dict[str, float]:
    """Time tinyglobby, fast-glob and globby(gitignore) on the same globs, in Node."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return {}
    if not (tools / "node_modules" / "globby").exists():
        tools.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["npm", "install", "--silent", "--prefix", str(tools), "tinyglobby", "fast-glob", "globby"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return {}
    script = tools / "scan.mjs"
    script.write_text(
        "import fg from 'fast-glob'; import { glob } from 'tinyglobby'; import { globby } from 'globby';\n"
        "const globs = JSON.parse(process.argv[2]); const cwd = process.argv[3]; const out = {};\n"
        "const opts = { cwd, dot: true, onlyFiles: true, ignore: ['**/.git/**', '**/node_modules/**'] };\n"
        "for (const [name, run] of [['tinyglobby', () => glob(globs, opts)], ['fast-glob', () => fg(globs, opts)],\n"
        "  ['globby+gitignore', () => globby(globs, { ...opts, gitignore: true })]]) {\n"
        "  let best = Infinity; for (let i = 0; i < 3; i++) { const t = performance.now(); await run();\n"
        "  best = Math.min(best, performance.now() - t); } out[name] = best / 1000; }\n"
        "console.log(JSON.stringify(out));\n"
    )
    done = subprocess.run(["node", str(script), json.dumps(globs), str(ws)], capture_output=True, text=True, cwd=tools)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the tree here")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp())
    if not (base / "mono").exists():
        ws, home, made = build(base, args.files)
    else:
        ws, home = base / "mono" / "ws", base / "home"
        made = [str(p.relative_to(ws)) for p in (ws / "packages").rglob("f*.*")]
    rng = random.Random(3)
    touched = tuple(rng.sample(made, 10))
    facts = Facts(cwd=str(ws), touched=touched, prompt="fix the typescript build", tools=("edit", "read"))
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    dirs = sum(1 for _ in ws.rglob("*") if _.is_dir())

    find = best_of(args.repeat, lambda: shell("find . -type f | wc -l", ws))
    ls_files = best_of(args.repeat, lambda: shell("git ls-files | wc -l", ws))
    cli = [sys.executable, "-m", "rules_hosts", "--cwd", str(ws), "report", "--no-branch",
           *[a for p in touched for a in ("--touched", p)]]
    cold = best_of(args.repeat, lambda: subprocess.run(cli, env=env, check=True, capture_output=True))

    engine = Engine(fresh_manager(), home=str(home), env={})
    first = engine.evaluate(facts)
    rules = first.rules
    queries: dict[str, list[tuple[str, ...]]] = {}
    for r in rules:
        if r.match in ("exists", "both"):
            queries.setdefault(r.file.base, []).append(tuple(r.globs))
    git_root = str(ws.parent)

    def scan_all() -> None:
        for root, qs in queries.items():
            engine.hooks.scan(root, qs, git_root)

    scan = best_of(args.repeat, scan_all)
    walk = best_of(args.repeat, lambda: scandir_walk(str(ws)))
    warm = statistics.median(best_of(1, lambda: engine.evaluate(facts)) for _ in range(args.repeat * 5))

    def after_write() -> None:
        engine.invalidate_scans()
        engine.evaluate(facts)

    invalidated = best_of(args.repeat, after_write)

    def cold_in_process() -> None:
        _compile.cache_clear()
        Engine(fresh_manager(), home=str(home), env={}).evaluate(facts)

    first_eval = best_of(args.repeat, cold_in_process)
    cwd_globs = [g for r in rules if r.match in ("exists", "both") and r.file.base == str(ws) for g in r.globs
                 if not g.startswith("!")]
    node = node_scan(ws, cwd_globs, base / "node-tools")
    own_cwd_scan = best_of(args.repeat, lambda: engine.hooks.scan(str(ws), queries.get(str(ws), []), git_root))

    statuses = {s: sum(o.status == s for o in first.outcomes) for s in ("active", "on-demand", "dropped", "inactive")}
    print(f"tree: {len(made)} files, {dirs} directories under ws; {len(rules)} rules {statuses}; "
          f"{len(first.errors)} errors")
    print(f"baseline find . -type f | wc -l   {find * 1000:8.1f} ms")
    print(f"baseline git ls-files | wc -l     {ls_files * 1000:8.1f} ms")
    print(f"baseline os.scandir walk          {walk * 1000:8.1f} ms")
    print(f"cold pi-rules report              {cold * 1000:8.1f} ms = {cold / find:5.2f}x find, {cold / ls_files:5.2f}x git ls-files")
    print(f"in-process first evaluation       {first_eval * 1000:8.1f} ms = {first_eval / walk:5.2f}x scandir walk")
    print(f"exists scan, all {sum(map(len, queries.values()))} queries     {scan * 1000:8.1f} ms = {scan / walk:5.2f}x scandir walk")
    print(f"exists scan, cwd globs only       {own_cwd_scan * 1000:8.1f} ms")
    for name, seconds in node.items():
        print(f"  node {name:<22} {seconds * 1000:8.1f} ms on the cwd globs -> ours {own_cwd_scan / seconds:5.2f}x")
    print(f"warm re-evaluation (no change)    {warm * 1000:8.2f} ms")
    print(f"re-evaluation after a write       {invalidated * 1000:8.1f} ms = {invalidated / walk:5.2f}x scandir walk")
    print(f"tree kept at {base}" if args.keep else "")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
