"""The delivery audit on real layouts (issue 24, part 1; tests/delivery_audit.py).

Every rule ``report --host H`` admits reaches the model exactly once over a session, as its
whole text; every on-demand or overflowed rule as exactly one index line; nothing the host
reads by itself is sent again; no text twice. The layouts are rule files of real
repositories (tests/fixtures/delivery/*/SOURCE), replayed as a scripted session through
the Claude Code hook, ``serve`` as Pi, and ``render`` (no host). Each session is replayed
once; the tests below read its findings by kind.

A case that fails today because of a part of issue 24 still being fixed is a strict xfail
naming that part: it turns red (XPASS) the day the fix lands, and the mark goes.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import pytest

from delivery_audit import HOSTS, Finding, Project, Step, audit, check_step, layouts, make_project, report, summary

_RUNS: dict[tuple[str, str], list[Finding]] = {}
Findings = Callable[[str, str, str], list[Finding]]


@pytest.fixture
def findings(tmp_path_factory: pytest.TempPathFactory) -> Findings:
    """The findings of one kind for a layout and host; each session is replayed once."""

    def run(layout: str, host: str, kind: str) -> list[Finding]:
        if (layout, host) not in _RUNS:
            _RUNS[layout, host] = audit(make_project(layout, tmp_path_factory.mktemp(layout)), host)
        return [f for f in _RUNS[layout, host] if f.kind == kind]
    return run


def _cases(pending: dict[tuple[str, str], str]) -> list[object]:
    """Every layout and host; the pending ones as strict xfails with their reason."""
    return [pytest.param(layout, host, id=f"{layout}-{host}",
                         marks=[pytest.mark.xfail(strict=True, reason=pending[layout, host])]
                         if (layout, host) in pending else [])
            for layout in layouts() for host in HOSTS]


# -- what still fails, and why --------------------------------------------------------------

# Nothing: every case of issue 24 passes. A case that regresses may be parked here with its
# reason as a strict xfail, never skipped. (Targeted rules of other tools' formats that the
# section's budget drops are named in the index by their importers: ``Rule.overflow``.)
AGREEMENT_PENDING: dict[tuple[str, str], str] = {}
SILENT_DROP_PENDING: dict[tuple[str, str], str] = {}
DANGLING_PENDING: dict[tuple[str, str], str] = {}
PACKAGE_MEMORY_PENDING: dict[tuple[str, str], str] = {}


def test_at_least_eight_real_layouts() -> None:
    assert len(layouts()) >= 8, layouts()


@pytest.mark.parametrize(("layout", "host"), _cases(AGREEMENT_PENDING))
def test_delivery_matches_report(findings: Findings, layout: str, host: str) -> None:
    """Admitted: the whole text once; on-demand or overflowed: one index line; host-read:
    not sent; nothing twice."""
    found = findings(layout, host, "agreement")
    assert not found, summary(found)


@pytest.mark.parametrize(("layout", "host"), _cases(SILENT_DROP_PENDING))
def test_nothing_is_dropped_silently(findings: Findings, layout: str, host: str) -> None:
    """A rule the budget leaves out is named to the model (issue 24, part 3)."""
    found = findings(layout, host, "silent-drop")
    assert not found, summary(found)


@pytest.mark.parametrize(("layout", "host"), _cases(DANGLING_PENDING))
def test_pointers_name_only_delivered_rules(findings: Findings, layout: str, host: str) -> None:
    """"X reaches you as a rule of its own" only when X is in the same delivery (part 5)."""
    found = findings(layout, host, "dangling-pointer")
    assert not found, summary(found)


@pytest.mark.parametrize(("layout", "host"), _cases(PACKAGE_MEMORY_PENDING))
def test_a_touched_package_brings_its_memory_file(findings: Findings, layout: str, host: str) -> None:
    """Touching a file in a package delivers that package's AGENTS.md / CLAUDE.md /
    GEMINI.md whole, with default settings (issue 24, "Done when")."""
    found = findings(layout, host, "package-memory")
    assert not found, summary(found)


# -- positive controls: the audit sees each fault it checks for ------------------------------

_CONTROL_TOUCHED = "apps/webapp/app/root.tsx"


@pytest.fixture(scope="module")
def control(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any], str]:
    """trigger.dev with a webapp file touched, as ``render`` (no host) delivers it."""
    project = make_project("trigger.dev", tmp_path_factory.mktemp("control"))
    facts = report(project, "none", [_CONTROL_TOUCHED], "")
    rendered = project.cli("render", "--touched", _CONTROL_TOUCHED).stdout
    return project, facts, rendered


def _problems(control: tuple[Project, dict[str, Any], str], delivered: str, host_facts: dict[str, Any] | None = None,
              kind: str = "agreement") -> list[str]:
    project, facts, _ = control
    found = check_step(project, "none", 1, Step("read", _CONTROL_TOUCHED), host_facts or facts, delivered)
    return [f"{f.rule}: {f.problem}" for f in found if f.kind == kind]


def _rule(facts: dict[str, Any], rule_id: str) -> dict[str, Any]:
    return next(r for r in facts["rules"] if r["id"] == rule_id)


def test_control_the_rendered_section_agrees(control: tuple[Project, dict[str, Any], str]) -> None:
    assert _problems(control, control[2]) == []


def test_control_a_text_sent_twice_is_seen(control: tuple[Project, dict[str, Any], str]) -> None:
    problems = _problems(control, control[2] + "\n" + control[2])
    assert any(p.startswith("webapp:") and "2 times" in p for p in problems), problems


def test_control_a_missing_or_pointed_text_is_seen(control: tuple[Project, dict[str, Any], str]) -> None:
    project, facts, rendered = control
    body = project.bodies[_rule(facts, "webapp")["path"]]
    without = rendered.replace(body.strip(), "")
    assert any(p.startswith("webapp:") and "not at all" in p for p in _problems(control, without))
    pointer = f"- {_rule(facts, 'webapp')['relativePath']} — webapp (read it with the Read tool)"
    assert any(p.startswith("webapp:") and "as a pointer only" in p
               for p in _problems(control, without + "\n" + pointer + "\n"))


def test_control_a_missing_index_line_is_seen(control: tuple[Project, dict[str, Any], str]) -> None:
    without = "\n".join(line for line in control[2].splitlines() if not line.startswith("- migrations.mdc — "))
    assert any(p.startswith("migrations:") and "0 index lines" in p for p in _problems(control, without))


def test_control_a_host_read_file_sent_again_is_seen(control: tuple[Project, dict[str, Any], str]) -> None:
    """Under claude-code the report leaves apps/webapp/CLAUDE.md to the host: sending its
    text as well is a text twice."""
    project, _, rendered = control
    claude_facts = report(project, "claude-code", [_CONTROL_TOUCHED], "")
    body = project.bodies[_rule(claude_facts, "trigger.dev/apps/webapp/CLAUDE")["path"]]
    problems = _problems(control, rendered + "\n" + body, claude_facts)
    assert any(re.match(r"trigger.dev/apps/webapp/CLAUDE: its text reached the model [2-9] times", p)
               for p in problems), problems


def test_control_a_dangling_pointer_is_seen(control: tuple[Project, dict[str, Any], str]) -> None:
    """The root CLAUDE.md says AGENTS.md reaches the model as a rule of its own; take the
    AGENTS.md text away and the audit says so."""
    project, facts, rendered = control
    body = project.bodies[_rule(facts, "trigger.dev/AGENTS")["path"]]
    problems = _problems(control, rendered.replace(body.strip(), ""), kind="dangling-pointer")
    assert any(p.startswith("trigger.dev/CLAUDE:") for p in problems), problems
