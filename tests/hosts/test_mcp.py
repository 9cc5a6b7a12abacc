"""``pi-rules mcp``: the MCP server driven by the SDK's own client over stdio, compared
with what ``pi-rules read`` / ``explain`` / ``list`` print for the same project."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the SDK: pip install -e '.[test]'")

import anyio  # noqa: E402  (the SDK's own dependency)
import anyio.from_thread  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from rules_hosts import cli  # noqa: E402
from rules_hosts.claude_code import install as claude_code  # noqa: E402
from rules_core.lookup import READ_RULE_DESCRIPTION  # noqa: E402
from rules_hosts.protocols.mcp import INSTALL_HINT, RulesTools, build_server  # noqa: E402
from rules_hosts.session.runtime import READ_RULE_PARAMETERS  # noqa: E402
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text  # noqa: E402

RULES = {
    ".pi/rules/style.md": rule_text("Use `const`.", description="TypeScript style", globs=["src/**/*.ts"],
                                    match="touched", enforcement="enforce"),
    ".pi/rules/api/design.md": rule_text("Handlers return data.", description="REST conventions",
                                         globs=["src/api/**"], match="touched", load="on-demand"),
    ".pi/rules/deploy.md": rule_text("Ship on green.", description="Deploys", branch="main", tools=["bash"]),
    ".pi/rules/broken.md": "---\ndescription: Broken\nversion: 1\nglob: src/**\n---\nNope.\n",
}


class Project:
    """A project, a HOME without global rules, and the environment server and CLI share."""

    def __init__(self, root: Path) -> None:
        self.cwd = root / "project"
        self.home = root / "home"
        self.home.mkdir(parents=True)
        make_rules(self.cwd, RULES)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
        self.env["HOME"] = str(self.home)

    def cli(self, *args: str) -> tuple[int, str]:
        """``pi-rules --cwd PROJECT ARGS``, in process (fast) with the server's environment."""
        out = io.StringIO()
        with mock.patch.dict(os.environ, self.env, clear=True), contextlib.redirect_stdout(out):
            status = cli.main(["--cwd", str(self.cwd), *args])
        return status, out.getvalue()

    def params(self, *args: str, cwd: Path | None = None) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=["-m", "rules_hosts", *args, "mcp"],
                                     env=self.env, cwd=str(cwd or self.cwd))


