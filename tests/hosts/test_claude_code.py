"""``pi-rules hook claude-code``: Claude Code hook payloads through real subprocesses."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_hosts.claude_code import hook as claude_code
from rules_core.engine.core import Engine
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

from claude_driver import ClaudeDriver
from rules_hosts.claude_code import plugin as claude_code_host

SID = "5f1c2d3e-0000-4000-8000-00000000abcd"
HEADER = "## Rules newly activated by this tool result\n\n"


class Claude(ClaudeDriver):
    """The driver with this module's session id."""

    sid = SID


@pytest.fixture
def claude(tmp_path: Path) -> Claude:
    session = Claude(tmp_path)
    session.write({
        ".pi/rules/always.md": rule_text("Be kind to reviewers.", alwaysApply=True),
        ".pi/rules/ts.md": rule_text("Use strict TypeScript.", description="TypeScript", globs=["src/**/*.ts"]),
    })
    return session


def _ids(section: str) -> list[str]:
    return [line[3:] for line in section.splitlines() if line.startswith("## ") and "Rules" not in line]


# -- install ----------------------------------------------------------------------------


def test_print_config_is_the_settings_snippet(claude: Claude) -> None:
    done = claude.raw("", "--print-config")
    assert done.returncode == 0 and done.stderr == b""
    # The first block is the settings snippet under "#" lines naming its file (the .mcp.json
    # block follows; tests/test_mcp.py checks it).
    first = done.stdout.decode().split("\n\n")[0]
    assert first.startswith("# .claude/settings.json")
    hooks = json.loads("\n".join(line for line in first.splitlines() if not line.startswith("#")))["hooks"]
    assert sorted(hooks) == ["PostToolUse", "PreToolUse", "SessionStart", "UserPromptSubmit"]
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert "matcher" not in hooks["UserPromptSubmit"][0]
    assert set(hooks["PreToolUse"][0]["matcher"].split("|")) == {
        "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Grep", "Glob"}
    assert "Bash" in hooks["PostToolUse"][0]["matcher"].split("|")
    for groups in hooks.values():
        # The running pi-rules by absolute path (here `python -m rules_hosts`), so a venv works.
        command = f"{sys.executable} -P -m rules_hosts hook claude-code"
        assert groups[0]["hooks"] == [{"type": "command", "command": command, "timeout": 30}]


# -- events -----------------------------------------------------------------------------


def test_session_start_injects_the_section(claude: Claude) -> None:
    section = claude.context("SessionStart", source="startup")
    assert section is not None and section.startswith("# Rules\n")
    assert _ids(section) == ["always"] and "Be kind to reviewers." in section
    assert {"type": "pi-rules/section", "text": section} in claude.records()


def test_nothing_to_add_prints_nothing(tmp_path: Path) -> None:
    empty = Claude(tmp_path)
    assert empty.send("SessionStart", source="startup") is None
    assert empty.send("UserPromptSubmit", prompt="hello") is None
    assert empty.tool("Read", {"file_path": str(empty.cwd / "a.txt")}) is None


def test_write_of_a_new_file_attaches_the_rule(claude: Claude) -> None:
    claude.send("SessionStart", source="startup")
    target = claude.cwd / "src" / "new.ts"
    assert claude.send("PreToolUse", tool_name="Write", tool_input={"file_path": str(target), "content": "x"}) is None
    # The hook recorded the path before the tool ran; absolute, so a cwd change is harmless.
    assert claude.records()[-1] == {"type": "custom", "customType": "pi-rules-md/touched",
                                    "data": {"paths": [str(target)]}}
    make_rules(claude.cwd, {"src/new.ts": "let x = 1;\n"})  # the tool runs
    block = claude.context("PostToolUse", tool_name="Write", tool_input={"file_path": str(target), "content": "x"},
                           tool_response={"filePath": str(target), "success": True})
    assert block == HEADER + "## ts\n> Triggered by: touched src/new.ts\n\nUse strict TypeScript.\n"
    # Delivered once: the next edit of the same file adds nothing.
    assert claude.tool("Edit", {"file_path": str(target), "old_string": "1", "new_string": "2"}) is None


