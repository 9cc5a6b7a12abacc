"""The Pi extension (hosts/pi) as a user runs it: type-checked in strict mode against the
pinned Pi, and driven by the real `pi` from the npm registry (RPC mode) with Pi's scripted
`faux` provider (tests/hosts/pi_faux_provider.ts), a real `pi-rules serve`, a real git
project and a throw-away HOME. Assertions read what reached the model (the faux provider's
received requests), Pi's own session file, the disk, and the extension's notifications."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "hosts" / "pi"
FAUX = Path(__file__).with_name("pi_faux_provider.ts")
PI_TIMEOUT = 120  # seconds: a bound on a hung run, never an assertion about speed
NOTICE = "pi-rules: this project has rules but is not trusted; run: pi-rules trust "

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are needed to install and run Pi (the Pi extension tests run in .ci/run)",
)

Event = dict[str, Any]


@pytest.fixture(scope="module")
def pi_bin() -> Path:
    """Pi and TypeScript at the versions hosts/pi/package-lock.json pins (installed once)."""
    subprocess.run(["bash", str(REPO / ".ci" / "install-pi")], check=True, timeout=900)
    return EXTENSION / "node_modules" / ".bin"


def test_extension_type_checks_in_strict_mode_against_the_pinned_pi(pi_bin: Path) -> None:
    config = json.loads((EXTENSION / "tsconfig.json").read_text())
    package = json.loads((EXTENSION / "package.json").read_text())
    assert config["compilerOptions"]["strict"] is True
    assert package["devDependencies"]["@mariozechner/pi-coding-agent"] == "0.73.1"
    installed = json.loads((EXTENSION / "node_modules/@mariozechner/pi-coding-agent/package.json").read_text())
    assert installed["version"] == "0.73.1"
    done = subprocess.run([str(pi_bin / "tsc"), "--noEmit", "-p", str(EXTENSION)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- a Pi session over RPC -------------------------------------------------------------


@dataclass
class World:
    """A throw-away HOME with a git project in it."""

    home: Path
    project: Path
    log: Path  # the faux provider's received requests, one JSON object a line

    def env(self, script: Path) -> dict[str, str]:
        venv_bin = str(Path(sys.executable).parent)  # where this pi-rules is installed
        return {
            "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "PI_CODING_AGENT_DIR": str(self.home / ".pi" / "agent"),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_FAUX_SCRIPT": str(script),
            "PI_FAUX_LOG": str(self.log),
            "LANG": "C.UTF-8",
        }

    def requests(self) -> list[Event]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def session_entries(self) -> list[Event]:
        files = sorted((self.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
        assert len(files) == 1, files
        return [json.loads(line) for line in files[0].read_text().splitlines()]

    def trust(self) -> None:
        subprocess.run([sys.executable, "-m", "rules_hosts", "trust", str(self.project)], check=True,
                       env={**self.env(self.log), "PATH": os.environ.get("PATH", "")}, capture_output=True,
                       timeout=60)


def _rule(description: str, body: str, **keys: str) -> str:
    lines = ["---", f"description: {description}", "version: 1", *(f"{k}: {v}" for k, v in keys.items()), "---"]
    return "\n".join(lines) + "\n" + body + "\n"


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
    (project / "notes.txt").write_text("hello notes\n")
    return World(home, project, tmp_path / "faux-requests.jsonl")


@dataclass
class Pi:
    """`pi --mode rpc` with the extension and the faux provider; events read on a thread."""

    process: subprocess.Popen[bytes]
    events: queue.Queue[Event | None] = field(default_factory=queue.Queue)
    seen: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:  # RPC framing is LF only; bytes never split on U+2028
            try:
                self.events.put(json.loads(raw))
            except ValueError:
                continue
        self.events.put(None)

    def wait_for(self, done: Callable[[Event], bool]) -> Event:
        while True:
            try:
                event = self.events.get(timeout=PI_TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"pi went silent; last events: {self.seen[-5:]}") from None
            if event is None:
                raise AssertionError(f"pi exited ({self.process.wait()}); last events: {self.seen[-5:]}")
            self.seen.append(event)
            if done(event):
                return event

    def send(self, command: Event) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command).encode() + b"\n")
        self.process.stdin.flush()

    def prompt(self, text: str, done: Callable[[Event], bool] | None = None) -> None:
        """Send a prompt; wait for the agent run that `done` accepts (default: the first)."""
        self.send({"id": text, "type": "prompt", "message": text})
        self.wait_for(lambda e: e.get("type") == "response" and e.get("id") == text)
        self.wait_for(lambda e: e.get("type") == "agent_end" and (done is None or done(e)))

    def rules(self, args: str = "") -> str:
        """The `/rules` report: the notification the command's handler shows."""
        text = f"/rules {args}".strip()
        before = len(self.seen)
        self.send({"id": text, "type": "prompt", "message": text})
        self.wait_for(lambda e: e.get("type") == "response" and e.get("id") == text)
        shown = [e["message"] for e in self.seen[before:] if e.get("method") == "notify" and e.get("notifyType") == "info"]
        assert len(shown) == 1, self.seen[before:]
        return str(shown[0])

    def notices(self) -> list[str]:
        return [e["message"] for e in self.seen if e.get("method") == "notify" and e.get("notifyType") == "warning"]


