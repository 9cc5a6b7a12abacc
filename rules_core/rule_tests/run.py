"""Running declarative rule tests (``rule_tests``) against an ``Engine``.

Each case is one evaluation (or, for a stream case, one ``StreamWatcher.check``) on the
facts the case gives and nothing else: no live git branch, no process environment but
the engine's own plus the case's ``env``. A failure carries what differed and the
``explain`` lines of the rules involved, so the output says why without a rerun.
"""

from __future__ import annotations

import dataclasses
import difflib
import glob
import os
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from rules_core.engine.core import Engine
from rules_core.lookup import normalize_touched
from rules_core.plugins.manager import make_plugin_manager
from rules_core.model import Discovery, Evaluation, Explanation, Facts, RuleError
from rules_core.rule_tests.cases import CaseFile, CaseFileError, ErrorExpectation, RuleCase, read_case_file
from rules_core.settings.load import SettingsCache
from rules_core.settings.apply import plugin_blocks, project_bound
from rules_core.stream.watcher import StreamWatcher, globs_gate
from rules_core.stream.model import Firing, StreamSpec

DEFAULT_FILE = os.path.join(".pi", "rules.test.yaml")
DEFAULT_DIR = os.path.join(".pi", "tests")
MAX_ENGINES = 32  # one engine per distinct case `env`; a file with more reuses none


