"""Hook-call benchmark (issue 16, part 5). Run by hand, never in CI:

    python benchmarks/bench_hook.py [--keep DIR] [--repeat 7] [--no-monorepo]

Times, as medians of ``--repeat`` runs interleaved so load on the machine hits all alike:
``python -c pass``; ``find . -type f | wc -l``; a process that only imports the CLI and
makes the plugin manager (the floor under every call); a Claude Code ``PostToolUse`` hook
call (the session's state file exists) answered by the resident hook server (a private
runtime folder; the server is started and waited for first), then in process
(``PI_RULES_HOOK_SERVER=off``) with the persistent cache warm and with
``PI_RULES_CACHE=off``; and a fresh ``pi-rules report`` process with a warm cache, with no
cache (the cache directory removed before each run, so it is written again) and with
``PI_RULES_CACHE=off``. Before those, a warm hook call is split in process into imports,
plugin manager and the call itself. Two trees: a 3,000-file
repository built here (30 modules x 10 folders, 24 rules, 40% of them ``exists``), and the
100,000-file monorepo of ``bench_monorepo.py`` (``--keep DIR`` builds it once, reused).
Every figure is printed, wall and CPU time, with its ratio to a baseline of the same run
and the target (targets are on wall time).
A third tree, a 2-rule repository, gives issue 30's start-up rows: ``pi-rules --version``
and a fresh ``report`` (warm cache) against ``python -c pass`` in the same runs.
``--against COMMIT`` also times the floor, the warm hook and the warm report of an earlier
commit (exported with ``git archive``), interleaved with this checkout's in the same runs.

Bytecode is cached (``PYTHONPYCACHEPREFIX`` under the tree's folder) as in an installed
copy: a source checkout run with ``PYTHONDONTWRITEBYTECODE`` recompiles every module on
each start, which alone costs more than the whole warm hook call.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

EXTS = ["ts", "tsx", "py", "md", "json", "css", "go", "yml"]


def _rule(n: int, globs: list[str], mode: str) -> str:
    return (f"---\ndescription: rule {n}\nversion: 1\nglobs: {json.dumps(globs)}\nmatch: {mode}\n---\n"
            f"Rule {n}: " + "keep it short. " * (n % 7) + "\n")


def build_small(base: Path, files: int = 3000) -> tuple[Path, Path]:
    """A 3k-file git repository: ``src/m<i>/d<j>/f<k>.<ext>``, 24 rules in ``.pi/rules``."""
    repo, home = base / "small", base / "small-home"
    (repo / ".pi/rules").mkdir(parents=True)
    (home / ".pi/agent/rules").mkdir(parents=True)
    (repo / ".gitignore").write_text("dist/\n*.log\n")
    for n in range(files):
        path = repo / "src" / f"m{n % 30}" / f"d{(n // 30) % 10}" / f"f{n}.{EXTS[n % len(EXTS)]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    for n in range(24):
        ext = EXTS[n % len(EXTS)]
        mode = ("exists", "both", "touched", "touched", "touched")[n % 5]
        globs = [f"src/m{n}/**/*.{ext}"] if n % 3 else [f"**/*.{ext}", "!**/d9/**"]
        (repo / f".pi/rules/r{n}.md").write_text(_rule(n, globs, mode))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, home


def build_mono(keep: Path | None) -> tuple[Path, Path, Path]:
    from bench_monorepo import build  # the same tree bench_monorepo.py times

    base = keep or Path(tempfile.mkdtemp())
    if not (base / "mono").exists():
        build(base, 100_000)
    return base / "mono" / "ws", base / "home", base


def build_tiny(base: Path) -> tuple[Path, Path]:
    """A git repository with two rules and a few files (issue 30's "small repository")."""
    repo, home = base / "tiny", base / "tiny-home"
    (repo / ".pi/rules").mkdir(parents=True)
    home.mkdir()
    (repo / ".pi/rules/ts.md").write_text(_rule(1, ["src/**/*.ts"], "touched"))
    (repo / ".pi/rules/docs.md").write_text(_rule(2, ["docs/**/*.md"], "exists"))
    for name in ("src/app.ts", "src/util.ts", "docs/readme.md", "README.md"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, home


def measure_start(tree: Path, home: Path, scratch: Path, repeat: int,
                  against: Path | None = None) -> dict[str, tuple[float, float]]:
    """Issue 30's start-up rows: ``--version`` and a fresh report on the 2-rule repository."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"HOME": str(home), "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
                "XDG_STATE_HOME": str(scratch / "state"), "XDG_CACHE_HOME": str(scratch / "cache"),
                "PI_RULES_HOOK_SERVER": "off"})
    version = [sys.executable, "-m", "rules_hosts", "--version"]
    report = [sys.executable, "-m", "rules_hosts", "--cwd", str(tree), "report", "--no-branch", "--touched", "src/app.ts"]
    old_env = {**env, "PYTHONPATH": str(against)}
    earlier: dict[str, Callable[[], object]] = {
        "pi-rules --version (against)": lambda: _run(version, tree, old_env),
        "fresh report, 2 rules, warm cache (against)": lambda: _run(report, tree, old_env),
    } if against else {}
    return _median(repeat, {
        **earlier,
        "python -c pass": lambda: _run([sys.executable, "-c", "pass"], tree, env),
        "pi-rules --version": lambda: _run(version, tree, env),
        "fresh report, 2 rules, warm cache": lambda: _run(report, tree, env),
    })


def _median(repeat: int, actions: dict[str, Callable[[], object]]) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per action; runs interleaved (a, b, c, a, b, c …) after one
    warm-up. CPU is user + system time of the child processes: other work on a shared
    machine inflates it far less than wall time."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in actions}
    for action in actions.values():
        action()
    for _ in range(repeat):
        for name, action in actions.items():
            cpu, start = _children_cpu(), time.perf_counter()
            action()
            times[name].append((time.perf_counter() - start, _children_cpu() - cpu))
    return {name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
            for name, values in times.items()}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(command: list[str] | str, cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> None:
    subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, check=True,
                   shell=isinstance(command, str))


def measure(tree: Path, home: Path, scratch: Path, touched: str, repeat: int,
            against: Path | None = None) -> dict[str, tuple[float, float]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"HOME": str(home), "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
                "XDG_STATE_HOME": str(scratch / "state"), "XDG_CACHE_HOME": str(scratch / "cache")})
    served_env = {**env, "XDG_RUNTIME_DIR": str(_runtime())}
    env["PI_RULES_HOOK_SERVER"] = "off"  # every other row: one whole process per call
    cold_env = {**env, "XDG_CACHE_HOME": str(scratch / "cold-cache")}
    off_env = {**env, "PI_RULES_CACHE": "off"}
    python = [sys.executable]
    hook = [*python, "-m", "rules_hosts", "hook", "claude-code"]
    report = [*python, "-m", "rules_hosts", "--cwd", str(tree), "report", "--no-branch", "--touched", touched]
    session = {"session_id": "bench-hook", "cwd": str(tree)}
    start = json.dumps({**session, "hook_event_name": "SessionStart", "source": "startup"}).encode()
    post = json.dumps({**session, "hook_event_name": "PostToolUse", "tool_name": "Read",
                       "tool_input": {"file_path": str(tree / touched)}, "tool_response": {}}).encode()
    _run(hook, tree, env, start)  # the session's state file exists from here on
    _start_server(hook, tree, served_env, post)
    for root in (ROOT, against) if against else (ROOT,):
        for name, seconds in phases(tree, home, scratch, post, repeat, root).items():
            print(f"  phase: {name:<31} {seconds * 1000:8.1f} ms" + ("" if root == ROOT else "  (against)"))

    def cold_report() -> None:
        shutil.rmtree(scratch / "cold-cache", ignore_errors=True)
        _run(report, tree, cold_env)

    # The floor under every call: import the CLI and the engine, load every plugin.
    # (cli_app is the CLI app since the hook server; --against may time a commit before it.)
    floor = [*python, "-c", "import os, contextlib, rules_hosts.cli\n"
             "with contextlib.suppress(ImportError): import rules_hosts.cli.app\n"
             "from rules_hosts.cli.config import configured_engine as c\n"
             "c('.', True, (), ('hook', 'claude-code'), os.environ)"]
    old_env = {**env, "PYTHONPATH": str(against)}
    earlier: dict[str, Callable[[], object]] = {
        "imports + plugin manager only (against)": lambda: _run(floor, tree, old_env),
        "PostToolUse hook, in process, warm cache (against)": lambda: _run(hook, tree, old_env, post),
        "fresh report, warm cache (against)": lambda: _run(report, tree, old_env),
    } if against else {}
    return _median(repeat, {
        **earlier,
        "python -c pass": lambda: _run([*python, "-c", "pass"], tree, env),
        "imports + plugin manager only": lambda: _run(floor, tree, env),
        "find . -type f | wc -l": lambda: _run("find . -type f | wc -l", tree, env),
        "PostToolUse hook, hook server": lambda: _run(hook, tree, served_env, post),
        "PostToolUse hook, in process, warm cache": lambda: _run(hook, tree, env, post),
        "PostToolUse hook, in process, PI_RULES_CACHE=off": lambda: _run(hook, tree, off_env, post),
        "fresh report, warm cache": lambda: _run(report, tree, env),
        "fresh report, no cache": cold_report,
        "fresh report, PI_RULES_CACHE=off": lambda: _run(report, tree, off_env),
    })


def _runtime() -> Path:
    """A short private runtime folder (a socket path must fit in 108 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="bh-", dir="/tmp"))
    _RUNTIMES.append(folder)
    return folder


_RUNTIMES: list[Path] = []


def _start_server(hook: list[str], tree: Path, env: dict[str, str], post: bytes) -> None:
    """The first call starts the server; wait until it listens, so every timed call is served."""
    _run(hook, tree, env, post)
    folder = Path(env["XDG_RUNTIME_DIR"]) / "pi-rules"
    deadline = time.monotonic() + 60
    while not list(folder.glob("*.pid")) and time.monotonic() < deadline:
        time.sleep(0.05)


def _stop_servers() -> None:
    for folder in _RUNTIMES:
        for pid_file in (folder / "pi-rules").glob("*.pid"):
            try:
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        shutil.rmtree(folder, ignore_errors=True)


_PHASES = """
import io, json, os, sys, time
start = time.perf_counter()
from rules_hosts.claude_code import hook
from rules_hosts.cli.config import configured_engine
imported = time.perf_counter()
engine = configured_engine(sys.argv[1], True, (), ("hook", "claude-code"), os.environ)
made = time.perf_counter()
hook.main(io.StringIO(sys.argv[2]), io.StringIO(), io.StringIO(), engine=engine, cwd=sys.argv[1])
done = time.perf_counter()
print(json.dumps({"imports": imported - start, "plugin manager": made - imported, "the call": done - made,
                  "cache": engine.discovery.persistent.stats}))
"""


def phases(tree: Path, home: Path, scratch: Path, post: bytes, repeat: int, root: Path = ROOT) -> dict[str, float]:
    """Where a warm hook call's time goes, in process (median of ``repeat``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"HOME": str(home), "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
                "XDG_STATE_HOME": str(scratch / "state"), "XDG_CACHE_HOME": str(scratch / "cache")})
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", _PHASES, str(tree), post.decode()], env=env, cwd=tree,
                              capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout))
    print(f"\n{tree}: a warm hook call in process, cache {runs[-1]['cache']}")
    return {name: statistics.median(r[name] for r in runs) for name in ("imports", "plugin manager", "the call")}


def _export(commit: str, folder: Path) -> Path:
    """The commit's files only (``git archive``): no worktree to clean up."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def show(title: str, figures: dict[str, tuple[float, float]], targets: dict[str, tuple[str, float | None]]) -> None:
    print(f"\n{title}")
    for name, (seconds, cpu) in figures.items():
        line = f"  {name:<48} {seconds * 1000:8.1f} ms  cpu {cpu * 1000:7.1f} ms"
        if name in targets:
            baseline, limit = targets[name]
            ratio = seconds / figures[baseline][0]
            line += f"   = {ratio:5.2f}x (cpu {cpu / figures[baseline][1]:5.2f}x) {baseline}"
            if limit is not None:
                line += f" (target <= {limit}x: {'meets' if ratio <= limit else 'MISSES'})"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="build (or reuse) the 100k-file monorepo here")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-monorepo", action="store_true", help="time the 3k-file repository only")
    parser.add_argument("--against", metavar="COMMIT", help="also time this earlier commit in the same runs")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    try:
        against = _export(args.against, scratch / "against") if args.against else None
        tiny, tiny_home = build_tiny(scratch)
        small, small_home = build_small(scratch)
        time.sleep(1.1)  # paths changed within the last second are never cached ("racy")
        figures = measure_start(tiny, tiny_home, scratch / "t", args.repeat, against)
        show(f"2-rule repository ({tiny})", figures, {
            **{name: ("python -c pass", None) for name in figures if name.endswith("(against)")},
            "pi-rules --version": ("python -c pass", 2.0),
            "fresh report, 2 rules, warm cache": ("python -c pass", 4.0),
        })
        touched = "src/m1/d1/f31.tsx"
        figures = measure(small, small_home, scratch / "s", touched, args.repeat, against)
        show(f"3,000-file repository ({small})", figures, {
            **{name: ("python -c pass", None) for name in figures if name.endswith("(against)")},
            "imports + plugin manager only": ("python -c pass", None),
            "PostToolUse hook, hook server": ("python -c pass", 1.5),
            "PostToolUse hook, in process, warm cache": ("python -c pass", None),
            "PostToolUse hook, in process, PI_RULES_CACHE=off": ("python -c pass", None),
            "fresh report, warm cache": ("python -c pass", None),
        })
        if not args.no_monorepo:
            ws, home, base = build_mono(args.keep)
            touched = next(str(p.relative_to(ws)) for p in (ws / "packages/pkg03/src").rglob("f*.ts"))
            figures = measure(ws, home, scratch / "m", touched, max(3, args.repeat // 2), against)
            show(f"100,000-file monorepo ({base})", figures, {
                **{name: ("find . -type f | wc -l", None) for name in figures if name.endswith("(against)")},
                "imports + plugin manager only": ("find . -type f | wc -l", None),
                "PostToolUse hook, hook server": ("find . -type f | wc -l", 0.5),
                "PostToolUse hook, in process, warm cache": ("find . -type f | wc -l", None),
                "PostToolUse hook, in process, PI_RULES_CACHE=off": ("find . -type f | wc -l", None),
                "fresh report, warm cache": ("find . -type f | wc -l", 1.5),
                "fresh report, no cache": ("find . -type f | wc -l", 2.5),
                "fresh report, PI_RULES_CACHE=off": ("find . -type f | wc -l", None),
            })
    finally:
        _stop_servers()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
