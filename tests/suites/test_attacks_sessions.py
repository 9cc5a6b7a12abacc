"""Issue 14, attacks 8 and 11: parallel Claude Code hooks on one session, and a session
entry acknowledged as persisted that the reader cannot read back. Real subprocesses only;
a subprocess timeout is a hang detector, never a measurement."""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from suite_helpers import hook_env
from rules_hosts.session.runtime import touched_entry
from rules_hosts.session.file import MAX_ENTRY_LINE, EntryRefused, SessionFile, read_entries

SID = "0d9e8f7a-1111-4000-8000-00000000beef"
CALLS = 20
# Independent sessions raced one after another: one race can miss by luck of scheduling
# (lock-less, about one round in five delivered no duplicate); three practically cannot.
ROUNDS = 3
EMOJI = "\U0001F600"  # 4 bytes of UTF-8, 12 characters as a JSON \\u escape pair


# -- attack 8: parallel hooks ---------------------------------------------------------


class Claude:
    """A project with one rule per file plus one rule every file activates."""

    def __init__(self, tmp_path: Path, lock_wait_ms: int) -> None:
        self.cwd = tmp_path / "project"
        self.state = tmp_path / "state"
        (tmp_path / "home").mkdir()
        rules: dict[str, str] = {
            ".pi/rules/rule-shared.md": rule_text("BODY-SHARED for every file.", globs=["src/*.txt"], match="touched"),
        }
        for n in range(CALLS):
            rules[f".pi/rules/rule-{n:02d}.md"] = rule_text(
                f"BODY-{n:02d} for one file.", globs=[f"src/file-{n:02d}.txt"], match="touched")
            rules[f"src/file-{n:02d}.txt"] = "text\n"
        make_rules(self.cwd, rules)
        subprocess.run(["git", "init", "-q", str(self.cwd)], check=True)
        self.sid = SID
        self.env = hook_env()
        # No engine deadline: on a loaded machine a cut evaluation would look like a lost rule.
        self.env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(self.state),
                        PI_RULES_LOCK_WAIT_MS=str(lock_wait_ms), PI_RULES_DEADLINE_MS="off")

    def payload(self, event: str, n: int | None = None, **fields: Any) -> bytes:
        data: dict[str, Any] = {"session_id": self.sid, "cwd": str(self.cwd), "hook_event_name": event, **fields}
        if n is not None:
            data.update(tool_name="Read", tool_input={"file_path": str(self.cwd / f"src/file-{n:02d}.txt")})
            if event == "PostToolUse":
                data["tool_response"] = {"type": "text", "file": {"filePath": data["tool_input"]["file_path"]}}
        return json.dumps(data).encode()

    def start(self, payload: bytes) -> subprocess.Popen[bytes]:
        """A hook process with its payload written but stdin still open: it reads to EOF,
        so it waits, imports done, until ``parallel`` closes its stdin."""
        process = subprocess.Popen([sys.executable, "-m", "rules_hosts", "hook", "claude-code"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        assert process.stdin is not None
        process.stdin.write(payload)
        process.stdin.flush()
        return process

    def parallel(self, payloads: list[bytes]) -> list[tuple[str, str]]:
        """Every payload in its own hook process, released at once: (context or "", stderr)."""
        running = [self.start(p) for p in payloads]
        for process in running:
            _wait_until_reading(process.pid)
        for process in running:  # EOF for all: they go from reading to deciding together
            assert process.stdin is not None
            process.stdin.close()
        results = []
        for process in running:
            assert process.stdout is not None and process.stderr is not None
            out, err = process.stdout.read(), process.stderr.read()  # stderr: a line at most
            assert process.wait(timeout=120) == 0
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
            results.append((context, err.decode()))
        return results

    def lock_file(self) -> Path:
        return self.state / "pi-rules" / "claude-code" / f"{self.sid}.lock"


def _wait_until_reading(pid: int) -> None:
    """Until ``pid`` blocks reading its stdin pipe (Linux ``/proc``; elsewhere at once), so
    the hooks released together really decide together: without it they start staggered by
    interpreter start-up and a race is luck. The 60 s bound only detects a hang."""
    for _ in range(6000):
        try:
            channel = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            return
        if "pipe_read" in channel or channel in ("", "0"):  # reading, or a kernel that hides it
            return
        time.sleep(0.01)


def test_parallel_reads_deliver_each_rule_once_and_only_to_the_call_that_activated_it(tmp_path: Path) -> None:
    claude = Claude(tmp_path, lock_wait_ms=600_000)  # never cut here: the test is about order
    for turn in range(ROUNDS):
        claude.sid = f"{SID[:-1]}{turn}"
        assert claude.parallel([claude.payload("SessionStart", source="startup")]) == [("", "")]
        # Claude Code runs the hooks of parallel tool calls concurrently: all PreToolUse, then
        # all PostToolUse, so every PostToolUse can see every other call's path.
        pre = claude.parallel([claude.payload("PreToolUse", n) for n in range(CALLS)])
        assert pre == [("", "")] * CALLS
        post = claude.parallel([claude.payload("PostToolUse", n) for n in range(CALLS)])
        assert [err for _, err in post] == [""] * CALLS
        everything = "".join(context for context, _ in post)
        # Every call's path activates the shared rule: delivered once, by whichever hook was first.
        assert everything.count("BODY-SHARED") == 1, f"round {turn}: {everything.count('BODY-SHARED')} deliveries"
        for n, (context, _) in enumerate(post):
            assert everything.count(f"BODY-{n:02d}") == 1, f"round {turn}: rule-{n:02d}"
            # Each attachment names only the rules its own path activated.
            assert set(re.findall(r"BODY-(\d\d)", context)) == {f"{n:02d}"}, f"round {turn}: call {n}"
            assert set(re.findall(r"rule-(\d\d)", context)) == {f"{n:02d}"}, f"round {turn}: call {n}"


def test_a_hook_that_cannot_get_the_session_lock_delivers_nothing_and_says_so(tmp_path: Path) -> None:
    claude = Claude(tmp_path, lock_wait_ms=50)
    claude.lock_file().parent.mkdir(parents=True)
    with open(claude.lock_file(), "a") as held:  # another hook holding the session, forever
        fcntl.flock(held, fcntl.LOCK_EX)
        [(context, err)] = claude.parallel([claude.payload("PostToolUse", 3)])
        assert context == ""
        assert "session busy" in err and "nothing delivered" in err and err.count("\n") == 1
        [(context, err)] = claude.parallel([claude.payload("UserPromptSubmit", prompt="go on")])
        assert context == "" and "session busy" in err
    # The path was still recorded: the next prompt, with the lock free, brings its rules.
    [(context, err)] = claude.parallel([claude.payload("UserPromptSubmit", prompt="go on")])
    assert err == "" and "BODY-03" in context and "BODY-SHARED" in context


# -- attack 11: acknowledged but lost ---------------------------------------------------


def _serve(project: Path, session: Path, requests: list[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    """One real ``pi-rules serve --session`` process: the requests in, the answers out."""
    env = hook_env(HOME=str(tmp_path), PI_RULES_IMPORT="none")
    lines = b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in requests)
    done = subprocess.run(
        [sys.executable, "-m", "rules_hosts", "--cwd", str(project), "serve", "--session", str(session)],
        input=lines, capture_output=True, env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _tool_start(number: int, path: str) -> dict[str, Any]:
    return {"id": number, "method": "tool_start", "params": {"tool": "read", "args": {"path": path}}}


def _resumed(project: Path, session: Path, tmp_path: Path) -> list[str]:
    [status] = _serve(project, session, [{"id": "s", "method": "status"}], tmp_path)
    return status["result"]["touched"]


def test_a_path_of_100000_emoji_is_never_acknowledged_and_then_lost(tmp_path: Path) -> None:
    project = make_rules(tmp_path / "p", {".pi/rules/a.md": rule_text(globs=["src/**"])})
    session = tmp_path / "s.jsonl"
    huge = "src/" + EMOJI * 100_000  # a 400 KB request, 1.2 MB as an ASCII-escaped line
    answers = _serve(project, session, [_tool_start(1, "src/before.ts"), _tool_start(2, huge),
                                        _tool_start(3, "src/after.ts")], tmp_path)
    assert [a["result"]["paths"] for a in answers] == [["src/before.ts"], [huge], ["src/after.ts"]]
    acknowledged = [p for a in answers if a["result"]["persisted"] for p in a["result"]["paths"]]
    assert _resumed(project, session, tmp_path) == acknowledged  # whatever was acknowledged is back
    refused = answers[1]["result"]
    assert refused["persisted"] is False and "4096" in refused["persistError"]
    assert acknowledged == ["src/before.ts", "src/after.ts"]


def test_persisted_paths_are_capped_at_4096_bytes_and_written_as_utf8(tmp_path: Path) -> None:
    project = make_rules(tmp_path / "p", {".pi/rules/a.md": rule_text(globs=["src/**"])})
    session = tmp_path / "s.jsonl"
    at_cap = "src/" + EMOJI * 1023  # 4 + 4092 = 4096 bytes: a path the OS could still take
    over = "src/x" + EMOJI * 1023  # 4097 bytes
    answers = _serve(project, session, [_tool_start(1, at_cap), _tool_start(2, over)], tmp_path)
    assert answers[0]["result"]["persisted"] is True and "persistError" not in answers[0]["result"]
    assert answers[1]["result"]["persisted"] is False
    assert answers[1]["result"]["persistError"] == (
        "a path of 4097 bytes is over the 4096-byte limit for a persisted path; the entry was not written")
    assert _resumed(project, session, tmp_path) == [at_cap]
    # Written as UTF-8, not as \\u escapes: 4 bytes per emoji on disk, not 12.
    assert EMOJI.encode("utf-8") * 1023 in session.read_bytes()


def test_the_claude_code_journal_keeps_no_path_it_could_not_fold_back(tmp_path: Path) -> None:
    claude = Claude(tmp_path, lock_wait_ms=600_000)
    huge = str(claude.cwd / "src") + "/" + EMOJI * 100_000
    payload = {"session_id": SID, "cwd": str(claude.cwd), "hook_event_name": "PreToolUse",
               "tool_name": "Read", "tool_input": {"file_path": huge}}
    [(context, err)] = claude.parallel([json.dumps(payload).encode()])
    assert context == "" and "over the 4096-byte limit" in err and err.count("\n") == 1
    assert claude.parallel([claude.payload("PreToolUse", 5)]) == [("", "")]
    journal = (claude.state / "pi-rules" / "claude-code" / f"{SID}.jsonl").read_bytes()
    assert len(journal) < 10_000 and b"file-05.txt" in journal  # the real path is kept


def test_the_session_file_refuses_a_line_its_own_reader_would_skip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    store = SessionFile(str(path))
    store.append(touched_entry(["src/a.ts"]))
    # 300 paths under the path cap, each 4000 bytes of UTF-8: 1.2 MB in one line.
    wide = touched_entry([f"src/{n}/" + EMOJI * 1000 for n in range(300)])
    with pytest.raises(EntryRefused, match=f"over the {MAX_ENTRY_LINE}-byte line limit"):
        store.append(wide)
    store.close()
    assert read_entries(str(path)) == [touched_entry(["src/a.ts"])]  # nothing half-written