def test_every_file_tool_touches_its_path(claude: Claude) -> None:
    claude.write({"src/a.ts": "", "src/b.ts": "", "src/c.ts": "", "src/n.ipynb": "{}"})
    claude.tool("Grep", {"pattern": "x", "path": str(claude.cwd / "src" / "a.ts")})
    claude.tool("Glob", {"pattern": "*.ts", "path": "src/b.ts"})
    claude.tool("MultiEdit", {"file_path": str(claude.cwd / "src" / "c.ts"), "edits": []})
    claude.tool("NotebookEdit", {"notebook_path": str(claude.cwd / "src" / "n.ipynb"), "new_source": ""})
    claude.tool("Bash", {"command": "cat src/d.ts"})  # the shell-paths plugin reads the command
    touched = [p for r in claude.records() if "data" in r for p in r["data"]["paths"]]
    assert [os.path.relpath(p, claude.cwd) for p in touched] == [
        "src/a.ts", "src/b.ts", "src/c.ts", "src/n.ipynb", "src/d.ts"]


def test_bash_heredoc_attaches_the_ts_rule(claude: Claude) -> None:
    """Issue 27: ``cat > src/a.ts <<EOF`` in Bash touches src/a.ts; PostToolUse attaches
    the ``src/**/*.ts`` rule, in the payload shape Claude Code sends."""
    claude.send("SessionStart", source="startup")
    command = "mkdir -p src && cat > src/a.ts <<'EOF'\nexport const a: number = 1;\nEOF"
    make_rules(claude.cwd, {"src/a.ts": "export const a: number = 1;\n"})  # what the command did
    block = claude.context("PostToolUse", tool_name="Bash",
                           tool_input={"command": command, "description": "Write src/a.ts"},
                           tool_response={"stdout": "", "stderr": "", "interrupted": False, "isImage": False})
    assert block == HEADER + "## ts\n> Triggered by: touched src/a.ts\n\nUse strict TypeScript.\n"
    # Positive control's negative: a command naming no .ts file attaches nothing.
    assert claude.tool("Bash", {"command": "ls -la && echo done > notes.txt"}, {"stdout": "", "stderr": ""}) is None


def test_bash_paths_outside_the_project_attach_nothing(claude: Claude) -> None:
    claude.send("SessionStart", source="startup")
    outside = claude.cwd.parent / "elsewhere" / "src" / "b.ts"
    for command in (f"cat {outside}", "cat ../src/b.ts", "cd .. && cat src/b.ts", "cat $HOME/src/b.ts"):
        assert claude.tool("Bash", {"command": command}, {"stdout": "", "stderr": ""}) is None
    assert not [r for r in claude.records() if r.get("customType") == "pi-rules-md/touched"]


def test_exists_rule_fires_when_claude_creates_the_file(claude: Claude) -> None:
    claude.write({".pi/rules/docker.md": rule_text("Pin base images.", description="Docker", globs=["Dockerfile"],
                                                   match="exists")})
    assert _ids(claude.context("SessionStart", source="startup") or "") == ["always"]
    assert claude.send("PreToolUse", tool_name="Bash", tool_input={"command": "touch Dockerfile"}) is None
    claude.write({"Dockerfile": "FROM scratch\n"})
    # The Bash result attaches what the command brought into being (it rescans first).
    block = claude.tool("Bash", {"command": "touch Dockerfile"}, {"stdout": "", "stderr": ""})
    assert block is not None and "## docker\n> Triggered by: exists Dockerfile" in block
    assert claude.tool("Read", {"file_path": str(claude.cwd / "README.md")}, {"type": "text"}) is None  # once


def test_user_prompt_submit_is_zero_churn(claude: Claude) -> None:
    first = claude.context("UserPromptSubmit", prompt="hello")
    assert first is not None and _ids(first) == ["always"]
    assert claude.send("UserPromptSubmit", prompt="again") is None  # unchanged: nothing re-sent
    claude.write({"src/a.ts": ""})
    claude.send("PreToolUse", tool_name="Read", tool_input={"file_path": "src/a.ts"})
    changed = claude.context("UserPromptSubmit", prompt="next")
    # Only the rule the conversation lacks (test_claude_code_once.py): "always" is in it already.
    assert changed is not None and _ids(changed) == ["ts"]
    assert claude.send("UserPromptSubmit", prompt="once more") is None


def test_errored_result_attaches_nothing(claude: Claude) -> None:
    target = str(claude.cwd / "src" / "x.ts")
    assert claude.tool("Write", {"file_path": target}, {"success": False}) is None
    assert claude.tool("Read", {"file_path": target}, {"is_error": False}) is not None  # clean: attaches now