@pytest.fixture
def run_pi(pi_bin: Path, world: World, tmp_path: Path) -> Iterator[Callable[[list[list[Event]]], Pi]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(script: list[list[Event]]) -> Pi:
        path = tmp_path / f"script-{len(started)}.json"
        path.write_text(json.dumps(script))
        command = [str(pi_bin / "pi"), "--mode", "rpc", "--provider", "faux", "--model", "faux-1",
                   "-e", str(FAUX), "-e", str(EXTENSION / "index.ts")]
        process = subprocess.Popen(command, cwd=world.project, env=world.env(path), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=(tmp_path / f"pi-{len(started)}.err").open("wb"))
        started.append(process)
        return Pi(process)

    yield start
    for process in started:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()  # EOF: pi shuts down, and its extension stops pi-rules serve
        try:
            process.wait(timeout=PI_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tool(name: str, **args: str) -> Event:
    return {"tool": name, "args": args}


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _tool_result(request: Event, tool_call_id: str) -> str:
    results = [m for m in request["messages"] if m["role"] == "toolResult" and m["toolCallId"] == tool_call_id]
    assert len(results) == 1, request["messages"]
    return _texts(results[0]["content"])


def _touched(entries: list[Event]) -> list[str]:
    return [p for e in entries if e.get("customType") == "pi-rules-md/touched" for p in e["data"]["paths"]]


def _interrupted(event: Event) -> bool:
    return any(m.get("customType") == "pi-rules-md/interrupt" for m in event["messages"])


# ---- a trusted project -------------------------------------------------------------------


def test_trusted_project_rules_reach_the_model_and_a_stream_rule_stops_a_forbidden_write(
    world: World, run_pi: Callable[[list[list[Event]]], Pi]
) -> None:
    world.trust()
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
    assert "Blocked by pi-rules" in _tool_result(requests[-1], "call-300")
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
    world: World, run_pi: Callable[[list[list[Event]]], Pi]
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
    assert len(notices) == 1 and notices[0].startswith(NOTICE)
    assert str(world.project.resolve()) in notices[0]
    assert report.rstrip("\n").endswith(notices[0])  # /rules says the same
    assert "\nactive: mine " in report and "src-rule" not in report


def test_after_pi_rules_trust_the_next_pi_session_reads_the_project_rules(
    world: World, run_pi: Callable[[list[list[Event]]], Pi]
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


def test_a_bash_heredoc_attaches_the_rule_and_skills_pi_reads_are_left_to_pi(
    world: World, run_pi: Callable[[list[list[Event]]], Pi]
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