class Connection:
    """One server process and an initialised client session, callable from sync tests."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, session: ClientSession, init: Any) -> None:
        self.portal = portal
        self.session = session
        self.init = init

    def list_tools(self) -> Any:
        return self.portal.call(self.session.list_tools)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.session.call_tool, name, arguments)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return Project(tmp_path_factory.mktemp("mcp"))


def _connect(params: StdioServerParameters) -> Iterator[Connection]:
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params)) as (read, write):
            with portal.wrap_async_context_manager(ClientSession(read, write)) as session:
                init = portal.call(session.initialize)
                yield Connection(portal, session, init)


@pytest.fixture(scope="module")
def server(project: Project) -> Iterator[Connection]:
    # No --cwd: the project is the server's working directory, as a host starts it.
    yield from _connect(project.params(cwd=project.cwd))


def _text(result: Any) -> str:
    assert [part.type for part in result.content] == ["text"]
    return result.content[0].text


# -- handshake and listing ----------------------------------------------------------------


def test_initialize_names_the_server_and_lists_three_read_only_tools(server: Connection) -> None:
    assert server.init.server_info.name == "pi-rules"
    assert server.init.capabilities.tools is not None
    tools = {tool.name: tool for tool in server.list_tools().tools}
    assert sorted(tools) == ["explain_path", "list_rules", "read_rule"]
    # read_rule is the spec's tool, byte for byte: frozen description, one string `path`.
    assert tools["read_rule"].description == READ_RULE_DESCRIPTION
    assert tools["read_rule"].input_schema == dict(READ_RULE_PARAMETERS)
    assert tools["explain_path"].input_schema["required"] == ["path"]
    assert tools["list_rules"].input_schema["properties"] == {}
    for tool in tools.values():
        assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False


# -- read_rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["style.md", "api/design.md", "rule://design"])
def test_read_rule_answers_what_pi_rules_read_prints(server: Connection, project: Project, name: str) -> None:
    result = server.call("read_rule", {"path": name})
    status, printed = project.cli("read", name)
    assert status == 0
    assert not result.is_error
    assert _text(result) + "\n" == printed  # the terminal gets one more newline


@pytest.mark.parametrize("name", ["nope.md", "/etc/passwd", "../project/.pi/rules/style.md", "C:\\x.md",
                                  "style", "rule://nope"])
def test_refused_read_is_a_tool_error_with_the_cli_text(server: Connection, project: Project, name: str) -> None:
    result = server.call("read_rule", {"path": name})
    status, printed = project.cli("read", name)
    assert status == 1
    assert result.is_error
    assert _text(result) + "\n" == printed
    assert _text(result).startswith(f"Unknown rule: {name}")


def test_unknown_rule_url_lists_the_available_ids(server: Connection) -> None:
    result = server.call("read_rule", {"path": "rule://nope"})
    assert _text(result) == "Unknown rule: rule://nope\nAvailable: design, deploy, style"


@pytest.mark.parametrize("arguments", [{}, {"path": 5}, {"path": None}, {"name": "style.md"}])
def test_read_rule_refuses_malformed_arguments_like_an_unknown_name(server: Connection, arguments: dict) -> None:
    result = server.call("read_rule", arguments)
    assert result.is_error and _text(result) == "Unknown rule: "


# -- explain_path and list_rules ------------------------------------------------------------


@pytest.mark.parametrize("path", ["src/api/users.ts", "src/app.ts", "README.md"])
def test_explain_path_answers_what_pi_rules_explain_prints(server: Connection, project: Project, path: str) -> None:
    result = server.call("explain_path", {"path": path})
    status, printed = project.cli("explain", path)
    assert status == 0 and not result.is_error
    assert _text(result) == printed
    assert _text(result).startswith(f"why {path}\n")


def test_explain_path_shows_matches_and_caveats(server: Connection) -> None:
    text = _text(server.call("explain_path", {"path": "src/api/users.ts"}))
    assert "matches: design — touched src/api/users.ts" in text
    assert "matches: style — touched src/api/users.ts" in text
    assert "path-independent: deploy" in text


@pytest.mark.parametrize("arguments", [{}, {"path": ""}, {"path": ["a"]}])
def test_explain_path_without_a_path_is_a_tool_error(server: Connection, arguments: dict) -> None:
    result = server.call("explain_path", arguments)
    assert result.is_error and "explain_path needs 'path'" in _text(result)


def test_list_rules_is_list_json_plus_each_rules_conditions(server: Connection, project: Project) -> None:
    result = server.call("list_rules", {})
    assert not result.is_error
    listed = json.loads(_text(result))
    assert result.structured_content == listed
    plain = json.loads(project.cli("--json", "list")[1])
    assert listed["rules"] == plain["rules"]  # list --json carries conditions too (issue 34)
    assert listed["errors"] == plain["errors"]
    by_id = {r["id"]: r for r in listed["rules"]}
    assert sorted(by_id) == ["deploy", "design", "style"]
    assert by_id["design"]["relativePath"] == "api/design.md" and by_id["design"]["load"] == "on-demand"
    assert by_id["design"]["description"] == "REST conventions"
    shown = json.loads(project.cli("--json", "show", "deploy")[1])
    assert by_id["deploy"]["conditions"] == shown["conditions"]
    assert by_id["deploy"]["conditions"]["branch"] == "main" and by_id["deploy"]["conditions"]["tools"] == ["bash"]
    assert [(e["kind"], Path(e["path"]).name) for e in listed["errors"]] == [("unknown-key", "broken.md")]


# -- faults ---------------------------------------------------------------------------------


def test_unknown_tool_is_a_protocol_error_and_the_server_keeps_serving(server: Connection) -> None:
    with pytest.raises(MCPError) as caught:
        server.call("write_rule", {"path": "style.md"})
    assert caught.value.code == -32602 and caught.value.message == "Unknown tool: write_rule"
    assert _text(server.call("read_rule", {"path": "style.md"})) == "Use `const`."


def test_a_failing_tool_is_a_tool_error_never_a_dead_server(project: Project) -> None:
    class Broken:
        env: dict[str, str] = {}

        def discover(self, cwd: str, trusted: bool = True) -> Any:
            raise RuntimeError("disk on fire")

    async def scenario() -> tuple[Any, Any]:
        async with Client(build_server(RulesTools(Broken(), str(project.cwd), True))) as client:  # type: ignore[arg-type]
            failed = await client.call_tool("list_rules", {})
            listing = await client.list_tools()
            return failed, listing

    failed, listing = anyio.run(scenario)
    assert failed.is_error
    assert _text(failed) == "pi-rules: internal error in list_rules: RuntimeError: disk on fire"
    assert len(listing.tools) == 3  # still answering


def test_malformed_bytes_on_stdin_are_ignored_and_serving_goes_on(project: Project) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "rules_hosts", "--cwd", str(project.cwd), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=project.env,
    )
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()  # type: ignore[union-attr]

    def send(*messages: bytes) -> None:
        process.stdin.write(b"".join(m + b"\n" for m in messages))  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    def answer(request_id: int) -> dict[str, Any]:
        while True:
            message = json.loads(lines.get(timeout=30))
            assert "error" in message or message.get("id") is not None  # garbage gets nothing or an error
            if message.get("id") == request_id:
                return message

    send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert answer(1)["result"]["serverInfo"]["name"] == "pi-rules"
    send(b"not json", b"\xff\xfe\x00garbage", b"[1, 2", b'{"jsonrpc":"2.0","id":"x"}', b"", b"{}",
         b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_rule","arguments":"style.md"}}',
         b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_rule","arguments":{"path":"style.md"}}}')
    assert answer(2)["result"]["content"] == [{"type": "text", "text": "Use `const`."}]
    process.stdin.close()  # type: ignore[union-attr]
    assert process.wait(timeout=30) == 0


# -- trust, cwd, install --------------------------------------------------------------------


def test_untrusted_server_reads_no_project_rules(project: Project, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for connection in _connect(project.params("--cwd", str(project.cwd), "--untrusted", cwd=elsewhere)):
        assert json.loads(_text(connection.call("list_rules", {}))) == {"rules": [], "errors": []}
        refused = connection.call("read_rule", {"path": "style.md"})
        assert refused.is_error and _text(refused) == "Unknown rule: style.md"


def test_without_the_sdk_the_command_says_how_to_install(project: Project) -> None:
    # sys.modules["mcp"] = None makes `import mcp` fail as if it were not installed.
    code = ("import sys; sys.modules['mcp'] = None; import rules_hosts.cli as cli; "
            f"sys.exit(cli.main(['--cwd', {str(project.cwd)!r}, 'mcp']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=project.env, timeout=60)
    assert done.returncode == 2
    assert done.stderr == INSTALL_HINT + "\n"
    assert INSTALL_HINT.startswith("pi-rules mcp needs the MCP SDK: pip install 'pi-rules[mcp]'")
    assert "pip install -e '.[mcp]'" in INSTALL_HINT  # from a checkout, too
    assert done.stdout == ""


def _blocks(text: str) -> dict[str, Any]:
    """``--print-config`` text: per block, the file its first ``#`` line names -> its JSON."""
    found = {}
    for block in text.split("\n\n"):
        lines = block.strip("\n").splitlines()
        name = lines[0].removeprefix("# ").split(":")[0]
        found[name] = json.loads("\n".join(line for line in lines if not line.startswith("#")))
    return found


def test_print_config_prints_the_hooks_and_the_mcp_json_entry(project: Project) -> None:
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code", "--print-config"],
                          capture_output=True, text=True, env=project.env, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    blocks = _blocks(done.stdout)
    assert list(blocks) == [".claude/settings.json", ".mcp.json"]
    assert blocks[".claude/settings.json"] == claude_code.config()
    # The running pi-rules by absolute path (here `python -m rules_hosts`), so a venv works.
    entry = {"command": sys.executable, "args": ["-P", "-m", "rules_hosts", "mcp"]}
    assert blocks[".mcp.json"] == {"mcpServers": {"pi-rules": entry}}
    assert "pip install 'pi-rules[mcp]'" in done.stdout


def test_print_config_json_is_one_object_keyed_by_file(project: Project) -> None:
    done = subprocess.run([sys.executable, "-m", "rules_hosts", "--json", "hook", "claude-code", "--print-config"],
                          capture_output=True, text=True, env=project.env, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout) == claude_code.install_files()
    assert json.loads(done.stdout)[".mcp.json"]["mcpServers"]["pi-rules"]["args"] == ["-P", "-m", "rules_hosts", "mcp"]