def test_resume_rebuilds_the_touched_set(claude: Claude) -> None:
    claude.send("SessionStart", source="startup")
    claude.send("PreToolUse", tool_name="Read", tool_input={"file_path": "src/a.ts"})
    section = claude.context("SessionStart", source="resume")
    assert section is not None and _ids(section) == ["always", "ts"]
    assert "> Triggered by: touched src/a.ts" in section


def test_compact_reinjects_and_redelivers(claude: Claude) -> None:
    claude.send("SessionStart", source="startup")
    assert claude.tool("Read", {"file_path": "src/a.ts"}) is not None  # ts delivered mid-run
    section = claude.context("SessionStart", source="compact")
    assert section is not None and _ids(section) == ["always", "ts"]  # touched survives
    assert {"type": "pi-rules/compact"} in claude.records()
    assert claude.send("UserPromptSubmit", prompt="go on") is None  # just injected


def test_clear_starts_a_new_conversation(claude: Claude) -> None:
    claude.send("SessionStart", source="startup")
    claude.send("PreToolUse", tool_name="Read", tool_input={"file_path": "src/a.ts"})
    section = claude.context("SessionStart", source="clear")
    assert section is not None and _ids(section) == ["always"]  # the touched path is forgotten
    assert claude.tool("Read", {"file_path": "src/a.ts"}) is not None  # and may be delivered again


def test_claude_rules_are_not_loaded_twice(claude: Claude) -> None:
    claude.write({".claude/rules/native.md": "Claude Code reads this itself.\n"})
    assert _ids(claude.context("SessionStart", source="startup") or "") == ["always"]
    claude.env["PI_RULES_IMPORT"] = "claude"  # the user's explicit choice wins
    assert _ids(claude.context("SessionStart", source="startup") or "") == ["always", "native"]


def test_torn_last_line_is_ignored_and_not_glued(claude: Claude) -> None:
    claude.send("PreToolUse", tool_name="Read", tool_input={"file_path": "src/a.ts"})
    with claude.state_file().open("a") as handle:
        handle.write('{"type":"custom","customType":"pi-rules-md/touched","data":{"paths":["src/b.')
    claude.send("PreToolUse", tool_name="Read", tool_input={"file_path": "src/c.ts"})
    lines = claude.state_file().read_text().splitlines()
    assert json.loads(lines[-1])["data"]["paths"] == [str(claude.cwd / "src" / "c.ts")]  # a line of its own
    section = claude.context("SessionStart", source="resume") or ""
    assert "touched src/a.ts" in section and "src/b." not in section


# -- hostile payloads -------------------------------------------------------------------

HOSTILE = {
    "not json": b"{not json",
    "array": b"[1, 2]",
    "invalid utf-8": b'{"session_id": "\xff\xfe"}',
    "wrong types": json.dumps({"session_id": 7, "cwd": [], "hook_event_name": "PreToolUse"}).encode(),
    "unknown event": json.dumps({"session_id": SID, "hook_event_name": "Stop"}).encode(),
    "huge": b'{"session_id": "' + b"a" * (claude_code.MAX_PAYLOAD + 10) + b'"}',
    "deep": b"[" * 100000,
}
HOSTILE_IDS = ["../../escape", "/tmp/abs", "a/b", "..", ".hidden", "a\\b", "x\u0000y", "", "a" * 500, "\u00e9t\u00e9"]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_payload_is_logged_and_ignored(claude: Claude, name: str) -> None:
    done = claude.raw(HOSTILE[name])
    assert done.returncode == 0 and done.stdout == b""
    assert done.stderr.startswith(b"pi-rules hook claude-code: ") and b"Traceback" not in done.stderr
    assert list(claude.state.iterdir()) == []


@pytest.mark.parametrize("sid", HOSTILE_IDS)
def test_hostile_session_id_never_escapes_the_state_dir(claude: Claude, sid: str) -> None:
    # ~/.cache/pi-rules (the installed entry points, rules_core.plugins.entry_points) is no session's
    before = sorted(p for p in claude.tmp.rglob("*") if ".git" not in p.parts and ".cache" not in p.parts)
    payload = {"session_id": sid, "cwd": str(claude.cwd), "hook_event_name": "PreToolUse",
               "tool_name": "Write", "tool_input": {"file_path": "src/a.ts"}}
    done = claude.raw(json.dumps(payload))
    assert done.returncode == 0 and done.stdout == b"" and b"not a safe file name" in done.stderr
    assert sorted(p for p in claude.tmp.rglob("*") if ".git" not in p.parts and ".cache" not in p.parts) == before


