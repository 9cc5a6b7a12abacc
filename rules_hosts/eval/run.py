"""Running eval cases: every case N times per arm (``with`` the rule, ``without`` it —
muted —, and ``variant`` when the case gives another body), each run in a throw-away copy,
each result one JSON line in the results file so an interrupted eval resumes where it
stopped; then the compliance rates with 95% Wilson intervals (docs/eval.md)."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from rules_core.model import Rule

from rules_hosts.cli.config import configured_engine
from rules_hosts.session.runtime import Session
from rules_hosts.session.file import append_line, encode_line, open_for_append
from .cases import EvalCase
from .runners import AgentRunner, RunOutcome, RunRequest
from .workspace import FixtureError, judge, make_workspace

Z95 = 1.959963984540054
DEFAULT_TIMEOUT = 600.0
MAX_RESULTS = 256 * 1024 * 1024


@dataclass
class CaseResult:
    case: EvalCase
    arms: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    load: str | None = None  # the rule's load: ``on-demand`` rules get a fetch rate
    error: str | None = None


def wilson(passed: int, runs: int) -> tuple[float, float]:
    """The 95% Wilson score interval of ``passed`` out of ``runs`` (``(0, 1)`` for none)."""
    if runs == 0:
        return 0.0, 1.0
    p = passed / runs
    denominator = 1 + Z95 * Z95 / runs
    centre = (p + Z95 * Z95 / (2 * runs)) / denominator
    spread = Z95 * math.sqrt(p * (1 - p) / runs + Z95 * Z95 / (4 * runs * runs)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def arms_of(case: EvalCase) -> tuple[str, ...]:
    return ("with", "without", "variant") if case.variant else ("with", "without")


def read_results(path: str | None) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """The runs a results file already holds, by (file, case, arm, run); torn or foreign
    lines are skipped (a killed eval leaves at most its last line torn)."""
    if path is None or not os.path.exists(path):
        return {}
    with open(path, "rb") as handle:  # OSError (a folder, no permission): the CLI reports it
        data = handle.read(MAX_RESULTS)
    found: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for line in data.split(b"\n"):
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("run"), int):
            found[_key(record)] = record
    return found


def _key(record: Mapping[str, Any]) -> tuple[str, str, str, int]:
    return str(record.get("file")), str(record.get("case")), str(record.get("arm")), int(record["run"])


@dataclass(frozen=True)
class EvalOptions:
    runners: Mapping[str, AgentRunner]
    results: str | None = None
    runs: int | None = None  # --runs: every case's count
    runner: str | None = None  # --runner: every case's runner
    timeout: float = DEFAULT_TIMEOUT
    blocked: Sequence[str] = ()
    base: str = "."  # case files are named relative to it in results
    progress: Callable[[str], None] = lambda line: None


def run_cases(cases: Sequence[EvalCase], options: EvalOptions) -> list[CaseResult]:
    done = read_results(options.results)
    return [_run_case(case, options, done) for case in cases]


def _run_case(case: EvalCase, options: EvalOptions, done: Mapping[tuple[str, str, str, int], dict[str, Any]]) -> CaseResult:
    result = CaseResult(case)
    name = options.runner or case.runner
    runner = options.runners.get(name)
    if runner is None:
        result.error = f"no agent runner named {name!r}; known: {', '.join(sorted(options.runners))}"
        return result
    missing = runner.missing()
    rule, why = _find_rule(case, options)
    if rule is None:
        result.error = why
        return result
    result.load = rule.load
    file = os.path.relpath(case.file, options.base)
    for arm in arms_of(case):
        records = result.arms.setdefault(arm, [])
        for number in range(options.runs or case.runs):
            record = done.get((file, case.name, arm, number))
            if record is None:
                if missing is not None:
                    result.error = f"runner {name!r} cannot run here: {missing}"
                    return result
                record = _one_run(case, arm, number, file, runner, options)
                _append(options.results, record)
                options.progress(f"{case.name} [{arm}] run {number + 1}: {'pass' if record['passed'] else 'fail'}"
                                 + (f" ({record['error']})" if record.get("error") else ""))
            records.append(record)
    return result


def _find_rule(case: EvalCase, options: EvalOptions) -> tuple[Rule | None, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    engine, _ = configured_engine(case.fixture, True, options.blocked, ("eval",), env)
    rules = engine.discover(case.fixture, True).rules
    for rule in rules:
        if rule.id == case.rule:
            return rule, ""
    import difflib

    close = difflib.get_close_matches(case.rule, [r.id for r in rules], n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"`pi-rules list --cwd {case.fixture}` shows the ids"
    return None, f"{case.file}:{case.line}: case {case.name!r}: no rule {case.rule!r} in {case.fixture}; {hint}"


def _one_run(case: EvalCase, arm: str, number: int, file: str, runner: AgentRunner, options: EvalOptions) -> dict[str, Any]:
    root = tempfile.mkdtemp(prefix="pi-rules-eval-")
    started = time.monotonic()
    try:
        workspace = make_workspace(case.fixture, root)
        env = workspace.env(os.environ)
        if arm == "without":
            _mute(workspace.folder("config"), case.rule)
        engine, _ = configured_engine(workspace.project, True, options.blocked, ("eval",), env)
        rule = next((r for r in engine.discover(workspace.project, True).rules if r.id == case.rule), None)
        if arm == "variant" and rule is not None and case.variant:
            _rewrite_body(rule.file.path, case.variant, workspace.project)
            engine, _ = configured_engine(workspace.project, True, options.blocked, ("eval",), env)
        session = Session(engine, workspace.project, trusted=True, host="pi", env=env)
        section = session.before_agent_start(case.prompt).section or ""
        request = RunRequest(case, arm, workspace, env, rule.file.path if rule else None, section, options.timeout)
        outcome = runner.run(request)
        checks = judge(case.checks, workspace.project, env)
    except (FixtureError, OSError) as exc:
        outcome, checks = RunOutcome(error=str(exc)), []
    except Exception as exc:  # a runner plugin's bug costs its run, never the eval
        outcome, checks = RunOutcome(error=f"internal error: {type(exc).__name__}: {exc}"), []
    finally:
        seconds = time.monotonic() - started
        shutil.rmtree(root, ignore_errors=True)
    return {
        "file": file, "case": case.name, "rule": case.rule, "arm": arm, "run": number,
        "passed": bool(checks) and all(c["passed"] for c in checks) and outcome.error is None,
        "checks": checks, "error": outcome.error, "exit": outcome.exit, "inputTokens": outcome.input_tokens,
        "outputTokens": outcome.output_tokens, "costUsd": outcome.cost_usd, "seconds": round(seconds, 3),
        "listed": outcome.listed, "fetched": outcome.fetched,
    }


def _mute(config: str, rule_id: str) -> None:
    """The "without" arm: the rule is disabled in the run's own user settings file (the
    project's files stay as the fixture has them)."""
    folder = os.path.join(config, "pi-rules")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.toml"), "w", encoding="utf-8") as out:
        out.write(f"disable = [{json.dumps(rule_id)}]\n")  # a JSON string is a TOML basic string


