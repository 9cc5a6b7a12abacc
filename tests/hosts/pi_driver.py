"""Drive the real `pi` in RPC mode with the extension (hosts/pi) and the scripted faux
provider (pi_faux_provider.ts): shared by test_pi_extension.py and test_pi_current.py.

Two Pis are supported and both are real installs pinned by lock files (.ci/install-pi):
Pi 1.6.0 (hosts/pi, run by Node 22 from the npm registry) and Pi 0.73.1
(hosts/pi/compat/pi-0.73, run by the system Node)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from session_guard import TOOL_CACHE

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "hosts" / "pi"
FAUX = Path(__file__).with_name("pi_faux_provider.ts")
PI_TIMEOUT = 120  # seconds: a bound on a hung run, never an assertion about speed
NOTICE = "pi-rules: this project has rules but is not trusted; run: pi-rules trust "
PI_NOTICE = "pi-rules: this project has rules but Pi does not trust it; run /trust in Pi (or start pi with --approve)"
VERSIONS = ("1.6.0", "0.73.1")

Event = dict[str, Any]


def _real_cache() -> dict[str, str]:
    """install-pi keeps Node 22 under the real user cache, not the run's temporary HOME."""
    return {**os.environ, "XDG_CACHE_HOME": str(TOOL_CACHE.parent)}


def install() -> None:
    subprocess.run(["bash", str(REPO / ".ci" / "install-pi")], check=True, timeout=900, env=_real_cache())


def pi_command(version: str) -> list[str]:
    """The argv that starts that Pi's CLI under the Node it needs."""
    if version == "1.6.0":
        node = subprocess.run(["bash", str(REPO / ".ci" / "install-pi"), "--node"], check=True,
                              capture_output=True, text=True, timeout=60, env=_real_cache()).stdout.strip()
        return [node, str(EXTENSION / "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js")]
    return ["node", str(EXTENSION / "compat/pi-0.73/node_modules/@mariozechner/pi-coding-agent/dist/cli.js")]


def installed_version(version: str) -> str:
    package = (EXTENSION / "node_modules/@earendil-works/pi-coding-agent/package.json" if version == "1.6.0"
               else EXTENSION / "compat/pi-0.73/node_modules/@mariozechner/pi-coding-agent/package.json")
    return str(json.loads(package.read_text())["version"])


@dataclass
class World:
    """A throw-away HOME with a git project in it."""

    home: Path
    project: Path
    log: Path  # the faux provider's received requests, one JSON object a line
    pi_trust: str | None = None  # Pi 1.6: how the test's own extension answers project_trust

    def env(self, script: Path) -> dict[str, str]:
        venv_bin = str(Path(sys.executable).parent)  # where this pi-rules is installed
        env = {
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
        if self.pi_trust is not None:
            env["PI_FAUX_TRUST"] = self.pi_trust
        return env

    def requests(self) -> list[Event]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def session_entries(self) -> list[Event]:
        files = sorted((self.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
        assert len(files) == 1, files
        return [json.loads(line) for line in files[0].read_text().splitlines()]

    def trust(self) -> None:
        """`pi-rules trust`: the user's trust store (what Pi 0.73 goes by)."""
        subprocess.run([sys.executable, "-m", "rules_hosts", "trust", str(self.project)], check=True,
                       env={**self.env(self.log), "PATH": os.environ.get("PATH", "")}, capture_output=True,
                       timeout=60)


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


class Launcher:
    """Starts Pis of one version in a world; stops every one it started."""

    def __init__(self, version: str, world: World, tmp_path: Path) -> None:
        self.version, self.world, self.tmp = version, world, tmp_path
        self.started: list[subprocess.Popen[bytes]] = []
        self.installed = False

    def install_extension(self) -> None:
        """`pi install hosts/pi`, as a user installs it (Pi's docs/packages.md): Pi records the
        folder in the HOME's settings.json and loads it at every start, without `-e`."""
        subprocess.run([*pi_command(self.version), "install", str(EXTENSION)], env=self.world.env(self.world.log),
                       cwd=self.world.home, check=True, capture_output=True, timeout=PI_TIMEOUT)
        self.installed = True

    def __call__(self, script: list[list[Event]], cwd: Path | None = None, args: tuple[str, ...] = ()) -> Pi:
        path = self.tmp / f"script-{len(self.started)}.json"
        path.write_text(json.dumps(script))
        ours = () if self.installed else ("-e", str(EXTENSION / "index.ts"))
        command = [*pi_command(self.version), "--mode", "rpc", "--provider", "faux", "--model", "faux-1",
                   "-e", str(FAUX), *ours, *args]
        err = (self.tmp / f"pi-{len(self.started)}.err").open("wb")
        process = subprocess.Popen(command, cwd=cwd or self.world.project, env=self.world.env(path),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        err.close()
        self.started.append(process)
        return Pi(process)

    def stop(self) -> None:
        for process in self.started:
            if process.stdin is not None and not process.stdin.closed:
                process.stdin.close()  # EOF: pi shuts down, and its extension stops pi-rules serve
            try:
                process.wait(timeout=PI_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def trust_project(world: World, version: str) -> None:
    """What a user does to trust the project: on Pi 1.6 Pi's own decision (here a
    project_trust answer), on 0.73.1 `pi-rules trust`."""
    if version == "1.6.0":
        world.pi_trust = "yes"
    else:
        world.trust()


def tool(name: str, **args: str) -> Event:
    return {"tool": name, "args": args}


def texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def tool_result(request: Event, tool_call_id: str) -> str:
    results = [m for m in request["messages"] if m["role"] == "toolResult" and m["toolCallId"] == tool_call_id]
    assert len(results) == 1, request["messages"]
    return texts(results[0]["content"])


def rule(description: str, body: str, **keys: str) -> str:
    lines = ["---", f"description: {description}", "version: 1", *(f"{k}: {v}" for k, v in keys.items()), "---"]
    return "\n".join(lines) + "\n" + body + "\n"