def test_wrong_field_types_do_nothing(claude: Claude) -> None:
    claude.send("SessionStart", source="startup")  # "always" is delivered: only new rules would attach
    assert claude.send("PreToolUse", tool_name=["Write"], tool_input="src/a.ts") is None
    assert claude.send("PostToolUse", tool_name="Write", tool_input={"file_path": 3}, tool_response="ok") is None
    assert claude.records()[-1]["type"] == "pi-rules/section"  # no touched entry was written
    assert claude.send("UserPromptSubmit", prompt={"x": 1}) is None  # an empty prompt, same section
    assert claude.send("SessionStart", source=5) is not None  # an unknown source is a start


def test_capture_table_answers_only_for_claude_code() -> None:
    capture = claude_code_host.pi_rules_capture_paths
    assert capture("claude-code", "Write", {"file_path": "a.ts"}) == ["a.ts"]
    assert capture("claude-code", "NotebookEdit", {"notebook_path": "n.ipynb"}) == ["n.ipynb"]
    assert capture("claude-code", "Glob", {"pattern": "*.ts"}) == []
    assert capture("claude-code", "Bash", {"command": "cat a.ts"}) == []  # the shell-paths plugin's, not the table's
    assert capture("claude-code", "write", {"file_path": "a.ts"}) == []  # names are case-sensitive
    assert capture("pi", "Write", {"file_path": "a.ts"}) == []
    assert capture("claude-code", "Read", ["a.ts"]) == []


# -- totality (hypothesis, in-process) --------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_payload = st.fixed_dictionaries({}, optional={
    "session_id": st.sampled_from([SID, "other", "../x", ""]) | _json,
    "cwd": _json,
    "hook_event_name": st.sampled_from(["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"]) | _json,
    "source": st.sampled_from(["startup", "resume", "clear", "compact"]) | _json,
    "prompt": _json,
    "tool_name": st.sampled_from(["Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Grep", "Glob", "Bash"]) | _json,
    "tool_input": st.fixed_dictionaries({}, optional={"file_path": st.sampled_from(["src/a.ts", "/etc/x"]) | _json,
                                                      "path": _json, "notebook_path": _json}) | _json,
    "tool_response": _json,
})


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Engine]:
    root = tmp_path_factory.mktemp("hypothesis")
    make_rules(root / "project", {".pi/rules/ts.md": rule_text(globs=["src/**"]), ".pi/rules/a.md": rule_text(alwaysApply=True)})
    (root / "state").mkdir()
    # The engine's persistent cache (tree walks, kept parses) follows the engine's own env.
    return root, Engine(fresh_manager(), env={"HOME": str(root), "XDG_CACHE_HOME": str(root / "state" / "cache")})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=_payload | _json)
def test_random_payloads_never_raise(sandbox: tuple[Path, Engine], payload: Any) -> None:
    root, engine = sandbox
    out, err = io.StringIO(), io.StringIO()
    # A Bash result evaluates (its command may name paths): the persistent cache goes with the state.
    env = {"HOME": str(root), "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "state" / "cache")}
    code = claude_code.main(io.StringIO(json.dumps(payload)), out, err, engine=engine,
                            cwd=str(root / "project"), env=env)
    assert code == 0
    if out.getvalue():
        assert set(json.loads(out.getvalue())["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue()
    assert {p.name for p in root.iterdir()} == {"project", "state"}


@pytest.mark.parametrize(
    "argv",
    [["hook", "claude-code", "--bogus"], ["--cwd", "/no/such/dir", "hook", "claude-code"],
     ["-p", "bad", "hook", "claude-code"], ["hook", "other-agent"]],
)
def test_cli_level_failures_of_the_hook_still_exit_0(argv, capsys, monkeypatch):
    """Claude Code treats exit 2 of a PreToolUse hook as "deny": pi-rules never blocks."""
    import io

    from rules_hosts.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("{}"))
    assert main(argv) == 0
    assert capsys.readouterr().out == ""