def _rewrite_body(path: str, body: str, project: str) -> None:
    """The rule file with ``body`` after its frontmatter (the whole file when it has none);
    never a file outside the run's copy (a rule file reached through a link)."""
    if not os.path.realpath(path).startswith(os.path.realpath(project) + os.sep):
        raise OSError(f"the variant arm rewrites the rule file, and {path} lies outside the fixture's copy")
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        lines = handle.read().splitlines(keepends=True)
    head: list[str] = []
    if lines and lines[0].lstrip("\ufeff").rstrip("\r\n") == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
        head = lines[: end + 1] if end is not None else []
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write("".join(head) + body.rstrip("\n") + "\n")


def _append(path: str | None, record: dict[str, Any]) -> None:
    if path is None:
        return
    fd = open_for_append(path)
    try:
        append_line(fd, encode_line(record), sync=True)
    finally:
        os.close(fd)


# -- the summary ------------------------------------------------------------------------------


def summary(result: CaseResult) -> dict[str, Any]:
    """One case as ``--format json`` prints it (CONTRACT §7), with usage beside it."""
    case = result.case
    arms = {arm: _rate(records) for arm, records in result.arms.items()}
    with_arm = arms.get("with")
    without = arms.get("without")
    listed = [r for r in result.arms.get("with", []) if r.get("listed")]
    fetch_rate = None
    if result.load == "on-demand" and listed:
        fetch_rate = sum(1 for r in listed if r.get("fetched")) / len(listed)
    floor = case.min_compliance
    return {
        "name": case.name, "rule": case.rule, "with": with_arm, "without": without,
        **({"variant": arms["variant"]} if "variant" in arms else {}),
        "delta": None if not with_arm or not without else round(with_arm["rate"] - without["rate"], 4),
        "fetchRate": fetch_rate, "minCompliance": floor,
        "passed": result.error is None and (floor is None or (with_arm is not None and with_arm["rate"] >= floor)),
        "usage": {arm: _usage(records) for arm, records in result.arms.items()},
        "error": result.error,
    }


def _rate(records: list[dict[str, Any]]) -> dict[str, Any]:
    runs, passed = len(records), sum(1 for r in records if r.get("passed"))
    low, high = wilson(passed, runs)
    return {"runs": runs, "passed": passed, "rate": round(passed / runs, 4) if runs else 0.0,
            "low": round(low, 4), "high": round(high, 4)}


def _usage(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Means per run of what the agent reported (``None`` when no run reported it)."""
    def mean(key: str) -> float | None:
        values = [r[key] for r in records if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
        # Dollars keep six places: a run of a small model costs fractions of a cent.
        return round(sum(values) / len(values), 6 if key == "costUsd" else 3) if values else None

    return {"inputTokens": mean("inputTokens"), "outputTokens": mean("outputTokens"),
            "costUsd": mean("costUsd"), "seconds": mean("seconds")}
