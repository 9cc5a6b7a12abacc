"""``pi-rules mcp``: the rules as MCP tools over stdio, built on the official ``mcp`` SDK.

Three read-only tools — ``read_rule`` (RULE-SPEC §6, the tool Pi registers), ``explain_path``
(``pi-rules explain``) and ``list_rules`` (``pi-rules --json list`` plus conditions) — for
any MCP host: Claude Code, Cursor, Codex. The SDK is an optional extra
(``pi-rules[mcp]``) and is imported only when the command runs, so ``import rules_core``
never needs it. A tool that fails answers with an MCP tool error; nothing a client sends
stops the server, only EOF on stdin does. See docs/hosts.md.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from rules_core.engine.core import Engine
from rules_core.lookup import READ_RULE_DESCRIPTION
from rules_core.model import Facts
from rules_core.safe import safe_block, safe_json, safe_line, safe_lines

from rules_hosts.session.facts import host_facts
from rules_hosts.session.results import plain_json
from rules_hosts.shapes import READ_RULE_PARAMETERS, conditions_json, errors_json, rule_json

if TYPE_CHECKING:  # the SDK is optional: never imported at module load
    from mcp.server.lowlevel import Server

SERVER_NAME = "pi-rules"
INSTALL_HINT = (
    "pi-rules mcp needs the MCP SDK: pip install 'pi-rules[mcp]' "
    "(from a checkout: pip install -e '.[mcp]' in it, or pip install '/path/to/pi-rules[mcp]')"
)
INSTRUCTIONS = (
    "Project rules for this repository, as pi-rules discovers them (.pi/rules and the rule "
    "files of other agents). Fetch a rule named in a 'Reference rules available on demand' "
    "index with read_rule; ask explain_path which rules a file activates before editing it."
)

EXPLAIN_PATH_DESCRIPTION = (
    "Explain which project rules touching a file would activate, and why: one line per rule "
    "(matches, path-independent, no match, muted) with the reasons, and tool/model/branch "
    "conditions as caveats. The same report as `pi-rules explain PATH`."
)
EXPLAIN_PATH_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file, relative to the project root (or absolute)."}
    },
    "required": ["path"],
    "additionalProperties": False,
}
LIST_RULES_DESCRIPTION = (
    "List every project and global rule pi-rules discovers — id, relativePath (what read_rule "
    "takes), description, load (pinned or on-demand), conditions — and every rule-file error, "
    "as JSON: {\"rules\": [...], \"errors\": [...]}."
)
LIST_RULES_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]


TOOLS = (
    ToolSpec("read_rule", "Read a rule", READ_RULE_DESCRIPTION, READ_RULE_PARAMETERS),
    ToolSpec("explain_path", "Explain a path", EXPLAIN_PATH_DESCRIPTION, EXPLAIN_PATH_PARAMETERS),
    ToolSpec("list_rules", "List rules", LIST_RULES_DESCRIPTION, LIST_RULES_PARAMETERS),
)


@dataclass(frozen=True)
class ToolAnswer:
    """One tool result: its text, whether it is a tool error, and JSON for structured clients."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


class UnknownTool(Exception):
    """A ``tools/call`` naming a tool we do not have: a protocol error, not a tool error."""


