"""The Pi extension (hosts/pi) as a user runs it: type-checked in strict mode against the
pinned Pi 1.6, and driven by the real `pi` from the npm registry — 1.6.0 and 0.73.1 — in RPC
mode with Pi's scripted `faux` provider (tests/hosts/pi_faux_provider.ts), a real `pi-rules
serve`, a real git project and a throw-away HOME. Assertions read what reached the model (the
faux provider's received requests), Pi's own session file, the disk, and the extension's
notifications. The harness is tests/hosts/pi_driver.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
import pytest

from pi_driver import (EXTENSION, NOTICE, PI_NOTICE, VERSIONS, Event, Launcher, World, install,
                        installed_version, rule as _rule, trust_project, texts as _texts, tool as _tool,
                        tool_result as _tool_result)

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are needed to install and run Pi (the Pi extension tests run in .ci/run)",
)


@pytest.fixture(scope="module")
def pi_installed() -> None:
    """Node 22, Pi 1.6.0 + TypeScript, and Pi 0.73.1, as the lock files pin them (once)."""
    install()


def test_extension_type_checks_in_strict_mode_against_the_pinned_pi(pi_installed: None) -> None:
    config = json.loads((EXTENSION / "tsconfig.json").read_text())
    package = json.loads((EXTENSION / "package.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    assert package["devDependencies"]["@earendil-works/pi-coding-agent"] == "1.6.0"
    assert package["peerDependencies"] == {"@earendil-works/pi-coding-agent": "*"}  # Pi supplies it
    assert [installed_version(v) for v in VERSIONS] == list(VERSIONS)
    done = subprocess.run([str(EXTENSION / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", str(EXTENSION)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- a Pi session over RPC -------------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> World:
    home, project = tmp_path / "home", tmp_path / "project"
    rules = project / ".pi" / "rules"
    rules.mkdir(parents=True)
    (home / ".pi" / "agent" / "rules").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    (rules / "always.md").write_text(_rule("Always on", "MARKER-ALWAYS-7731: be kind.", alwaysApply="true"))
    (rules / "src-rule.md").write_text(_rule("Python sources", "MARKER-SRC-4410: use type hints.", globs='["src/**"]'))
    (rules / "lib-rule.md").write_text(_rule("Library code", "MARKER-LIB-5120: no globals.", globs='["lib/**"]'))
    (rules / "no-console.md").write_text(_rule(
        "No console.log in JavaScript", "MARKER-STREAM-9902: use the logger instead of console.log.",
        condition='"console\\\\.log\\\\("', scope='"tool:write(*.js)"', interruptMode="tool-only"))
    (home / ".pi" / "agent" / "rules" / "mine.md").write_text(
        _rule("Mine", "MARKER-GLOBAL-3381: answer briefly.", alwaysApply="true"))
    # A project skill: a resource Pi 1.6 guards, so it asks its trust question (.pi/rules alone
    # is not one: Pi 1.6 calls such a folder trusted without asking).
    skill = project / ".pi" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release. SKILL-DESC-6610\n---\n"
                                    "SKILL-BODY-6611: tag, then publish.\n")
    (project / "notes.txt").write_text("hello notes\n")
    return World(home, project, tmp_path / "faux-requests.jsonl")


@pytest.fixture(params=VERSIONS)
def version(request: pytest.FixtureRequest, pi_installed: None) -> str:
    return str(request.param)


@pytest.fixture
def run_pi(version: str, world: World, tmp_path: Path) -> Iterator[Launcher]:
    launcher = Launcher(version, world, tmp_path)
    yield launcher
    launcher.stop()


def _touched(entries: list[Event]) -> list[str]:
    return [p for e in entries if e.get("customType") == "pi-rules-md/touched" for p in e["data"]["paths"]]


def _interrupted(event: Event) -> bool:
    return any(m.get("customType") == "pi-rules-md/interrupt" for m in event["messages"])


# ---- a trusted project -------------------------------------------------------------------


def test_trusted_project_rules_reach_the_model_and_a_stream_rule_stops_a_forbidden_write(
    world: World, run_pi: Launcher, version: str
) -> None:
    trust_project(world, version)
    pi = run_pi([
        [_tool("write", path="src/app.py", content="x: int = 1\n")],  # request 0
        [_tool("read", path="notes.txt")],  # 1: sees the write's result
        [{"text": "Done."}],  # 2: sees the read's result
        [_tool("write", path="lib/bad.js", content="console.log(1)\n")],  # 3: refused
        [{"text": "(the run Pi aborts may still ask once)"}],
        [{"text": "Using the logger."}],
    ])
    pi.prompt("write the app and read the notes")
    pi.prompt("now the library", done=_interrupted)
    report = pi.rules()

    requests = world.requests()
    first = requests[0]["systemPrompt"]
    assert "# Rules\n" in first and "MARKER-ALWAYS-7731" in first and "MARKER-GLOBAL-3381" in first
    assert "MARKER-SRC-4410" not in first  # nothing touched yet: the path rule is not in the section
    # The written file's rule came with the write's own tool result, and the read's did not repeat it.
    write_result = _tool_result(requests[1], "call-0")
    assert "Rules newly activated by this tool result" in write_result and "MARKER-SRC-4410" in write_result
    assert "MARKER-SRC-4410" not in _tool_result(requests[2], "call-100")
    # The stream rule: the write was refused, the file is not on disk, the model got the rule.
    assert not (world.project / "lib" / "bad.js").exists()
    refused = _tool_result(requests[-1], "call-300")
    # Pi 1.6 ends the aborted run's pending call itself ("Operation aborted") before the
    # tool_call gate answers; 0.73.1 asks the gate first. Either way it never ran.
    assert "Blocked by pi-rules" in refused or (version == "1.6.0" and refused == "Operation aborted")
    assert any("# Rule interrupt" in _texts(m["content"]) and "MARKER-STREAM-9902" in _texts(m["content"])
               for m in requests[-1]["messages"] if m["role"] == "user")
    entries = world.session_entries()
    assert any(e.get("customType") == "pi-rules-md/interrupt" for e in entries)
    # Only calls that ran are touched: the refused write to lib/bad.js is not (issue 18 part 4).
    assert _touched(entries) == ["src/app.py", "notes.txt"]
    assert report.startswith("rules: ")
    assert "\nactive: src-rule — .pi/rules/src-rule.md (project) — touched src/app.py\n" in report
    assert "lib/bad.js" not in report and "\ninactive: lib-rule " in report
    assert pi.notices() == []  # trusted: nothing to tell


# ---- an untrusted project, then trusted --------------------------------------------------


def test_untrusted_project_reads_no_project_rule_and_says_how_to_trust_it_once(
    world: World, run_pi: Launcher, version: str
) -> None:
    pi = run_pi([[_tool("write", path="src/app.py", content="x = 1\n")], [{"text": "Done."}]])
    pi.prompt("write the app")
    report = pi.rules()

    requests = world.requests()
    seen_by_model = json.dumps(requests)
    for marker in ("MARKER-ALWAYS-7731", "MARKER-SRC-4410", "MARKER-LIB-5120", "MARKER-STREAM-9902"):
        assert marker not in seen_by_model
    assert "MARKER-GLOBAL-3381" in requests[0]["systemPrompt"]  # the user's own rules still apply
    assert (world.project / "src" / "app.py").read_text() == "x = 1\n"
    notices = pi.notices()
    if version == "1.6.0":  # Pi decided (RPC mode, no saved decision: untrusted); the fix is Pi's
        assert notices == [PI_NOTICE]
    else:
        assert len(notices) == 1 and notices[0].startswith(NOTICE)
        assert str(world.project.resolve()) in notices[0]
    assert report.rstrip("\n").endswith(notices[0])  # /rules says the same
    assert "\nactive: mine " in report and "src-rule" not in report


@pytest.mark.parametrize("version", ["0.73.1"], indirect=True)
def test_on_pi_0_73_after_pi_rules_trust_the_next_session_reads_the_project_rules(
    world: World, run_pi: Launcher, version: str
) -> None:
    untrusted = run_pi([[{"text": "Hi."}]])
    untrusted.prompt("hello")
    assert len(untrusted.notices()) == 1
    assert "MARKER-ALWAYS-7731" not in world.requests()[0]["systemPrompt"]

    world.trust()
    world.log.unlink()
    trusted = run_pi([[{"text": "Hi again."}]])
    trusted.prompt("hello")
    assert trusted.notices() == []
    assert "MARKER-ALWAYS-7731" in world.requests()[0]["systemPrompt"]
    assert "\nactive: always " in trusted.rules()


# ---- issue 27: bash commands touch paths; skills Pi reads itself are not sent twice -------


@pytest.mark.parametrize("version", ["0.73.1"], indirect=True)
def test_a_bash_heredoc_attaches_the_rule_and_skills_pi_reads_are_left_to_pi(
    world: World, run_pi: Launcher, version: str
) -> None:
    world.trust()
    shared = world.project / ".agents" / "skills" / "shared-skill"
    claude = world.project / ".claude" / "skills" / "claude-skill"
    for folder, marker in ((shared, "MARKER-SHARED-6120"), (claude, "MARKER-CLAUDE-6121")):
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: {marker} when needed\n---\nBody.\n")
    pi = run_pi([
        [_tool("bash", command="mkdir -p src && cat > src/app.py <<'EOF'\nx: int = 1\nEOF")],  # request 0
        [{"text": "Done."}],  # 1: sees the bash result
    ])
    pi.prompt("write the app with the shell")

    requests = world.requests()
    bash_result = _tool_result(requests[1], "call-0")
    assert (world.project / "src" / "app.py").read_text() == "x: int = 1\n"  # Pi really ran it
    assert "Rules newly activated by this tool result" in bash_result and "MARKER-SRC-4410" in bash_result
    assert _touched(world.session_entries()) == ["src/app.py"]
    section = requests[0]["systemPrompt"].split("# Rules\n", 1)[1]
    # pi-rules lists the .claude skill (Pi does not read that folder) ...
    assert "- claude-skill — MARKER-CLAUDE-6121 when needed (fetch with the read_rule tool)" in section
    # ... and leaves .agents/skills to Pi, whose own skills list carries it.
    assert "shared-skill — MARKER-SHARED-6120" not in section
    assert "MARKER-SHARED-6120" in requests[0]["systemPrompt"]


@pytest.mark.parametrize("version", ["1.6.0"], indirect=True)
def test_on_pi_1_6_pi_decides_and_the_trust_store_is_not_asked(
    world: World, run_pi: Launcher, version: str
) -> None:
    world.trust()  # pi-rules' own store says yes: Pi 1.6 has its own answer, which wins
    denied = run_pi([[{"text": "Hi."}]])
    denied.prompt("hello")
    assert denied.notices() == [PI_NOTICE]
    assert "MARKER-ALWAYS-7731" not in json.dumps(world.requests())

    # The positive control: Pi's own yes (a project_trust answer) — no `pi-rules trust` needed.
    shutil.rmtree(world.home / ".config")  # the store is gone; Pi alone decides
    world.log.unlink()
    world.pi_trust = "yes"
    trusted = run_pi([[{"text": "Hi again."}]])
    trusted.prompt("hello")
    assert trusted.notices() == []
    system = world.requests()[0]["systemPrompt"]
    assert system.count("MARKER-ALWAYS-7731") == 1 and "\nactive: always " in trusted.rules()
    # Pi's answer "no" wins the same way.
    world.log.unlink()
    world.pi_trust = "no"
    refused = run_pi([[{"text": "Hi, no."}]])
    refused.prompt("hello")
    assert refused.notices() == [PI_NOTICE]
    assert "MARKER-ALWAYS-7731" not in json.dumps(world.requests())