@dataclass(frozen=True)
class CaseResult:
    case: RuleCase
    problems: tuple[str, ...]
    details: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class RunReport:
    results: tuple[CaseResult, ...]
    errors: tuple[CaseFileError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors and all(r.passed for r in self.results)


def default_case_files(project: str) -> list[str]:
    """``.pi/rules.test.yaml`` and ``.pi/tests/*.yaml`` of ``project`` that exist, in order."""
    found = [os.path.join(project, DEFAULT_FILE)] if os.path.isfile(os.path.join(project, DEFAULT_FILE)) else []
    found += sorted(glob.glob(os.path.join(glob.escape(os.path.join(project, DEFAULT_DIR)), "*.yaml")))
    return found


def project_engine(project: str, env: Mapping[str, str], blocked: Sequence[str] = ()) -> Engine:
    """The engine ``pi-rules`` makes for ``project``: installed plugins, minus ``blocked``
    and the settings files' ``[plugins] block``."""
    home = env.get("HOME") or None
    cache = SettingsCache(env, home, project_bound(home))
    settings = cache.settings(os.path.abspath(project), True)
    pm = make_plugin_manager([*blocked, *plugin_blocks(settings, None)], env=env)
    return Engine(pm, env=env, settings=cache)


def run_files(engine: Engine, paths: Sequence[str], project: str, trusted: bool = True) -> RunReport:
    files = [read_case_file(path) for path in paths]
    return run_case_files(engine, files, project, trusted)


def run_case_files(engine: Engine, files: Sequence[CaseFile], project: str, trusted: bool = True) -> RunReport:
    runner = CaseRunner(engine, project, trusted)
    results = tuple(runner.run(case) for f in files for case in f.cases)
    return RunReport(results, tuple(e for f in files for e in f.errors))


class CaseRunner:
    """Runs cases of one project; keeps one engine per distinct ``env`` (bounded)."""

    def __init__(self, engine: Engine, project: str, trusted: bool = True) -> None:
        self.engine = engine
        self.project = os.path.abspath(project)
        self.trusted = trusted
        self._engines: dict[tuple[tuple[str, str], ...], Engine] = {}

    def run(self, case: RuleCase) -> CaseResult:
        """Never raises: a fault is the case's failure, named."""
        try:
            engine = self._engine(case)
            problems = _host_problems(engine, case)
            if problems:
                return CaseResult(case, problems)
            facts = self.facts(engine, case)
            if case.is_stream:
                return _run_stream(engine, case, facts)
            return _run_evaluation(engine, case, facts)
        except Exception as exc:  # noqa: BLE001 - the engine never raises into a host; this is the host
            return CaseResult(case, (f"internal error: {type(exc).__name__}: {exc}",))

    def facts(self, engine: Engine, case: RuleCase) -> Facts:
        """The case's facts as a host builds them; the budget comes from the settings."""
        settings = engine.settings(self.project, self.trusted)
        tools = case.tools
        return Facts(
            cwd=self.project, trusted=self.trusted, touched=normalize_touched(case.touched, self.project),
            prompt=case.prompt, model=case.model, branch=case.branch, tools=tools, agent=case.agent,
            host=case.host, max_tokens=settings.value("max_tokens", case.host).value,
            overflow=settings.value("overflow", case.host).value,
        )

    def _engine(self, case: RuleCase) -> Engine:
        if not case.env:
            return self.engine
        key = tuple(sorted(case.env.items()))
        engine = self._engines.get(key)
        if engine is None:
            # The case's env is what this engine sees as its environment (settings, budget,
            # importers): the process's own os.environ is never touched.
            engine = Engine(self.engine.pm, home=self.engine.home, env={**self.engine.env, **case.env})
            engine.options.update(self.engine.options)
            if len(self._engines) < MAX_ENGINES:
                self._engines[key] = engine
        return engine


def _host_problems(engine: Engine, case: RuleCase) -> tuple[str, ...]:
    hosts = engine.hooks.hosts()
    if case.host is None or case.host in hosts:
        return ()
    return (f"host: no host {case.host!r}{_did_you_mean(case.host, hosts)}; known hosts: {', '.join(hosts)}",)


# -- evaluation cases -----------------------------------------------------------------------


def _run_evaluation(engine: Engine, case: RuleCase, facts: Facts) -> CaseResult:
    evaluation = engine.evaluate(facts)
    expect = case.expect
    status = {o.rule.id: o.status for o in evaluation.outcomes}
    for outcome in evaluation.active:
        status[outcome.rule.id] = "active"
    for outcome in evaluation.on_demand:
        status[outcome.rule.id] = "on-demand"
    problems: list[str] = []
    involved: list[str] = []
    checks = (("active", expect.active, "active", True), ("not_active", expect.not_active, "active", False),
              ("on_demand", expect.on_demand, "on-demand", True), ("dropped", expect.dropped, "dropped", True))
    for key, ids, wanted, should in checks:
        for rule_id in ids:
            if rule_id not in status:
                problems.append(f"{key}: no rule {rule_id!r}{_did_you_mean(rule_id, status)}")
            elif (status[rule_id] == wanted) != should:
                problems.append(f"{key}: expected {rule_id} to be {'' if should else 'not '}{wanted}, "
                                f"but it is {status[rule_id]}")
                involved.append(rule_id)
    if expect.errors is not None:
        problems += _error_problems(expect.errors, evaluation.errors, facts.cwd)
    for text in expect.section_contains:
        if text not in evaluation.section:
            problems.append(f"section_contains: the section does not contain {text!r}")
            involved += [o.rule.id for o in evaluation.active if o.rule.id not in involved]
    if expect.tokens_at_most is not None and evaluation.section_tokens > expect.tokens_at_most:
        problems.append(f"tokens_at_most: the section is ~{evaluation.section_tokens} tokens, "
                        f"more than {expect.tokens_at_most}")
        involved += [o.rule.id for o in evaluation.active if o.rule.id not in involved]
    if not problems:
        return CaseResult(case, ())
    return CaseResult(case, tuple(problems), _why(engine, facts, evaluation, dict.fromkeys(involved)))


def _error_problems(expected: Sequence[ErrorExpectation], errors: Sequence[RuleError], cwd: str) -> list[str]:
    """Every expected error must occur, and every error must be expected: ``errors: []``
    says the rules load cleanly."""
    found = [(e, _relative(e.path, cwd)) for e in errors]
    problems = []
    for want in expected:
        if not any(_is(want, error, where) for error, where in found):
            at = f" at {want.path}" if want.path else ""
            problems.append(f"errors: expected an error {want.kind}{at}, found none")
    for error, where in found:
        if not any(_is(want, error, where) for want in expected):
            problems.append(f"errors: unexpected {error.kind} at {where}: {error.message}")
    return problems


def _is(want: ErrorExpectation, error: RuleError, where: str) -> bool:
    return want.kind == error.kind and (want.path is None or want.path == where)


def _relative(path: str, cwd: str) -> str:
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative.replace(os.sep, "/")


def _why(engine: Engine, facts: Facts, evaluation: Evaluation, involved: Mapping[str, None]) -> tuple[str, ...]:
    """The outcome of each rule involved, then ``explain``'s entries for them per touched path."""
    lines = []
    for outcome in evaluation.outcomes:
        if outcome.rule.id in involved:
            said = outcome.cause or "; ".join(outcome.reasons) or ("always applies" if outcome.rule.unconditional else "")
            lines.append(f"{outcome.rule.id}: {outcome.status}{' — ' + said if said else ''}")
    for path in facts.touched:
        explanation = engine.explain(facts, path)
        entries = tuple(e for e in explanation.entries if e.rule.id in involved)
        if entries:
            lines += _render_explain(engine, dataclasses.replace(explanation, entries=entries, errors=()), facts.cwd)
    return tuple(lines)


def _render_explain(engine: Engine, explanation: Explanation, cwd: str) -> list[str]:
    text = engine.hooks.render("explain", {"explanation": explanation, "cwd": cwd})
    return text.rstrip("\n").split("\n") if text else []


# -- stream cases ----------------------------------------------------------------------------


def _run_stream(engine: Engine, case: RuleCase, facts: Facts) -> CaseResult:
    discovery = engine.discover(facts.cwd, facts.trusted, facts.host)
    specs = engine.stream_specs(facts, discovery)
    watcher = StreamWatcher(specs, gate=globs_gate(facts.cwd), touched=facts.touched)
    tool = case.tools[0] if case.tools else None
    path = normalize_touched((case.path,), facts.cwd)[0] if case.path else None
    result = watcher.check("tool" if tool else "text", case.text, tool=tool, path=path)
    fired = {f.rule.id: f for f in result.fired}
    ids = [r.id for r in discovery.rules]
    problems: list[str] = []
    for key, expected, should in (("fires", case.expect.fires, True), ("does_not_fire", case.expect.does_not_fire, False)):
        for rule_id in expected:
            if rule_id not in ids:
                problems.append(f"{key}: no rule {rule_id!r}{_did_you_mean(rule_id, ids)}")
            elif (rule_id in fired) != should:
                problems.append(f"{key}: expected {rule_id} {'to fire' if should else 'not to fire'}, "
                                f"but it {'did not' if should else 'fired'}")
    problems += [f"stream: {fault}" for fault in watcher.faults]
    if not problems:
        return CaseResult(case, ())
    return CaseResult(case, tuple(problems), _stream_why(engine, discovery, specs, fired, case))


def _stream_why(engine: Engine, discovery: Discovery, specs: Sequence[StreamSpec], fired: Mapping[str, Firing],
                case: RuleCase) -> tuple[str, ...]:
    armed = {spec.rule.id: spec for spec in specs}
    lines = []
    for rule in discovery.rules:
        if rule.id not in (*case.expect.fires, *case.expect.does_not_fire):
            continue
        if rule.id in fired:
            firing = fired[rule.id]
            lines.append(f"{rule.id}: fired on {firing.source} — {firing.reason}")
        elif engine.hooks.stream_spec(rule) is None:
            lines.append(f"{rule.id}: not a stream rule (it has no condition or astCondition)")
        elif rule.id not in armed:
            lines.append(f"{rule.id}: not armed for these facts (muted, scoped out, or its model/branch/tools "
                         "condition does not hold)")
        else:
            scope = ", ".join(str(entry) for entry in armed[rule.id].scope)
            lines.append(f"{rule.id}: armed (scope {scope}); it did not fire on {_surface(case)}")
    return tuple(lines)


def _surface(case: RuleCase) -> str:
    if not case.tools:
        return "this text"
    return f"this {case.tools[0]} call" + (f" on {case.path}" if case.path else " (no path)")


def _did_you_mean(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" — did you mean {close[0]!r}?" if close else ""
