"""The Claude Code adapter under the real ``claude`` binary (issue 16, part 4).

The pinned ``@anthropic-ai/claude-code`` from npm runs ``claude -p`` against a scripted
Messages API on 127.0.0.1 (tests/fake_messages_api.py); the hooks are installed into a
temporary git project as a user would install them. Every assertion reads what the
model was actually sent (the recorded requests) or what is on disk. One session is run
per module; each test checks one thing a user relies on.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from claude_real import (REPO, ProxyTrap, claude_binary, claude_env, conversation_text, message_text,
                         request_messages, servers_stopped)
from golden_files import updating
from fake_messages_api import FakeMessagesAPI, Request, block_text, text, tool_results, tool_use
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

PAYLOAD_FIXTURES = REPO / "tests" / "fixtures" / "claude_code_payloads"
RUN_TIMEOUT = 120

ALWAYS_MARK = "MARK-ALWAYS-4c1e9b"
PYSRC_MARK = "MARK-PYSRC-7a22d0"
STREAM_MARK = "MARK-STREAM-e5f013"
INDEX_MARK = "MARK-INDEX-2b8f61"  # the on-demand rule's description: its index line
ON_DEMAND_MARK = "MARK-ONDEMAND-93d4aa"  # its body: only the model's own Read brings it
FORBIDDEN = "FORBIDDEN_TOKEN"
MARKS = (ALWAYS_MARK, PYSRC_MARK, STREAM_MARK, INDEX_MARK, ON_DEMAND_MARK)
WRITE_APP, READ_NOTES = "toolu_01writeapp", "toolu_02readnotes"
READ_RULE, WRITE_BAD = "toolu_03readrule", "toolu_04writebad"
ON_DEMAND_RULE = ".pi/rules/reference.md"
# A prompt without language words: the intent matcher must not pull the path rule in early.
PROMPT = "Carry out the scripted steps."

# Records each hook payload beside the adapter, so the payloads Claude Code really sends
# can be checked against tests/fixtures/claude_code_payloads/.
_PAYLOAD_LOGGER = """\
import json, os, sys, time
payload = sys.stdin.read()
event = json.loads(payload).get("hook_event_name", "unknown")
name = f"{time.monotonic_ns()}-{os.getpid()}-{event}.json"
with open(os.path.join(sys.argv[1], name), "w", encoding="utf-8") as out:
    out.write(payload)
