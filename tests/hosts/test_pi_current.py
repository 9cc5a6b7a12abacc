"""Pi's exact host profile, measured on the real Pi 1.6.0 and 0.73.1: what Pi itself put in
the prompt (its context files and skills, which the extension passes to `serve`) is never
sent again by pi-rules, and what Pi shows only as a literal `@import` line is delivered once.
Canaries are counted in the requests the faux provider recorded (tests/hosts/pi_driver.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_driver import VERSIONS, Event, Launcher, World, install, tool, tool_result, trust_project

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are needed to install and run Pi (the Pi extension tests run in .ci/run)",
)

ROOT = "CANARY-ROOT-1101"
NESTED = "CANARY-NESTED-1202"
STYLE = "CANARY-STYLE-1303"
SKILL_DESC, SKILL_BODY = "CANARY-SKILL-DESC-1404", "CANARY-SKILL-BODY-1405"
READ_BY_PI = "reason: Pi reads this file itself"


@pytest.fixture(scope="module")
def pi_installed() -> None:
    install()


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest, pi_installed: None) -> str:
    return str(request.param)


@pytest.fixture
def world(tmp_path: Path, version: str) -> World:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".pi" / "agent").mkdir(parents=True)
    for folder in ("sub", "pkg", "tools", ".pi/skills/release"):
        (project / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    (project / "AGENTS.md").write_text(f"# Guide\n\n{ROOT}: run make test.\n")
    (project / "sub" / "AGENTS.md").write_text(f"# Sub\n\n{NESTED}: keep sub small.\n")
    (project / "sub" / "notes.txt").write_text("sub notes\n")
    os.symlink("../AGENTS.md", project / "pkg" / "CLAUDE.md")  # Pi loads it as a file of its own
    (project / "pkg" / "x.txt").write_text("pkg x\n")
    (project / "tools" / "CLAUDE.md").write_text("@style.md\n")  # Pi shows the line, not the file
    (project / "tools" / "style.md").write_text(f"# Style\n\n{STYLE}: tabs, never spaces.\n")
    (project / ".pi" / "skills" / "release" / "SKILL.md").write_text(
        f"---\nname: release\ndescription: Cut a release. {SKILL_DESC}\n---\n{SKILL_BODY}: tag, then publish.\n")
    made = World(home, project, tmp_path / "faux-requests.jsonl")
    trust_project(made, version)
    return made


@pytest.fixture
def run_pi(version: str, world: World, tmp_path: Path) -> Iterator[Launcher]:
    launcher = Launcher(version, world, tmp_path)
    yield launcher
    launcher.stop()


def _count(request: Event, canary: str) -> int:
    """Occurrences in what the model reads: the system prompt once (Pi 1.6 also keeps it as
    the transcript's system message, counted through systemPrompt), then every other message."""
    rest = [m for m in request["messages"] if m.get("role") != "system"]
    return request["systemPrompt"].count(canary) + json.dumps(rest).count(canary)


def _section(request: Event) -> str:
    system = request["systemPrompt"]
    return system[system.index("# Rules\n"):] if "# Rules\n" in system else ""


def test_root_agents_md_never_twice_nested_one_on_a_read_below_cwd_skills_left_to_pi(
    world: World, run_pi: Launcher
) -> None:
    pi = run_pi([[tool("read", path="sub/notes.txt")], [tool("read", path="pkg/x.txt")], [{"text": "Done."}]])
    pi.prompt("read the notes")
    report = pi.rules()

    requests = world.requests()
    assert len(requests) == 3
    for request in requests:
        assert _count(request, ROOT) == 1  # Pi's own copy; pkg/CLAUDE.md (a link to it) adds nothing
        assert ROOT in request["systemPrompt"] and ROOT not in _section(request)
        assert _count(request, SKILL_DESC) == 1 and _count(request, SKILL_BODY) == 0  # Pi's catalogue only
    # The nested AGENTS.md: not before the read below cwd, then once, with that read's result.
    assert _count(requests[0], NESTED) == 0
    assert NESTED in tool_result(requests[1], "call-0")
    assert _count(requests[1], NESTED) == 1 and _count(requests[2], NESTED) == 1
    assert NESTED not in tool_result(requests[2], "call-100")
    # pi-rules found the root file and left it to Pi (the positive control of "never twice").
    line = next(chunk for chunk in report.split("\ninactive: ")[1:] if chunk.startswith("project/AGENTS "))
    assert READ_BY_PI in line


def test_a_linked_claude_md_pi_loads_itself_is_not_sent_a_third_time(world: World, run_pi: Launcher) -> None:
    pi = run_pi([[{"text": "Hi."}]], cwd=world.project / "pkg")
    pi.prompt("hello")
    report = pi.rules()

    request = world.requests()[0]
    assert request["systemPrompt"].count(ROOT) == 2  # Pi itself: AGENTS.md and the link to it
    assert _count(request, ROOT) == 2 and ROOT not in _section(request)
    # The link is the same file under a second name: one rule (CONTRACT §7), Pi's own.
    line = next(chunk for chunk in report.split("\ninactive: ")[1:] if chunk.startswith("project/AGENTS "))
    assert READ_BY_PI in line and "(also CLAUDE.md)" in line  # shown from cwd, pkg/


def test_an_import_pi_shows_as_a_literal_line_is_delivered_once(world: World, run_pi: Launcher) -> None:
    pi = run_pi([[tool("read", path="style.md")], [{"text": "Done."}]], cwd=world.project / "tools")
    pi.prompt("hello")

    first, second = world.requests()
    assert "@style.md" in first["systemPrompt"]  # what Pi shows of tools/CLAUDE.md
    assert STYLE in _section(first) and _count(first, STYLE) == 1  # pi-rules delivers the import
    assert _count(first, ROOT) == 1
    # Reading the imported file itself shows it (the tool's output), and nothing is re-sent.
    assert _count(second, STYLE) == 2 and STYLE in tool_result(second, "call-0")
    assert "Rules newly activated" not in tool_result(second, "call-0")


def test_the_profile_is_what_pi_reports_not_a_guess(world: World, run_pi: Launcher) -> None:
    """With context files off (`--no-context-files`) Pi loads no AGENTS.md: the list the
    extension passes is empty, so pi-rules sends the root file itself, once. A profile
    rebuilt from the disk would have left it out, and the model would have had it nowhere."""
    pi = run_pi([[{"text": "Hi."}]], args=("--no-context-files",))
    pi.prompt("hello")
    report = pi.rules()

    request = world.requests()[0]
    assert ROOT in _section(request) and _count(request, ROOT) == 1
    assert "\nactive: project/AGENTS " in report


def test_installed_with_pi_install_as_pi_docs_say(world: World, run_pi: Launcher) -> None:
    run_pi.install_extension()
    settings_file = world.home / ".pi" / "agent" / "settings.json"
    assert len(json.loads(settings_file.read_text())["packages"]) == 1
    pi = run_pi([[{"text": "Hi."}]], cwd=world.project / "tools")
    pi.prompt("hello")
    assert _count(world.requests()[0], STYLE) == 1 and "\nactive: project/tools/CLAUDE " in pi.rules()
