"""The real Claude Code client for tests (tests/hosts/test_claude_real.py and
test_claude_memory_real.py): the pinned binary, installed on first use; an environment that
keeps it offline and away from the user's own settings; a trap for any request that tries to
leave 127.0.0.1; and readers for the conversation the scripted Messages API recorded."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from fake_messages_api import Request, block_text
import session_guard
from session_guard import TOOL_CACHE

# The current release (issue 24, part 7): a native binary that runs on Node 20 although its
# package.json asks for Node 22 (.ci/install-claude says how it is installed);
# keep it in step with .ci/install-claude.
CLAUDE_VERSION = "2.1.332"
REPO = Path(__file__).resolve().parents[1]

INSTALL_SCRIPT = REPO / ".ci" / "install-claude"

def _cache_dir() -> Path:
    return TOOL_CACHE / f"claude-{CLAUDE_VERSION}"  # the real tool cache: the run's HOME is a temporary one


def claude_binary() -> str:
    """The pinned binary, installed on first use (what .ci/install-claude does)."""
    binary = _cache_dir() / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
        if missing:
            pytest.skip(f"{' and '.join(missing)} not on PATH: "
                        f"cannot install @anthropic-ai/claude-code@{CLAUDE_VERSION}")
        env = {**os.environ, "PI_RULES_CLAUDE_VERSION": CLAUDE_VERSION, "XDG_CACHE_HOME": str(TOOL_CACHE.parent)}
        done = subprocess.run(["bash", str(INSTALL_SCRIPT)], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and binary.exists(), f"install-claude failed:\n{done.stderr}"
    return str(binary)


class ProxyTrap:
    """The HTTP(S) proxy for everything not bound for 127.0.0.1: it records the first line
    of each connection (``CONNECT host:443 …``) and closes it, so no request reaches the
    internet and every attempt is seen."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> ProxyTrap:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.attempts.append(conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1"))
                except OSError:
                    self.attempts.append("(connection without a request line)")


def claude_env(tmp: Path, base_url: str, proxy: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PI_RULES_"))}
    env.update(
        HOME=str(tmp / "home"), CLAUDE_CONFIG_DIR=str(tmp / "home" / ".claude"),
        XDG_STATE_HOME=str(tmp / "state"), XDG_CONFIG_HOME=str(tmp / "config"), XDG_CACHE_HOME=str(tmp / "cache"),
        ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="sk-ant-test-not-a-key",
        # Documented switches for everything that is not the conversation itself.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1", DISABLE_BUG_COMMAND="1",
        # Whatever slips past them goes to the trap, not to the internet.
        HTTPS_PROXY=proxy, HTTP_PROXY=proxy, https_proxy=proxy, http_proxy=proxy,
        NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
        # pi-rules on PATH, as the shared project scope of --install requires (it writes the
        # bare name; docs/hosts.md, "Install").
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    return env


@contextlib.contextmanager
def servers_stopped(runtime: Path) -> Iterator[None]:
    """The hook servers of ``runtime`` are stopped at the end, found by their command line:
    one the last hook call started may not have written its pid file yet."""
    try:
        yield
    finally:
        session_guard.stop_hook_servers(session_guard.hook_servers(under=str(runtime)))
        shutil.rmtree(runtime, ignore_errors=True)


def request_messages(request: Request) -> list[dict[str, Any]]:
    return list(request.body.get("messages") or [])


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block_text(block) for block in content or [])


def conversation_text(request: Request) -> str:
    """Everything the model sees in one request: system prompt and every message."""
    system = request.body.get("system")
    parts = [system if isinstance(system, str) else "\n".join(block_text(b) for b in system or [])]
    return "\n".join(parts + [message_text(m) for m in request_messages(request)])
