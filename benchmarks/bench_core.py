"""Core benchmark: 200 native rules, 20k files. Run by hand, never in CI:

    python benchmarks/bench_core.py [--files 20000] [--rules 200] [--repeat 5]

Every number is a ratio against a baseline measured in the same run, so results compare
across machines: the cold CLI against ``python -c pass``, in-process evaluations against
a bare ``os.scandir`` walk of the same tree.
"""

from __future__ import annotations

import argparse
import os
import random
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

DIRS = ["src", "lib", "packages/a/src", "packages/b/src", "docs", "tests", "scripts", "infra"]
EXTS = ["ts", "tsx", "py", "md", "json", "go", "rs", "yml", "sql", "css"]


def build_tree(root: Path, files: int, rules: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    made: list[str] = []
    for n in range(files):
        directory = f"{rng.choice(DIRS)}/m{n % 97}/d{n % 13}"
        path = f"{directory}/f{n}.{rng.choice(EXTS)}"
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
        made.append(path)
    rules_dir = root / ".pi" / "rules"
    rules_dir.mkdir(parents=True)
    for n in range(rules):
        directory, ext = DIRS[n % len(DIRS)], EXTS[n % len(EXTS)]
        mode = ("exists", "both", "touched")[n % 3] if n % 3 != 2 else "touched"
        globs = [f"{directory}/**/*.{ext}", f"!{directory}/**/skip-{n}.{ext}"]
        if n % 7 == 0:
            globs.append(f"**/*.{ext}")
        extra = f"tools: [edit]\n" if n % 11 == 0 else ""
        extra += f'model: "*sonnet*"\n' if n % 13 == 0 else ""
        (rules_dir / f"rule-{n:03d}.md").write_text(
            f"---\ndescription: rule {n}\nversion: 1\nglobs: {globs!r}\nmatch: {mode}\n"
            f"priority: {n % 5}\n{extra}---\nRule {n} body. " + "Keep it short. " * (n % 20) + "\n"
        )
    return made




def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rules", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        home = Path(tmp) / "home"
        home.mkdir()
        made = build_tree(root, args.files, args.rules)
        touched = tuple(random.Random(1).sample(made, 20))
        facts = Facts(cwd=str(root), touched=touched, prompt="fix the python tests", model="claude-sonnet-4",
                      tools=("edit", "read"))
        env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}

        walk = best_of(args.repeat, lambda: scandir_walk(str(root)))
        python_pass = best_of(args.repeat, lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
        cli_args = [sys.executable, "-m", "rules_hosts", "--cwd", str(root), "report", "--no-branch",
                    *[a for p in touched for a in ("--touched", p)]]
        cold_cli = best_of(args.repeat, lambda: subprocess.run(cli_args, env=env, check=True, capture_output=True))

        def first_evaluation() -> None:
            _compile.cache_clear()  # a first evaluation compiles every glob afresh
            engine = Engine(fresh_manager(), home=str(home), env={})
            engine.evaluate(facts)

        first = best_of(args.repeat, first_evaluation)
        engine = Engine(fresh_manager(), home=str(home), env={})
        evaluation = engine.evaluate(facts)
        repeat = statistics.median(best_of(1, lambda: engine.evaluate(facts)) for _ in range(args.repeat * 3))
        statuses = {s: sum(o.status == s for o in evaluation.outcomes) for s in ("active", "dropped", "inactive")}

        print(f"tree: {args.files} files, {args.rules} rules; outcome {statuses}; errors {len(evaluation.errors)}")
        print(f"baseline python -c pass      {python_pass * 1000:8.1f} ms")
        print(f"baseline os.scandir walk     {walk * 1000:8.1f} ms")
        print(f"cold pi-rules report         {cold_cli * 1000:8.1f} ms  = {cold_cli / python_pass:5.1f}x python -c pass")
        print(f"in-process first evaluation  {first * 1000:8.1f} ms  = {first / walk:5.1f}x scandir walk")
        print(f"in-process repeat evaluation {repeat * 1000:8.1f} ms  = {repeat / walk:5.2f}x scandir walk")


if __name__ == "__main__":
    main()
