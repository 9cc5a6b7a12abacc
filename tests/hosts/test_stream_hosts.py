"""Stream rules through the hosts (issue 6, items 6–7): the session, `pi-rules serve`,
Claude Code's PreToolUse deny, and `pi-rules stream test` / `stream scan`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rules_hosts import Session
from rules_core.engine.core import Engine
from rules_hosts.protocols.serve import Server, serve_stream
from golden_files import check_golden
from suite_helpers import hook_env, run_in
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

ROOT = Path(__file__).resolve().parent.parent.parent

RULES = {
    ".pi/rules/no-console.md": rule_text(
        "Use the logger from src/log.ts.", description="No console.log",
        condition="console\\.log\\(", scope="tool:edit(*.ts), tool:write(*.ts)", interruptMode="tool-only"),
    ".pi/rules/pre.md": rule_text(
        "Do not blame pre-existing issues.", description="No excuses", condition="(?i)pre.existing"),
    ".pi/rules/quiet.md": rule_text(
        "Prefer short answers.", description="Quiet", condition="(?i)\\bobviously\\b", interruptMode="never"),
    ".pi/rules/style.md": rule_text("Plain rule.", globs=["src/**"]),
}


@pytest.fixture
def project(rule_project):
    rule_project.write(RULES)
    return rule_project


def session(project) -> Session:
    return Session(project.engine(), str(project.cwd), trusted=True, env={"HOME": str(project.home)})


# -- the session --------------------------------------------------------------------------------


def test_session_streams_fire_interrupt_and_reset_on_compaction(project):
    s = session(project)
    s.before_agent_start("hello", branch=None)
    assert s.stream.delta("text", "it was pre-exi").fired == ()
    fired = s.stream.delta("text", "sting already")
    assert [f.rule.id for f in fired.fired] == ["pre"] and fired.interrupt
    assert fired.block.startswith("# Rule interrupt\n")
    s.stream.turn()
    assert s.stream.delta("text", "pre-existing").fired == ()  # repeat: once
    s.compact()
    assert [f.rule.id for f in s.stream.delta("text", "pre-existing").fired] == ["pre"]


def test_session_stream_follows_mutes_and_normalises_paths(project):
    s = session(project)
    assert s.command("/rules mute no-console") == "muted: no-console"
    abs_path = str(project.cwd / "src" / "a.ts")
    assert s.stream.delta("tool", "console.log(1)", tool="write", call_id="1", path=abs_path).fired == ()
    s.command("/rules unmute no-console")
    result = s.stream.delta("tool", "console.log(1)", tool="write", call_id="2", path=abs_path)
    assert [f.source for f in result.fired] == ["tool:write(src/a.ts)"]


def test_a_reminder_does_not_interrupt(project):
    result = session(project).stream.delta("text", "Obviously.")
    assert [f.rule.id for f in result.fired] == ["quiet"] and not result.interrupt
    assert result.block.startswith("# Rule reminder\n")


# -- serve ------------------------------------------------------------------------------------------


def drive(project, *requests: dict) -> list[dict]:
    server = Server(session(project), None, log=io.StringIO())
    out = io.StringIO()
    serve_stream(server, io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_serve_stream_methods(project):
    answers = drive(
        project,
        {"id": 1, "method": "stream_turn"},
        {"id": 2, "method": "stream_delta", "params": {"source": "tool", "tool": "edit", "call_id": 7,
                                                      "text": "console.lo", "path": "src/a.ts"}},
        {"id": 3, "method": "stream_delta", "params": {"source": "tool", "tool": "edit", "call_id": 7, "text": "g(x)"}},
        {"id": 4, "method": "stream_end", "params": {"source": "tool", "tool": "edit", "call_id": 7}},
        {"id": 5, "method": "stream_check", "params": {"source": "text", "text": "obviously"}},
        {"id": 6, "method": "stream_delta", "params": {"source": "speech", "text": "x"}},
        {"id": 7, "method": "stream_delta", "params": {"source": "text"}},
    )
    assert answers[0] == {"id": 1, "result": {"watching": ["no-console", "pre", "quiet"]}}
    assert answers[1]["result"] == {"fired": [], "interrupt": False, "block": ""}
    assert answers[2]["result"]["fired"] == [{
        "id": "no-console", "source": "tool:edit(src/a.ts)", "interrupt": True,
        "reason": 'matched /console\\.log\\(/: "console.log("'}]
    assert answers[3]["result"]["fired"] == []
    assert [f["id"] for f in answers[4]["result"]["fired"]] == ["quiet"]
    assert answers[5]["error"] == {"code": -32602, "message": "'source' of stream_delta must be one of text, thinking, tool"}
    assert answers[6]["error"] == {"code": -32602, "message": "stream_delta requires 'text'"}


# -- Claude Code: deny before the file changes ------------------------------------------------------


def hook(project, payload: dict) -> dict | None:
    env = hook_env(HOME=str(project.home), XDG_STATE_HOME=str(project.home / "state"), PYTHONPATH=str(ROOT))
    payload = {"session_id": "s-1", "cwd": str(project.cwd), **payload}
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return json.loads(done.stdout) if done.stdout else None


def test_claude_code_denies_a_write_an_interrupting_rule_forbids(project):
    output = hook(project, {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {
        "file_path": str(project.cwd / "src" / "a.ts"), "content": "const x = 1;\nconsole.log(x);\n"}})
    decision = output["hookSpecificOutput"]
    assert (decision["hookEventName"], decision["permissionDecision"]) == ("PreToolUse", "deny")
    check_golden("stream-deny.txt", decision["permissionDecisionReason"] + "\n")


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Edit", {"file_path": "src/a.ts", "old_string": "a", "new_string": "console.log(a)"}),
    ("MultiEdit", {"file_path": "src/a.ts", "edits": [{"old_string": "a", "new_string": "b"},
                                                      {"old_string": "c", "new_string": "console.log(c)"}]}),
])
def test_claude_code_checks_what_edits_would_write(project, tool, tool_input):
    output = hook(project, {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input})
    assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "tool:edit(src/a.ts)" in output["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Write", {"file_path": "src/a.js", "content": "console.log(1)"}),  # outside the scope glob
    ("Write", {"file_path": "src/a.ts", "content": "logger.info(1)"}),  # nothing matches
    ("Write", {"file_path": "notes.md", "content": "obviously"}),  # interruptMode never: no deny
    ("Read", {"file_path": "src/a.ts"}),
    ("Write", {"file_path": 7, "content": "console.log(1)"}),  # hostile shapes
    ("MultiEdit", {"file_path": "src/a.ts", "edits": "console.log("}),
])
def test_claude_code_allows_everything_else(project, tool, tool_input):
    assert hook(project, {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}) is None


def test_pi_host_names_what_its_tools_write(project):
    hooks = project.engine().hooks
    written = hooks.tool_output("pi", "edit", {"path": "src/a.ts", "oldText": "a", "newText": "console.log(a)"})
    assert (written.tool, written.path, written.text) == ("edit", "src/a.ts", "console.log(a)")
    assert hooks.tool_output("pi", "write", {"path": "a.ts", "content": "x"}).text == "x"
    assert hooks.tool_output("pi", "bash", {"command": "echo"}) is None
    assert hooks.tool_output("claude-code", "write", {"path": "a.ts", "content": "x"}) is None


# -- the CLI -------------------------------------------------------------------------------------------


def cli(project, *args: str) -> tuple[int, str]:
    code, out, err = run_in(None, project.cwd, *args)
    sys.stderr.write(err)  # passed on, where a test's capsys reads it
    return code, out


def test_stream_test_prints_the_rules_that_fire_and_why(project):
    assert cli(project, "stream", "test", "--text", "Obviously it was pre-existing.") == (0, (
        'pre: text matched /(?i)pre.existing/: "pre-existing"\n'
        'quiet: text matched /(?i)\\bobviously\\b/: "Obviously"\n'
        'no-console: armed, did not fire: its scope (tool:edit(*.ts), tool:write(*.ts)) does not watch the text\n'))
    # Nothing fires: each armed rule says why it stayed quiet (issue 34), prose out of scope.
    code, out = cli(project, "stream", "test", "--text", "console.log(1)")
    assert code == 0 and out.splitlines() == [
        "no-console: armed, did not fire: its scope (tool:edit(*.ts), tool:write(*.ts)) does not watch the text",
        "pre: armed, did not fire: its condition did not match the text (scope text, tool)",
        "quiet: armed, did not fire: its condition did not match the text (scope text, tool)"]
    code, out = cli(project, "--json", "stream", "test", "--text", "console.log(1)", "--tool", "edit",
                    "--path", "src/x.ts")
    assert code == 0 and json.loads(out)["fired"] == [{
        "id": "no-console", "source": "tool:edit(src/x.ts)", "interrupt": True,
        "reason": 'matched /console\\.log\\(/: "console.log("'}]
    assert [(r["id"], r["armed"]) for r in json.loads(out)["notFired"]] == [("pre", True), ("quiet", True)]


def test_stream_test_file_without_path_is_checked_as_that_file(project, tmp_path):
    (project.cwd / "src").mkdir(exist_ok=True)
    snippet = project.cwd / "src" / "x.ts"
    snippet.write_text("console.log(1)\n")
    code, out = cli(project, "stream", "test", "--file", str(snippet), "--tool", "edit")
    assert code == 0 and out.splitlines()[0] == 'no-console: tool:edit(src/x.ts) matched /console\\.log\\(/: "console.log("'
    # Positive control: --path still wins over the file's own name.
    code, out = cli(project, "stream", "test", "--file", str(snippet), "--tool", "edit", "--path", "notes.md")
    assert not any(line.startswith("no-console: tool:") for line in out.splitlines())
    assert "no-console: armed, did not fire: its scope (tool:edit(*.ts), tool:write(*.ts)) does not watch " \
           "the edit call on notes.md" in out


def test_stream_test_reads_a_file_and_honours_agent_scoping(project, tmp_path):
    snippet = tmp_path / "snippet.txt"
    snippet.write_text("pre-existing")
    project.write({".pi/rules/scout.md": rule_text(condition="(?i)pre.existing", agents=["scout"])})
    assert [line for line in cli(project, "stream", "test", "--file", str(snippet))[1].splitlines()
            if not line.startswith(("no-console", "quiet"))] == [
        'pre: text matched /(?i)pre.existing/: "pre-existing"',
        "scout: not armed, did not fire: not armed for these facts (muted, scoped out, or its "
        "model/branch/tools/agents condition does not hold)"]
    assert [line.split(":")[0] for line in cli(project, "stream", "test", "--file", str(snippet),
                                               "--agent", "scout")[1].splitlines()
            if "did not fire" not in line] == ["pre", "scout"]


def test_stream_scan_finds_violations_like_a_linter(project, capsys):
    subprocess.run(["git", "init", "-q", str(project.cwd)], check=True)
    make_rules(project.cwd, {
        "src/a.ts": "const a = 1;\nconsole.log(a);\nconsole.log(2);\n",
        "src/b.js": "console.log(1);\n",  # outside the rule's *.ts scope
        "src/bin.ts": b"\x00\x01console.log(",  # binary: skipped
        "dist/out.ts": "console.log(1);\n",  # ignored by git
        ".gitignore": "dist/\n",
        "notes.md": "That bug was pre-existing.\n",
    })
    code, out = cli(project, "stream", "scan")
    assert code == 1
    assert out.splitlines() == [
        'notes.md:1: pre: matched /(?i)pre.existing/: "pre-existing"',
        'src/a.ts:2: no-console: matched /console\\.log\\(/: "console.log("',
        'src/a.ts:3: no-console: matched /console\\.log\\(/: "console.log("',
    ]
    assert "skipped 1 binary file(s)" in capsys.readouterr().err
    code, out = cli(project, "--json", "stream", "scan", "src")
    assert code == 1 and json.loads(out)["findings"][0] == {
        "id": "no-console", "file": "src/a.ts", "line": 2, "reason": 'matched /console\\.log\\(/: "console.log("'}


def test_stream_scan_of_a_clean_tree_exits_zero(project):
    make_rules(project.cwd, {"src/a.ts": "logger.info(1)\n"})
    assert cli(project, "stream", "scan", "src") == (0, "")
    assert cli(project, "stream", "scan", "missing")[0] == 2


def test_stream_rules_in_the_report_are_inactive_with_their_reason(project):
    engine = Engine(fresh_manager(), env={"HOME": str(project.home)})
    evaluation = engine.evaluate(project.facts(touched=["src/a.ts"]))
    statuses = {o.rule.id: o.status for o in evaluation.outcomes}
    assert statuses == {"no-console": "inactive", "pre": "inactive", "quiet": "inactive", "style": "active"}


# -- astCondition (ast-grep, the optional extra the test install includes) ------------------------------


def test_ast_conditions_fire_on_complete_edit_and_write_snapshots(rule_project):
    rule_project.write({".pi/rules/no-eval.md": rule_text(
        "Never call eval.", astCondition="eval($$$)", scope="tool:write, tool:edit")})
    s = session(rule_project)
    source = "const a = 1;\nconst b = eval('a');\n"
    # ast-grep needs the whole text: nothing fires until the tool call's stream ends.
    assert s.stream.delta("tool", source, tool="write", call_id="w", path="src/x.ts").fired == ()
    ended = s.stream.end("tool", tool="write", call_id="w")
    assert [(f.rule.id, f.reason) for f in ended.fired] == [("no-eval", "ast pattern 'eval($$$)' matched: \"eval('a')\"")]
    # A string that only mentions eval is not a call: the regex-free rule stays quiet.
    s.compact()
    assert s.stream.check("tool", "const note = 'eval(x) is bad';\n", tool="edit", path="y.ts").fired == ()


def test_ast_conditions_in_stream_scan_report_the_line(rule_project):
    rule_project.write({
        ".pi/rules/no-eval.md": rule_text("Never call eval.", astCondition="eval($$$)", scope="tool"),
        "src/x.py": "import os\n\nvalue = eval(os.environ['X'])\n",
    })
    code, out = cli(rule_project, "stream", "scan", "src")
    assert code == 1
    assert out == "src/x.py:3: no-eval: ast pattern 'eval($$$)' matched: \"eval(os.environ['X'])\"\n"


def test_stream_scan_of_an_untrusted_project_never_runs_git(project, monkeypatch):
    from rules_hosts.cli import stream as stream_cli

    project.write_global({"no-todo.md": rule_text(condition="TODO", scope="tool")})
    make_rules(project.cwd, {"src/a.ts": "// TODO\n"})
    monkeypatch.setenv("HOME", str(project.home))
    monkeypatch.setattr(stream_cli, "_git_files", lambda root: pytest.fail("git ran in an untrusted project"))
    code, out = cli(project, "--untrusted", "stream", "scan")
    assert code == 1 and out == 'src/a.ts:1: no-todo: matched /TODO/: "TODO"\n'


def test_a_slow_condition_reaches_the_session_as_a_fault(rule_project):
    rule_project.write({".pi/rules/slow.md": rule_text(condition="(a|aa)+$")})
    s = session(rule_project)
    assert s.stream.delta("text", "a" * 80 + "b").fired == ()
    assert s.last_fault.startswith("stream rule slow (slow.md): condition /(a|aa)+$/ took over")
