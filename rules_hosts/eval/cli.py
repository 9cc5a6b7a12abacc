"""``pi-rules eval``: read the case files, run them, print text or JSON, exit 1 when a
case is below its ``min_compliance`` or could not run."""

from __future__ import annotations

import glob
import os
import signal
import sys
from typing import Any

from rules_core.safe import safe_json, safe_line

from .cases import CaseFileError, EvalCase, read_cases
from .run import DEFAULT_TIMEOUT, CaseResult, EvalOptions, run_cases, summary
from .runners import AgentRunner


def default_case_files(project: str) -> list[str]:
    return sorted(glob.glob(os.path.join(glob.escape(project), ".pi", "evals", "*.yaml")))


def runners_of(engine: Any) -> dict[str, AgentRunner]:
    """Every plugin's runners by name; a plugin that raised is named on stderr and its
    runners are missing (the fault policy of docs/plugins.md)."""
    results, faults = engine.hooks.call("pi_rules_agent_runners")
    for name, exc in faults:
        print(f"pi-rules eval: runner plugin {name!r} failed ({type(exc).__name__}: {exc}); its runners are missing",
              file=sys.stderr)
    found: dict[str, AgentRunner] = {}
    # pluggy calls the latest-registered plugin first: reversed, a later one replaces an earlier one.
    for result in reversed(results or []):
        for runner in result or ():
            if isinstance(runner, AgentRunner):
                found[runner.name] = runner
    return found


def run(command: Any) -> int:
    args = command.args
    cwd = os.path.abspath(command.cwd)
    if args.untrusted:  # the cases start programs the repository names
        print("pi-rules eval: eval runs the agent and the commands its case files name; it needs a trusted "
              "project (drop --untrusted once you have read .pi/evals/)", file=sys.stderr)
        return 1
    paths = [os.path.join(cwd, f) for f in args.files] or default_case_files(cwd)
    if not paths:
        print("pi-rules eval: no cases found; write .pi/evals/*.yaml (docs/eval.md)", file=sys.stderr)
        return 1
    if args.runs is not None and args.runs < 1:
        print("pi-rules eval: --runs must be at least 1", file=sys.stderr)
        return 1
    cases: list[EvalCase] = []
    errors: list[CaseFileError] = []
    for path in paths:
        found, problems = read_cases(path, cwd)
        cases.extend(found)
        errors.extend(problems)
    for error in errors:
        where = f"{os.path.relpath(error.file)}:{error.line}" if error.line else os.path.relpath(error.file)
        print(f"pi-rules eval: {where}: {safe_line(error.message)}", file=sys.stderr)
    options = EvalOptions(
        runners=runners_of(command.engine), results=os.path.abspath(args.results) if args.results else None,
        runs=args.runs, runner=args.runner, timeout=args.timeout or DEFAULT_TIMEOUT,
        blocked=tuple(command.engine.options.get("plugins.block", ())), base=cwd,
        progress=lambda line: print(safe_line(line), file=sys.stderr, flush=True),
    )
    # SIGTERM unwinds like Ctrl-C: the running agent's process group is killed and its copy removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        results = run_cases(cases, options)
    except OSError as exc:  # the results file: a folder, unwritable, the disk full
        print(f"pi-rules eval: cannot use the results file {args.results}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    summaries = [summary(r) for r in results]
    if (args.format or ("json" if args.json else "text")) == "json":
        sys.stdout.write(safe_json({"cases": summaries}) + "\n")
    else:
        sys.stdout.write(render_text(results, summaries))
    return 0 if not errors and all(s["passed"] for s in summaries) else 1


def render_text(results: list[CaseResult], summaries: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for result, data in zip(results, summaries):
        lines.append(f"{'PASS' if data['passed'] else 'FAIL'} {data['name']} (rule {data['rule']})")
        if data["error"]:
            lines.append(f"  error: {data['error']}")
            continue
        for arm in ("with", "without", "variant"):
            rate = data.get(arm)
            if rate:
                lines.append(f"  {arm:<8} {rate['passed']}/{rate['runs']} {_pct(rate['rate'])}"
                             f"  95% CI {_pct(rate['low'])}–{_pct(rate['high'])}")
        if data["delta"] is not None:
            lines.append(f"  delta    {data['delta'] * 100:+.0f} points")
        if data["fetchRate"] is not None:
            lines.append(f"  fetched  {_pct(data['fetchRate'])} of the runs that listed it")
        for arm, usage in data["usage"].items():
            parts = [f"{usage['inputTokens']:.0f} in / {usage['outputTokens']:.0f} out tokens"
                     if usage["inputTokens"] is not None and usage["outputTokens"] is not None else "",
                     f"${usage['costUsd']:.4f}" if usage["costUsd"] is not None else "",
                     f"{usage['seconds']:.1f} s" if usage["seconds"] is not None else ""]
            lines.append(f"  per run  {arm}: {', '.join(p for p in parts if p)}")
        floor = data["minCompliance"]
        if floor is not None and not data["passed"]:
            lines.append(f"  below min_compliance {floor:g}")
    passed = sum(1 for s in summaries if s["passed"])
    lines.append(f"{passed} passed, {len(summaries) - passed} failed")
    return "\n".join(lines) + "\n"


def _pct(rate: float) -> str:
    return f"{rate * 100:.0f}%"