class RulesTools:
    """The tools' answers, SDK-free: each call discovers afresh (the engine caches by mtime),
    so a rule written while the server runs is seen by the next call."""

    def __init__(self, engine: Engine, cwd: str, trusted: bool) -> None:
        self.engine = engine
        self.cwd = cwd
        self.trusted = trusted

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolAnswer:
        handlers = {"read_rule": self.read_rule, "explain_path": self.explain_path, "list_rules": self.list_rules}
        handler = handlers.get(name)
        if handler is None:
            raise UnknownTool(name)
        try:
            return handler(dict(arguments or {}))
        except Exception as exc:  # a bug costs one answer, never the server
            return ToolAnswer(f"pi-rules: internal error in {name}: {type(exc).__name__}: {safe_line(str(exc))}", True)

    def read_rule(self, arguments: dict[str, Any]) -> ToolAnswer:
        """``pi-rules read``: the body, or the refusal (an unreadable ``path`` is refused
        like an unknown name, as the spec's ``read_rule`` answers malformed arguments)."""
        name = arguments.get("path")
        name = name if isinstance(name, str) else ""
        reading = self.engine.read_rule(Facts(cwd=self.cwd, trusted=self.trusted), name)
        if reading.rule is None:
            return ToolAnswer(safe_lines(reading.refusal or ""), is_error=True)
        note = f"\n\n{reading.note}" if reading.note else ""
        return ToolAnswer(safe_block(reading.rule.body) + note)

    def explain_path(self, arguments: dict[str, Any]) -> ToolAnswer:
        """``pi-rules explain PATH`` with the CLI's default facts (live branch, no model)."""
        path = arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            return ToolAnswer("explain_path needs 'path': a file path relative to the project root", True)
        resolved = self.engine.resolve(self.cwd, self.trusted)  # the call's settings, read once
        facts = host_facts(self.cwd, env=self.engine.env, trusted=self.trusted, settings=resolved)
        explanation = self.engine.explain(facts, path, resolved)
        text = self.engine.hooks.render("explain", {"explanation": explanation, "cwd": self.cwd})
        if text is None:
            return ToolAnswer("no plugin renders 'explain' (is the report plugin blocked?)", True)
        return ToolAnswer(text)

    def list_rules(self, arguments: dict[str, Any]) -> ToolAnswer:
        """``pi-rules --json list``, each rule with its ``conditions`` as ``show --json`` has them."""
        discovery = self.engine.discover(self.cwd, self.trusted)
        value = {
            "rules": [rule_json(r) | {"conditions": conditions_json(r)} for r in discovery.rules],
            "errors": errors_json(discovery.errors),
        }
        return ToolAnswer(safe_json(value), structured=value)


# -- the SDK side ----------------------------------------------------------------------


def run(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    """``pi-rules [--cwd DIR] [--untrusted] [-p no:NAME] mcp``: serve until stdin closes."""
    try:
        import anyio
        from mcp.server.stdio import stdio_server
    except ImportError:
        print(INSTALL_HINT, file=sys.stderr)
        return 2
    server = build_server(RulesTools(engine, cwd, trusted=not args.untrusted))

    async def serve() -> None:
        # stdio_server points fd 1 at stderr while it serves: a plugin's print cannot
        # corrupt the protocol stream.
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        return 130
    return 0


def build_server(tools: RulesTools) -> Server[Any]:
    """The low-level SDK server: it lets us publish the exact descriptions and schemas."""
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    read_only = types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    listing = types.ListToolsResult(tools=[
        types.Tool(
            name=spec.name, title=spec.title, description=spec.description,
            input_schema=plain_json(spec.input_schema), annotations=read_only,
        )
        for spec in TOOLS
    ])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            # Synchronous on purpose: calls are answered one at a time, so the engine's
            # caches are never used from two threads.
            answer = tools.call(params.name, params.arguments)
        except UnknownTool:
            # MCP spec (tools, error handling): an unknown tool is a protocol error.
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {safe_line(params.name[:100])}") from None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)],
            structured_content=answer.structured,
            is_error=answer.is_error,
        )

    return Server(
        SERVER_NAME, version=_version(), instructions=INSTRUCTIONS,
        on_list_tools=list_tools, on_call_tool=call_tool,
    )


def server_entry(*global_options: str) -> dict[str, Any]:
    """The ``mcpServers`` entry a JSON host config (Claude Code, Cursor) needs: this pi-rules
    by absolute path, so a virtual environment works under a host with another ``PATH``."""
    from rules_hosts.cli.launch import launcher

    command, *args = launcher()
    return {"command": command, "args": [*args, *global_options, "mcp"]}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pi-rules")
    except PackageNotFoundError:
        return "0"
