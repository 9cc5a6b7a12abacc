"""Issue 26, attacks 8, 11, 14, 15 and 16: the resident hook server commits deliveries only
once its answer reached the host, watches every module it has loaded, asks for the git
root per call, keys parsed files on ctime, and a call it took never runs twice.

The server's own ``_answer`` is driven over a socket pair (one real call each, in
process), except attack 16, which needs a real client process whose stdout is closed."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_hosts.claude_code.state import CLEAR_TYPE, DELIVERED_TYPE, SECTION_TYPE
from rules_hosts.cli.hook_client import ACK, GO, MAX_ANSWER, READY, receive
from rules_hosts.hook_server.server import Server

from test_hook_server import RULES, Served, stop_servers  # noqa: F401 - the fixture: every Served is stopped


class _World:
    def __init__(self, tmp_path: Path) -> None:
        self.home, self.state, self.cwd = tmp_path / "home", tmp_path / "state", tmp_path / "repo"
        self.home.mkdir()
        make_rules(self.cwd, {".pi/rules/always.md": rule_text("Be kind.", alwaysApply=True)})
        subprocess.run(["git", "init", "-q", str(self.cwd)], check=True)
        self.env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "XDG_STATE_HOME": str(self.state),
                    "PI_RULES_HOOK_SERVER": "off"}
        self.server = Server(600.0)
        self.server._remember_code()

    def journal(self, sid: str) -> list[dict[str, Any]]:
        path = self.state / "pi-rules" / "claude-code" / f"{sid}.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def call(self, payload: dict[str, Any], cwd: Path | None = None, *, give_up: bool = False) -> Any:
        """One hook call through ``Server._answer``: the answer (``None`` when the client gave
        up after GO), or ``"refused"`` when the server sent no READY."""
        data = json.dumps({"cwd": str(cwd or self.cwd), **payload}).encode()
        header = json.dumps({"argv": ["hook", "claude-code"], "cwd": str(cwd or self.cwd), "env": self.env,
                             "umask": 0o022, "size": len(data), "encoding": "utf-8", "errors": "strict"}).encode()
        client, server_side = socket.socketpair()
        def serve_one() -> None:
            self.server._answer(server_side)
            server_side.close()  # as Server.serve does after each connection

        thread = threading.Thread(target=serve_one)
        thread.start()
        try:
            client.sendall(len(header).to_bytes(8, "big") + header + data)
            if client.recv(1) != READY:
                thread.join()
                return "refused"
            client.sendall(GO)
            if give_up:  # the client's 25 s ran out: it closes and answers nothing
                client.close()
                thread.join()
                return None
            answer = json.loads(receive(client, MAX_ANSWER))
            client.sendall(ACK)
            thread.join()
            return answer
        finally:
            client.close()


@pytest.fixture
def world(tmp_path: Path) -> _World:
    return _World(tmp_path)


def _start(sid: str) -> dict[str, Any]:
    return {"session_id": sid, "hook_event_name": "SessionStart", "source": "startup"}


def test_a_call_the_client_gave_up_on_records_no_delivery(world):
    assert world.call(_start("gave-up"), give_up=True) is None
    kinds = [r.get("type") for r in world.journal("gave-up")]
    assert DELIVERED_TYPE not in kinds and SECTION_TYPE not in kinds  # was: recorded as delivered
    # Positive control: an acknowledged answer is recorded.
    answer = world.call(_start("acked"))
    assert "Be kind." in answer["stdout"]
    assert DELIVERED_TYPE in [r.get("type") for r in world.journal("acked")]


def test_a_module_first_loaded_by_a_later_call_is_watched(world, tmp_path, monkeypatch):
    folder = tmp_path / "mods"
    make_rules(folder, {"late_plugin_mod.py": "VALUE = 1\n"})
    monkeypatch.syspath_prepend(str(folder))
    world.server = Server(600.0)  # started with that path, as a server whose plugin is installed
    world.server._remember_code()
    world.call(_start("m1"))
    importlib.import_module("late_plugin_mod")  # what a later call's stream/deny path imports
    try:
        assert world.call(_start("m2")) != "refused"  # the call that loaded it
        (folder / "late_plugin_mod.py").write_text("VALUE = 22\n")
        assert world.call(_start("m3")) == "refused"  # was: answered with the stale module
    finally:
        sys.modules.pop("late_plugin_mod", None)


def test_a_folder_that_becomes_its_own_repository_gets_the_narrower_bound(world):
    sub = world.cwd / "sub"
    make_rules(world.cwd, {"secret.md": "TOP-SECRET-OF-THE-OUTER-REPO\n"})
    sub.mkdir()
    os.symlink("../secret.md", sub / ".cursorrules")
    first = world.call(_start("g1"), cwd=sub)
    assert "TOP-SECRET-OF-THE-OUTER-REPO" in first["stdout"]  # inside the outer repository: read
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    second = world.call(_start("g2"), cwd=sub)
    assert "TOP-SECRET-OF-THE-OUTER-REPO" not in second["stdout"]  # was: the old, wider bound


def test_a_same_size_edit_with_the_mtime_put_back_is_seen(world):
    rule = world.cwd / ".pi" / "rules" / "always.md"
    assert "Be kind." in world.call(_start("c1"))["stdout"]
    before = rule.stat()
    rule.write_text(rule.read_text().replace("Be kind.", "Be calm."))
    os.utime(rule, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert rule.stat().st_size == before.st_size and rule.stat().st_mtime_ns == before.st_mtime_ns
    assert "Be calm." in world.call(_start("c2"))["stdout"]  # was: "Be kind." from the cache


def test_a_failed_write_of_the_servers_answer_never_runs_the_call_again(tmp_path):
    served = Served(tmp_path / "on")
    served.write(RULES)
    served.start()
    served.wait_server()
    before = served.served()
    payload = json.dumps({"session_id": served.sid, "cwd": str(served.cwd), "hook_event_name": "SessionStart",
                          "source": "clear", "transcript_path": str(served.home / "t.jsonl")})
    read_end, write_end = os.pipe()
    os.close(read_end)  # the host is gone: writing the answer fails
    try:
        subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"], input=payload.encode(),
                       stdout=write_end, stderr=subprocess.DEVNULL, env=served.env, cwd=str(served.tmp), timeout=60)
    finally:
        os.close(write_end)
    assert served.served() == before + 1  # the server ran it ...
    clears = [r for r in served.records() if r.get("type") == CLEAR_TYPE]
    assert clears == []  # ... and nothing ran it again in process (was: the /clear journalled twice)
    # Positive control: an answer that reaches the host is recorded once.
    served.start("clear")
    # The server commits a call once its client has acknowledged it, which may be after the
    # client process has exited (1 of 50 runs read the state too early). It takes one call
    # at a time, so once a later call is served, every commit before it is written: calls
    # until one is served, counted, not timed. A clear committed by the failed call above
    # would now show as a second record.
    served_before = served.served()
    for _ in range(20):
        served.prompt("after")
        if served.served() > served_before:
            break
    assert served.served() > served_before
    assert len([r for r in served.records() if r.get("type") == CLEAR_TYPE]) == 1
