"""``pi-rules serve``: the JSON-lines protocol end to end, and the JSONL session file.

The scripted sessions run the server as a real subprocess (``python -m rules_core``) in a
temporary project and HOME; the hypothesis tests drive the same loop in-process.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core import hookimpl
from rules_hosts.protocols import serve
from rules_hosts.protocols.serve import MAX_LINE, Server, serve_stream
from rules_hosts.session.runtime import Session, touched_entry, touched_from_entries
from rules_hosts.session.file import SessionFile, encode_entry, parse_entries, read_entries
from rules_core.rule_tests.pytest_plugin import rule_text

RULES = {
    ".pi/rules/security.md": rule_text("Never log secrets.", description="Secrets", alwaysApply=True,
                                       enforcement="enforce"),
    ".pi/rules/typescript.md": rule_text("Use `const`.", description="TypeScript style", globs=["src/**/*.ts"],
                                         match="touched"),
    ".pi/rules/api/design.md": rule_text("Handlers return data.", description="REST conventions",
                                         globs=["src/api/**"], match="touched", load="on-demand"),
    ".pi/rules/python.md": rule_text("Type hints.", description="Python", globs=["**/*.py"], match="touched"),
}
TEXT = [{"type": "text", "text": "file contents"}]
ROOT = Path(__file__).resolve().parent.parent.parent
METHODS = ["session_start", "session_tree", "session_switch", "compact", "tool_start", "tool_result",
           "before_agent_start", "command", "read_rule", "read_rule_tool", "status", "evaluate"]


@pytest.fixture
def project(rule_project):
    rule_project.write(RULES)
    return rule_project


def run_server(project, lines: list[str | bytes], *options: str, input_bytes: bytes | None = None,
               global_options: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[bytes]]:
    """Run ``pi-rules serve`` on ``lines``; the responses, and the finished process."""
    data = input_bytes if input_bytes is not None else b"".join(
        (line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines)
    env = {**os.environ, "HOME": str(project.home), "PYTHONPATH": str(ROOT)}
    env.pop("PI_RULES_MAX_TOKENS", None)
    done = subprocess.run(
        [sys.executable, "-m", "rules_hosts", "--cwd", str(project.cwd), *global_options, "serve", *options],
        input=data, capture_output=True, env=env, timeout=120, check=False,
    )
    out = done.stdout.decode("ascii")  # the server writes ASCII only
    return [json.loads(line) for line in out.splitlines()], done


def request(rid: Any, method: str, **params: Any) -> str:
    return json.dumps({"id": rid, "method": method, "params": params})


def in_process(project, session_file: str | None = None) -> Server:
    engine = project.engine()
    session = Session(engine, str(project.cwd), trusted=True, env={"HOME": str(project.home)})
    return Server(session, SessionFile(session_file) if session_file else None, log=io.StringIO())


def drive(server: Server, text: str | bytes) -> list[dict[str, Any]]:
    instream: Any = io.BytesIO(text) if isinstance(text, bytes) else io.StringIO(text)
    out: Any = io.BytesIO() if isinstance(text, bytes) else io.StringIO()
    assert serve_stream(server, instream, out) == 0
    value = out.getvalue()
    lines = (value.decode("ascii") if isinstance(value, bytes) else value).splitlines()
    return [json.loads(line) for line in lines]


# -- the scripted session (subprocess) ----------------------------------------------------


def test_scripted_session_then_resume_from_the_session_file(project, tmp_path):
    store = tmp_path / "session.jsonl"
    answers, done = run_server(project, [
        request(1, "session_start", reason="startup"),
        request(2, "tool_start", tool="read", args={"path": "src/a.ts"}),
        request(3, "before_agent_start", prompt="fix it", model=None, tools=["read", "edit"], branch=None),
        request(4, "tool_start", tool="read", args={"path": "src/api/users.ts"}),
        request(5, "tool_result", tool="read", content=TEXT, is_error=False),
        request(6, "command", text="/rules"),
        request(7, "command", text="/rules mute typescript"),
        request(8, "before_agent_start", prompt="", tools=["read"], branch=None),
        request(9, "compact"),
        request(10, "status"),
        request(11, "evaluate"),
        request(12, "tool_start", tool="read", args={"path": "src/a.ts"}),
    ], "--session", str(store))
    assert done.returncode == 0, done.stderr
    assert [a["id"] for a in answers] == list(range(1, 13))
    start, first, turn, second, result, report, mute, turn2, compact, status, evaluate, repeat = (
        a["result"] for a in answers)
    assert start == {"rebuilt": True, "touched": [], "mutes": [], "delivered": []}
    assert first == {"paths": ["src/a.ts"], "entry": touched_entry(["src/a.ts"]), "persisted": True}
    assert turn["action"] == "patch"
    assert "## security" in turn["section"] and "## typescript" in turn["section"]
    assert turn["status"].startswith("rules: 2 · ~")
    assert second["entry"] == touched_entry(["src/api/users.ts"])
    assert result["attached"] == ["design"]
    assert result["content"][0] == TEXT[0]
    assert result["content"][1]["text"] == (
        "\n\n---\n\n## Rules newly activated by this tool result\n\n"
        "- api/design.md — REST conventions (fetch with the read_rule tool)\n")
    assert "budget: " in report["text"] and "section: ~" in report["text"]
    assert mute == {"text": "muted: typescript"}
    assert turn2["action"] == "patch" and "## typescript" not in turn2["section"]
    assert compact["delivered"] == [] and compact["mutes"] == ["typescript"]
    assert status["touched"] == ["src/a.ts", "src/api/users.ts"] and status["sessionFile"] == str(store)
    assert status["status"] == turn2["status"]
    assert [r["id"] for r in evaluate["rules"] if r["status"] == "muted"] == ["typescript"]
    assert evaluate["section"] == turn2["section"]
    assert repeat == {"paths": [], "entry": None, "persisted": False}  # a repeated path writes nothing
    # Beside the touched entries, the file holds the statistics records of `pi-rules stats`.
    touched = [e for e in read_entries(str(store)) if not str(e.get("type", "")).startswith("pi-rules/")]
    assert touched == [touched_entry(["src/a.ts"]), touched_entry(["src/api/users.ts"])]

    # A NEW server process resumes from the file: touched paths survive, mutes do not.
    answers, done = run_server(project, [
        request("a", "status"),
        request("b", "session_start", reason="startup"),
        request("c", "before_agent_start", branch=None),
        request("d", "tool_start", tool="edit", args={"path": "src/a.ts"}),
    ], "--session", str(store))
    assert done.returncode == 0, done.stderr
    status, start, turn, repeat = (a["result"] for a in answers)
    assert status["touched"] == ["src/a.ts", "src/api/users.ts"]
    assert start == {"rebuilt": True, "touched": ["src/a.ts", "src/api/users.ts"], "mutes": [], "delivered": []}
    assert "## typescript" in turn["section"] and "api/design.md" in turn["section"]
    assert repeat["entry"] is None


def test_host_persistence_hands_entries_back_on_start(project):
    entries = [{"type": "message", "role": "user"}, touched_entry(["src/a.ts"]), "damaged",
               touched_entry(["src/a.ts", "lib/x.py"])]
    answers, done = run_server(project, [
        request(1, "session_start", reason="resume", entries=entries),
        request(2, "before_agent_start", branch=None),
        request(3, "session_tree", entries=[touched_entry(["lib/x.py"])]),
        request(4, "session_tree", entries=None),  # an unreadable branch keeps what it has
        request(5, "tool_start", tool="write", args={"path": "src/new.ts"}),
    ])
    assert done.returncode == 0, done.stderr
    start, turn, tree, unreadable, capture = (a["result"] for a in answers)
    assert start["touched"] == ["src/a.ts", "lib/x.py"]
    assert "## typescript" in turn["section"] and "## python" in turn["section"]
    assert tree["touched"] == ["lib/x.py"] and tree["rebuilt"] is True
    assert unreadable == {**tree, "rebuilt": False}
    assert capture == {"paths": ["src/new.ts"], "entry": touched_entry(["src/new.ts"]), "persisted": False}


def test_read_rule_and_its_tool_definition(project):
    answers, _ = run_server(project, [
        request(1, "read_rule_tool"),
        request(2, "read_rule", args={"path": "api/design.md"}),
        request(3, "read_rule", args={"path": "nope.md"}),
        request(4, "evaluate"),
    ])
    tool, body, unknown, evaluate = (a["result"] for a in answers)
    assert tool["name"] == "read_rule" and tool["parameters"]["required"] == ["path"]
    assert body == {"text": "Handlers return data."}
    assert unknown == {"text": "Unknown rule: nope.md"}
    assert evaluate is None  # no real cycle yet


def test_bad_requests_get_errors_and_the_server_keeps_serving(project):
    lines: list[str | bytes] = [
        "not json", "[1, 2]", '"text"', "{}", '{"id": 1}', '{"id": 2, "method": "nope"}',
        '{"id": 3, "method": 7}', '{"id": true, "method": "status"}', '{"id": [1], "method": "status"}',
        '{"id": 4, "method": "status", "params": [1]}', '{"id": 5, "method": "tool_start", "params": {"tool": 5}}',
        '{"id": 6, "method": "tool_start", "params": {"tool": "read", "evil": 1}}',
        '{"id": 7, "method": "command", "params": {}}', '{"id": 8, "method": "before_agent_start", '
        '"params": {"tools": "read"}}', '{"id": 9, "method": "session_start", "params": {"entries": {"a": 1}}}',
        "[" * 100_000, '{"id": 10, "method": "status", "params": ' + "[" * 150 + "]" * 150 + "}",
        b'{"id": 11, "method": "\xff"}', '{"id": 12, "method": "status", "params": {"n": 1' + "0" * 5000 + "}}",
        "", "   ", "x" * (MAX_LINE + 10), '{"id": 13, "method": "tool_result", "params": {"tool": "read", '
        '"content": {"weird": [1, {"type": 3}]}}}', '{"id": "last", "method": "status"}',
    ]
    answers, done = run_server(project, lines)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    codes = [(a["id"], a.get("error", {}).get("code")) for a in answers]
    assert codes == [
        (None, -32700), (None, -32600), (None, -32600), (None, -32600), (1, -32600), (2, -32601),
        (3, -32600), (None, -32600), (None, -32600), (4, -32602), (5, -32602), (6, -32602), (7, -32602),
        (8, -32602), (9, -32602), (None, -32600), (None, -32600), (None, -32700), (None, -32700),
        (None, -32600), (13, None), ("last", None),
    ]
    assert answers[-2]["result"] == {"content": None, "attached": [], "invalidated": False}
    assert answers[-1]["result"]["touched"] == []


def test_eof_without_any_request_exits_zero(project):
    answers, done = run_server(project, [], input_bytes=b"")
    assert (answers, done.returncode, done.stderr) == ([], 0, b"")


def test_last_line_without_newline_is_answered(project):
    answers, done = run_server(project, [], input_bytes=request(1, "status").encode())
    assert done.returncode == 0 and answers[0]["id"] == 1 and "result" in answers[0]


def test_identical_turns_answer_none(project):
    answers, done = run_server(project, [request(1, "before_agent_start", branch=None)] * 3)
    assert [a["id"] for a in answers] == [1, 1, 1]
    assert [a["result"]["action"] for a in answers] == ["patch", "none", "none"]


def test_global_options_untrusted_and_blocked_plugins(project):
    answers, _ = run_server(project, [request(1, "before_agent_start", branch=None)], global_options=("--untrusted",))
    assert answers[0]["result"] == {"action": "none", "section": None, "status": None}
    answers, _ = run_server(project, [request(1, "tool_start", tool="read", args={"path": "src/a.ts"})],
                            global_options=("-p", "no:pi"))  # no Pi capture table: nothing captured
    assert answers[0]["result"] == {"paths": [], "entry": None, "persisted": False}


def test_a_printing_plugin_cannot_corrupt_the_protocol(project, monkeypatch):
    class Noisy:
        @hookimpl
        def pi_rules_capture_paths(self, host, tool, args):
            print("noise from a plugin")
            return []

    stdout, stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        (request(1, "tool_start", tool="read", args={"path": "src/a.ts"}) + "\n").encode())))
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    engine = project.engine(plugins=[("noisy", Noisy())])
    assert serve.run(engine, argparse.Namespace(session=None, untrusted=False), str(project.cwd)) == 0
    lines = stdout.buffer.getvalue().decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1]
    assert "noise from a plugin" in stderr.getvalue()


def test_random_bytes_smoke_over_a_real_process(project):
    junk = bytes(range(256)) * 50 + b"\n" + b"\x00\n{\n}\n" + request(9, "status").encode() + b"\n"
    answers, done = run_server(project, [], input_bytes=junk)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert answers[-1]["id"] == 9 and "result" in answers[-1]


def test_unwritable_session_file_still_answers(project, tmp_path):
    answers, done = run_server(project, [request(1, "tool_start", tool="read", args={"path": "src/a.ts"})],
                               "--session", str(tmp_path))  # a directory: cannot append
    assert done.returncode == 0
    assert answers[0]["result"]["entry"] == touched_entry(["src/a.ts"]) and answers[0]["result"]["persisted"] is False
    assert b"cannot append" in done.stderr


# -- the session file ------------------------------------------------------------------------


def test_torn_file_at_every_byte_offset_rebuilds_the_completed_entries(tmp_path):
    entries = [touched_entry(["src/a.ts"]), {"type": "message"}, touched_entry(["src/ü.ts", "b"]),
               touched_entry(["lib/x.py"])]
    data = b"".join(encode_entry(e) for e in entries)
    ends = [len(b"".join(encode_entry(e) for e in entries[: i + 1])) - 1 for i in range(len(entries))]
    path = tmp_path / "s.jsonl"
    for offset in range(len(data) + 1):
        path.write_bytes(data[:offset])
        completed = [e for e, end in zip(entries, ends) if end <= offset]  # every byte but "\n" written
        assert read_entries(str(path)) == completed, offset
        assert touched_from_entries(read_entries(str(path)), "/p") == touched_from_entries(completed, "/p")
        assert parse_entries(data[:offset]) == completed, offset
        # Appending after the tear starts a line of its own: the new entry is never lost.
        store = SessionFile(str(path))
        store.append(touched_entry(["new"]))
        store.close()
        assert read_entries(str(path)) == [*completed, touched_entry(["new"])], offset


def test_corrupt_lines_anywhere_are_skipped(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"garbage\n" + encode_entry(touched_entry(["a"])) + b"\xff\xfe\n[1]\n\n"
                     + b"{" * 5000 + b"\n" + b"x" * (3 << 20) + b"\n" + encode_entry(touched_entry(["b"])))
    assert read_entries(str(path)) == [touched_entry(["a"]), touched_entry(["b"])]


def test_missing_session_file_is_created_on_first_entry(tmp_path):
    path = tmp_path / "new.jsonl"
    store = SessionFile(str(path))
    assert store.entries == [] and not path.exists()
    store.append(touched_entry(["a\ud800"]))  # a lone surrogate from JSON input still encodes
    store.close()
    assert read_entries(str(path)) == [touched_entry(["a\ud800"])]


def test_resume_in_process_with_the_file(project, tmp_path):
    path = str(tmp_path / "s.jsonl")
    drive(in_process(project, path), request(1, "tool_start", tool="read", args={"path": "src/a.ts"}) + "\n")
    answers = drive(in_process(project, path), request(1, "session_start", reason="reload") + "\n")
    assert answers[0]["result"]["touched"] == ["src/a.ts"]


# -- hypothesis: nothing kills the server ------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_params = st.dictionaries(
    st.sampled_from(["reason", "entries", "tool", "args", "content", "is_error", "prompt", "model", "tools",
                     "branch", "text", "path", "x"]),
    _json | st.sampled_from(["read", "write", "edit", "src/a.ts", "/rules", "/rules mute typescript"]),
    max_size=5,
)
_requests = st.fixed_dictionaries(
    {"id": st.none() | st.integers() | st.text(max_size=5),
     "method": st.sampled_from(METHODS) | st.text(max_size=10)},
    optional={"params": _params | _json},
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=60), max_size=8))
def test_random_lines_never_kill_the_server(project, lines):
    answers = drive(in_process(project), "".join(line + "\n" for line in lines))
    assert len(answers) == sum(1 for line in lines if line.strip())
    assert all(("result" in a) != ("error" in a) for a in answers)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requests=st.lists(_requests | _json, max_size=8))
def test_random_json_requests_are_all_answered_in_order(project, requests):
    text = "".join(json.dumps(r) + "\n" for r in requests)
    answers = drive(in_process(project), text.encode())
    assert len(answers) == len(requests)
    for sent, answer in zip(requests, answers):
        assert ("result" in answer) != ("error" in answer)
        if isinstance(sent, dict) and "result" in answer:
            assert answer["id"] == sent["id"]
        if "error" in answer:
            assert answer["error"]["code"] in (-32700, -32600, -32601, -32602)  # never an internal error


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(["read", "edit", "write", "grep", "bash", "other"]),
                                st.sampled_from(["src/a.ts", "./src/a.ts", "lib/x.py", "src/api/u.ts", "/abs/y",
                                                 "ü/ñ.md", ""])), max_size=12))
def test_a_replayed_session_file_rebuilds_the_same_touched_set(project, tmp_path_factory, calls):
    path = str(tmp_path_factory.mktemp("replay") / "s.jsonl")
    first = in_process(project, path)
    drive(first, "".join(request(i, "tool_start", tool=t, args={"path": p}) + "\n" for i, (t, p) in enumerate(calls)))
    resumed = in_process(project, path)
    assert resumed.session.touched == first.session.touched