"""


@dataclass(frozen=True)
class Session:
    """One finished ``claude -p`` run: what the model was sent, and the project after it."""

    project: Path
    requests: list[Request]
    main: list[Request]
    result: dict[str, Any]
    payloads: list[dict[str, Any]]
    outside: list[str]  # request lines that tried to leave 127.0.0.1
    served: int  # hook calls the resident hook server answered (docs/hook-server.md)


def _rules() -> dict[str, str]:
    return {
        ".pi/rules/house.md": rule_text(f"House style marker {ALWAYS_MARK}.", description="House style",
                                        alwaysApply=True),
        ".pi/rules/pysrc.md": rule_text(f"Python sources marker {PYSRC_MARK}.", description="Python sources",
                                        globs=["src/**/*.py"]),
        ".pi/rules/no-forbidden.md": rule_text(
            f"Never write {FORBIDDEN.lower()} in sources; marker {STREAM_MARK}.", description="No forbidden token",
            condition=FORBIDDEN, scope="tool:write", interruptMode="tool-only"),
        ON_DEMAND_RULE: rule_text(f"Reference body marker {ON_DEMAND_MARK}.", description=f"Reference {INDEX_MARK}",
                                  alwaysApply=True, load="on-demand"),
        "notes.txt": "Notes the model reads.\n",
        "README.md": "A project.\n",
    }


def _script(project: Path) -> list[list[dict[str, Any]]]:
    """Turn i answers the conversation holding i tool results."""
    return [
        [text("Writing the app."), tool_use(WRITE_APP, "Write", {"file_path": str(project / "src/app.py"),
                                                                 "content": "print('app')\n"})],
        [tool_use(READ_NOTES, "Read", {"file_path": str(project / "notes.txt")})],
        # What a model does with an index line that says "(read it with the Read tool)".
        [tool_use(READ_RULE, "Read", {"file_path": str(project / ON_DEMAND_RULE)})],
        [tool_use(WRITE_BAD, "Write", {"file_path": str(project / "src/bad.py"),
                                       "content": f"VALUE = '{FORBIDDEN}'\n"})],
    ]


def _install_hooks(project: Path, env: dict[str, str], payload_dir: Path) -> None:
    """The adapter's hooks as a user installs them (``--install``, CONTRACT §6), plus a
    payload logger on every event beside them."""
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code", "--install"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    settings = project / ".claude" / "settings.json"
    assert done.returncode == 0 and settings.exists(), f"--install failed:\n{done.stdout}{done.stderr}"
    data = json.loads(settings.read_text())
    logger = project.parent / "log_payload.py"
    logger.write_text(_PAYLOAD_LOGGER)
    log = [{"type": "command", "command": shlex.join([sys.executable, str(logger), str(payload_dir)])}]
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"):
        group = {"matcher": "*", "hooks": log} if "Tool" in event else {"hooks": log}
        data["hooks"].setdefault(event, []).append(group)
    settings.write_text(json.dumps(data, indent=2))


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    binary = claude_binary()
    tmp = tmp_path_factory.mktemp("claude-real")
    project, payload_dir = tmp / "project", tmp / "payloads"
    for folder in (project, payload_dir, tmp / "home", tmp / "state", tmp / "config", tmp / "cache"):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    make_rules(project, _rules())
    # The hook server on, as users run it, in a folder of this test's (short: socket paths).
    runtime = Path(tempfile.mkdtemp(prefix="cr-", dir="/tmp"))
    with FakeMessagesAPI(_script(project)) as api, ProxyTrap() as trap, servers_stopped(runtime):
        env = {**claude_env(tmp, api.url, trap.url), "XDG_RUNTIME_DIR": str(runtime)}
        _install_hooks(project, env, payload_dir)
        done = subprocess.run(
            [binary, "-p", PROMPT, "--output-format", "json", "--model", "claude-sonnet-4-5",
             # acceptEdits, not bypassPermissions: the latter refuses to run as root. No MCP
             # server (--install's .mcp.json is left out): the Read tool is the reference path.
             "--permission-mode", "acceptEdits", "--allowedTools", "Read,Write", "--strict-mcp-config"],
            cwd=project, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL,
        )
        log = runtime / "pi-rules" / "server.log"
        served = log.read_text().count("request ") if log.exists() else 0
    assert done.returncode == 0, f"claude exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    logged = sorted(payload_dir.iterdir(), key=lambda p: int(p.name.split("-")[0]))  # monotonic_ns first
    payloads = [json.loads(p.read_text()) for p in logged]
    dump = os.environ.get("PI_RULES_TEST_CLAUDE_DUMP")
    if dump:  # for a human debugging a new pin: every request and hook payload, as JSON
        Path(dump).write_text(json.dumps({"requests": [r.__dict__ for r in api.requests], "payloads": payloads,
                                          "stdout": done.stdout, "stderr": done.stderr}, indent=1))
    yield Session(project, list(api.requests), [r for r in api.requests if r.is_main],
                  json.loads(done.stdout), payloads, list(trap.attempts), served)


# -- reading the recorded conversation ----------------------------------------------------


def _holding(message: dict[str, Any], call_id: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == call_id for b in content)


def _result_of(request: Request, call_id: str) -> dict[str, Any]:
    return next(b for b in tool_results(request_messages(request)) if b.get("tool_use_id") == call_id)


# -- the tests ----------------------------------------------------------------------------


def test_the_hook_server_answered_the_calls_after_the_first(session: Session) -> None:
    """Every check in this file holds with the hook server in the loop, as users run it:
    the first hook call starts the server and is answered in process; calls made once it
    listens are answered by it (how many depends on how fast it starts)."""
    assert 1 <= session.served < len(session.payloads)


def test_the_scripted_session_ran_to_its_end(session: Session) -> None:
    assert session.result["is_error"] is False, session.result
    assert session.result["result"] == "Done."
    # Write, Read, Read, the denied Write, then the final text: one request per model turn.
    assert len(session.main) == 5, [r.path for r in session.requests]
    assert (session.project / "src" / "app.py").read_text() == "print('app')\n"


def test_the_client_runs_offline(session: Session) -> None:
    # The documented switches leave nothing but the conversation: no request tried to
    # leave 127.0.0.1, and the fake API saw only Messages API paths.
    assert session.outside == []
    paths = {r.path.split("?")[0] for r in session.requests}
    assert paths <= {"/", "/v1/messages", "/v1/messages/count_tokens"}, paths


def test_always_on_rule_arrives_with_the_first_request(session: Session) -> None:
    first = session.main[0]
    assert ALWAYS_MARK in conversation_text(first)
    # It comes as session-start context in the opening user turn, not in the system prompt.
    assert ALWAYS_MARK in message_text(request_messages(first)[0])
    assert PYSRC_MARK not in conversation_text(first)


def test_stream_rule_never_enters_the_section(session: Session) -> None:
    before_deny = [r for r in session.main if not any(_holding(m, WRITE_BAD) for m in request_messages(r))]
    assert before_deny
    assert all(STREAM_MARK not in conversation_text(r) for r in before_deny)


def test_path_rule_arrives_with_the_write_that_activated_it(session: Session) -> None:
    after = next(r for r in session.main if any(_holding(m, WRITE_APP) for m in request_messages(r)))
    messages = request_messages(after)
    at = next(i for i, m in enumerate(messages) if _holding(m, WRITE_APP))
    # In the user turn that carries the Write's result (the result itself or the context
    # Claude Code places beside it) and nowhere before it.
    assert PYSRC_MARK in message_text(messages[at]), json.dumps(messages[at], indent=1)
    assert all(PYSRC_MARK not in message_text(m) for m in messages[:at])


def test_nothing_is_delivered_twice(session: Session) -> None:
    final = session.main[-1]
    # The rule file the model read itself carries its own description and body; what the
    # hooks delivered is everything else.
    read = block_text(_result_of(final, READ_RULE))
    delivered = conversation_text(final).replace(read, "", 1)
    counts = {mark: delivered.count(mark) for mark in MARKS}
    assert counts == {**dict.fromkeys(MARKS, 1), ON_DEMAND_MARK: 0}, counts


def test_on_demand_rule_is_listed_for_the_read_tool(session: Session) -> None:
    first = conversation_text(session.main[0])
    line = next((l for l in first.splitlines() if INDEX_MARK in l), None)
    path = session.project / ON_DEMAND_RULE
    assert line == f"- {path} — Reference {INDEX_MARK} (read it with the Read tool)", line
    assert ON_DEMAND_MARK not in first


def test_on_demand_body_arrives_only_through_the_read(session: Session) -> None:
    final = session.main[-1]
    assert ON_DEMAND_MARK in block_text(_result_of(final, READ_RULE))
    before = [r for r in session.main if not any(_holding(m, READ_RULE) for m in request_messages(r))]
    assert all(ON_DEMAND_MARK not in conversation_text(r) for r in before)


def test_stream_rule_denies_the_forbidden_write(session: Session) -> None:
    assert not (session.project / "src" / "bad.py").exists()
    result = _result_of(session.main[-1], WRITE_BAD)
    said = block_text(result)
    assert result.get("is_error") is True, result
    assert "Blocked by project rule no-forbidden (no-forbidden.md)" in said, said
    assert STREAM_MARK in said


def test_payload_fixtures_are_what_the_pinned_client_sends(session: Session) -> None:
    """tests/fixtures/claude_code_payloads/ holds one sanitized payload per event and tool,
    for other tests to copy from; ``PI_RULES_UPDATE_GOLDEN=1`` rewrites them from this run."""
    first: dict[str, dict[str, Any]] = {}
    for payload in session.payloads:
        first.setdefault(_payload_key(payload), _sanitized(payload, session.project))
    assert set(first) >= {"SessionStart", "UserPromptSubmit", "PreToolUse-Write", "PostToolUse-Write",
                          "PreToolUse-Read", "PostToolUse-Read"}, sorted(first)
    if updating():
        PAYLOAD_FIXTURES.mkdir(exist_ok=True)
        for key, payload in first.items():
            (PAYLOAD_FIXTURES / f"{key}.json").write_text(json.dumps(payload, indent=2) + "\n")
    stored = {p.stem: json.loads(p.read_text()) for p in PAYLOAD_FIXTURES.glob("*.json")}
    assert stored == first


def _payload_key(payload: dict[str, Any]) -> str:
    tool = payload.get("tool_name")
    return payload["hook_event_name"] + (f"-{tool}" if isinstance(tool, str) else "")


def _sanitized(payload: dict[str, Any], project: Path) -> dict[str, Any]:
    """The payload as if the session ran in /home/user/project: no temporary paths, fixed
    ids and durations, so the fixtures stay byte-stable from run to run."""
    home = project.parent / "home"
    raw = json.dumps(payload)
    # Claude Code names a project's transcript folder after its path, every other character a dash.
    raw = raw.replace(re.sub(r"[^A-Za-z0-9]", "-", str(project)), "-home-user-project")
    raw = raw.replace(str(project), "/home/user/project").replace(str(home), "/home/user")
    for field, fixed in (("session_id", "00000000-0000-4000-8000-000000000001"),
                         ("prompt_id", "00000000-0000-4000-8000-000000000002")):
        if isinstance(payload.get(field), str):
            raw = raw.replace(payload[field], fixed)
    data = json.loads(raw)
    if "duration_ms" in data:
        data["duration_ms"] = 1
    return data
