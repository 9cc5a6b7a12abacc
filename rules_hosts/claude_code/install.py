"""``pi-rules hook claude-code --install | --uninstall | --print-config``: the adapter's setup.

Claude Code reads hooks from its settings files and MCP servers from ``.mcp.json`` (project
scope) or ``~/.claude.json`` (local, user), so one install touches two files per scope, both
merged, never replaced: every other key, hook and server stays, our entries are known by
their command (``…pi-rules hook claude-code``, ``…pi-rules mcp``) wherever an older install
put them, and a file that is not the object Claude Code expects is refused untouched
(docs/hosts.md, "Install").
"""

from __future__ import annotations

import json
import os
import shlex
from typing import Any, Callable, Mapping, TextIO

from rules_core.discovery.containment import enclosing_project

from rules_hosts.cli.launch import shell_command
from rules_hosts.protocols.mcp import SERVER_NAME, server_entry
from ._install_apply import Change, Target, apply_changes
from ._install_files import json_kind
from ._install_scope import MCP_INSTALL as _MCP_INSTALL, ScopeRefused, mcp_sdk_installed, scope_launch, skipped_mcp_note
from .tools import MATCHER

SETTINGS_FILE = ".claude/settings.json"
LOCAL_SETTINGS_FILE = ".claude/settings.local.json"
MCP_FILE = ".mcp.json"
SCOPES = ("project", "local", "user")
TIMEOUT = 30  # seconds Claude Code gives each hook
_HOOK_WORDS = ["hook", "claude-code"]
_MODULES = ("rules_hosts", "rules_core")  # `python -m …` forms of older installs
_INSTALL_NOTES = {
    SETTINGS_FILE: (
        "# .claude/settings.json: the hooks (path rules, rules attached to tool results).\n"
        "# Merge into .claude/settings.json (shared), .claude/settings.local.json (yours) or ~/.claude/settings.json"
        " (all projects),\n# or let `pi-rules hook claude-code --install [--scope project|local|user]` do it."
    ),
    MCP_FILE: (
        "# .mcp.json: the MCP server (read_rule, explain_path, list_rules); needs the MCP SDK:\n"
        f"# {_MCP_INSTALL}.\n"
        "# Merge into .mcp.json at the project root; Claude Code asks once to approve the server."
    ),
}


def hook_command(launch: tuple[str, ...] | None = None) -> str:
    """The hook's command line: this pi-rules by absolute path, shell-quoted."""
    return shell_command(*_HOOK_WORDS, launch=launch)


def config(command: str | None = None) -> dict[str, Any]:
    """The ``hooks`` object of ``.claude/settings.json`` that installs the adapter."""
    hook = [{"type": "command", "command": hook_command() if command is None else command, "timeout": TIMEOUT}]
    return {"hooks": {
        "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": hook}],
        "UserPromptSubmit": [{"hooks": hook}],
        "PreToolUse": [{"matcher": MATCHER, "hooks": hook}],
        "PostToolUse": [{"matcher": MATCHER + "|Bash", "hooks": hook}],
    }}


def mcp_config() -> dict[str, Any]:
    """The ``.mcp.json`` object that installs the MCP server."""
    return {"mcpServers": {SERVER_NAME: server_entry()}}


def install_files() -> dict[str, dict[str, Any]]:
    """The one install: each file Claude Code reads, and what to merge into it. Claude Code
    takes MCP servers from ``.mcp.json``, never from settings.json, hence two files."""
    return {SETTINGS_FILE: config(), MCP_FILE: mcp_config()}


def print_config(stdout: TextIO, form: str, as_json: bool) -> None:
    """``--print-config``: each snippet under ``#`` lines naming its file; ``settings`` or
    ``mcp``: that one JSON document; ``--json``: one object keyed by file, for scripts."""
    files = install_files()
    if form in ("settings", "mcp"):
        stdout.write(json.dumps(files[SETTINGS_FILE if form == "settings" else MCP_FILE], indent=2) + "\n")
    elif as_json:
        stdout.write(json.dumps(files, indent=2) + "\n")
    else:
        blocks = [f"{_INSTALL_NOTES[name]}\n{json.dumps(value, indent=2)}\n" for name, value in files.items()]
        stdout.write("\n".join(blocks))


# -- where each scope lives -------------------------------------------------------------


def targets(scope: str, cwd: str, env: Mapping[str, str]) -> tuple[Target, Target]:
    """The settings file for the hooks and the file holding the MCP entry, per Claude Code's
    scopes: project → ``.claude/settings.json`` + ``.mcp.json``; local →
    ``.claude/settings.local.json`` + ``~/.claude.json`` under ``projects.<cwd>``; user →
    ``~/.claude/settings.json`` + ``~/.claude.json`` at its root."""
    home = env.get("HOME") or os.path.expanduser("~")
    config_dir = env.get("CLAUDE_CONFIG_DIR") or ""
    user_dir = config_dir or os.path.join(home, ".claude")
    state = os.path.join(config_dir or home, ".claude.json")  # Claude Code's own state file
    bound = enclosing_project(cwd, home)
    if scope == "project":
        return (Target(os.path.join(cwd, SETTINGS_FILE), None, bound),
                Target(os.path.join(cwd, MCP_FILE), (), bound))
    if scope == "local":
        return Target(os.path.join(cwd, LOCAL_SETTINGS_FILE), None, bound), Target(state, ("projects", cwd))
    return Target(os.path.join(user_dir, "settings.json"), None), Target(state, ())


# -- recognising our entries ------------------------------------------------------------


def _starts_pi_rules(words: list[str]) -> int:
    """How many leading words start pi-rules (0: they do not)."""
    if words and os.path.basename(words[0]) in ("pi-rules", "pi-rules.exe"):
        return 1
    if len(words) >= 3 and words[1] == "-m" and words[2] in _MODULES:
        return 3  # written before issue 26 (no -P): still ours, rewritten on install
    if len(words) >= 4 and words[1] == "-P" and words[2] == "-m" and words[3] in _MODULES:
        return 4
    return 0


def is_our_command(command: Any) -> bool:
    """A hook command of ours: ``<pi-rules> hook claude-code``, whatever path starts it."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    start = _starts_pi_rules(words)
    return start > 0 and words[start:] == _HOOK_WORDS


def is_our_server(entry: Any) -> bool:
    """An ``mcpServers`` entry of ours: ``<pi-rules> [options] mcp``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    words = [entry["command"], *args]
    return _starts_pi_rules(words) > 0 and words[-1] == "mcp"


# -- pure merges ------------------------------------------------------------------------


def check_settings(data: Any) -> str | None:
    """Why a settings object is not one we can merge into (None: it is)."""
    if not isinstance(data, dict):
        return f"the file holds a JSON {json_kind(data)}, not an object"
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        return f'"hooks" is a JSON {json_kind(hooks)}, not an object of event names'
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            return f'"hooks.{event}" is a JSON {json_kind(groups)}, not a list of matcher groups'
        for i, group in enumerate(groups):
            if not isinstance(group, dict):
                return f'"hooks.{event}[{i}]" is a JSON {json_kind(group)}, not an object'
            if not isinstance(group.get("hooks", []), list):
                return f'"hooks.{event}[{i}].hooks" is a JSON {json_kind(group["hooks"])}, not a list'
    return None


def remove_hooks(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without our hook commands; a group, event list or ``hooks`` object left
    empty by that goes too (nothing else is touched)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        kept = []
        for group in groups:
            handlers = group.get("hooks")
            if not isinstance(handlers, list):
                kept.append(group)
                continue
            mine = [h for h in handlers if isinstance(h, dict) and is_our_command(h.get("command"))]
            if not mine:
                kept.append(group)
            elif len(mine) < len(handlers):
                kept.append({**group, "hooks": [h for h in handlers if not any(h is m for m in mine)]})
        if kept or not groups:
            new_hooks[event] = kept
    result = dict(data)
    if new_hooks or not hooks:
        result["hooks"] = new_hooks
    else:
        del result["hooks"]
    return result


def add_hooks(data: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """``data`` with exactly our groups (older ones of ours removed first), after theirs."""
    result = remove_hooks(data)
    hooks = dict(result.get("hooks", {}))
    for event, groups in wanted["hooks"].items():
        hooks[event] = [*hooks.get(event, []), *groups]
    # "hooks" keeps its place among the other keys when it was there.
    return {**result, "hooks": hooks}


def _servers_parent(data: dict[str, Any], at: tuple[str, ...]) -> tuple[dict[str, Any] | None, str | None]:
    """The object that holds ``mcpServers`` (None if absent), or why it cannot."""
    node: Any = data
    where: list[str] = []
    for key in at:
        where.append(key)
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return None, None
        if not isinstance(node, dict):
            return None, f'"{".".join(where)}" is a JSON {json_kind(node)}, not an object'
    return node, None


def check_mcp(data: Any, at: tuple[str, ...]) -> str | None:
    """Why an object cannot take (or give back) our ``mcpServers`` entry (None: it can)."""
    if not isinstance(data, dict):
        return f"the file holds a JSON {json_kind(data)}, not an object"
    parent, problem = _servers_parent(data, at)
    if problem is not None or parent is None:
        return problem
    servers = parent.get("mcpServers", {})
    if not isinstance(servers, dict):
        return f'"mcpServers" is a JSON {json_kind(servers)}, not an object of servers'
    return None


def check_mcp_install(data: Any, at: tuple[str, ...]) -> str | None:
    """As ``check_mcp``; a ``pi-rules`` server someone else wrote is not ours (uninstall leaves it)."""
    problem = check_mcp(data, at)
    if problem is not None:
        return problem
    parent, _ = _servers_parent(data, at)
    servers = parent.get("mcpServers", {}) if parent is not None else {}
    if SERVER_NAME in servers and not is_our_server(servers[SERVER_NAME]):
        return f'"mcpServers.{SERVER_NAME}" is a server pi-rules did not write; rename it or remove it'
    return None


def _with_servers(data: dict[str, Any], at: tuple[str, ...], change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """``data`` with the object at ``at`` replaced by ``change(it)``; an object left empty
    by the change is dropped, as is the chain of objects above it that held only it."""
    if not at:
        return change(data)
    key, rest = at[0], at[1:]
    inner = data.get(key)
    new_inner = _with_servers(inner if isinstance(inner, dict) else {}, rest, change)
    result = dict(data)
    if new_inner or (isinstance(inner, dict) and not inner):
        result[key] = new_inner
    else:
        result.pop(key, None)
    return result


def add_server(data: dict[str, Any], at: tuple[str, ...], entry: dict[str, Any]) -> dict[str, Any]:
    def change(parent: dict[str, Any]) -> dict[str, Any]:
        return {**parent, "mcpServers": {**parent.get("mcpServers", {}), SERVER_NAME: entry}}

    return _with_servers(data, at, change)


def remove_server(data: dict[str, Any], at: tuple[str, ...]) -> dict[str, Any]:
    def change(parent: dict[str, Any]) -> dict[str, Any]:
        servers = parent.get("mcpServers")
        if not isinstance(servers, dict) or not is_our_server(servers.get(SERVER_NAME)):
            return parent
        result = dict(parent)
        rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
        if rest:
            result["mcpServers"] = rest
        else:
            del result["mcpServers"]
        return result

    parent, problem = _servers_parent(data, at)
    return data if parent is None or problem is not None else _with_servers(data, at, change)


# -- the commands -----------------------------------------------------------------------


def install(cwd: str, scope: str, stdout: TextIO, stderr: TextIO, env: Mapping[str, str]) -> int:
    settings, mcp = targets(scope, cwd, env)
    try:
        launch, note = scope_launch(scope, env)
    except ScopeRefused as exc:
        stderr.write(f"pi-rules: refusing to install --scope {scope}: {exc}.\n")
        return 1
    wanted = config(hook_command(launch))
    entry = {"command": launch[0], "args": [*launch[1:], "mcp"]}
    at = mcp.mcp_at or ()
    changes = [Change(settings, check_settings, lambda d: add_hooks(d, wanted), keep_empty=True)]
    removed: list[bool] = []
    with_mcp = mcp_sdk_installed()  # without the SDK, Claude Code would list a server that fails
    if with_mcp:
        changes.append(Change(mcp, lambda d: check_mcp_install(d, at), lambda d: add_server(d, at, entry),
                              keep_empty=True))
    else:  # an entry an earlier install wrote would fail to start now: take it out (issue 34)
        def drop(data: dict[str, Any]) -> dict[str, Any]:
            after = remove_server(data, at)
            removed.append(after != data)
            return after

        changes.append(Change(mcp, lambda d: check_mcp(d, at), drop, keep_empty=False, optional=True))
    code = apply_changes(changes, "installed", stdout, stderr, env=env, note=note)
    if code == 0 and not with_mcp:
        stderr.write(skipped_mcp_note(scope, mcp.path if any(removed) else None))
    return code


def uninstall(cwd: str, scope: str, stdout: TextIO, stderr: TextIO, env: Mapping[str, str]) -> int:
    settings, mcp = targets(scope, cwd, env)
    at = mcp.mcp_at or ()
    return apply_changes(
        [Change(settings, check_settings, remove_hooks, keep_empty=False),
         Change(mcp, lambda d: check_mcp(d, at), lambda d: remove_server(d, at), keep_empty=False)],
        "uninstalled", stdout, stderr, env=env,
    )


def run_cli(args: Any, cwd: str, stdout: TextIO, stderr: TextIO, env: Mapping[str, str]) -> int | None:
    """``--install``, ``--uninstall`` or ``--print-config`` when asked for (None: neither,
    the caller handles a hook payload)."""
    scope = getattr(args, "scope", None) or "project"
    if getattr(args, "install", False):
        return install(cwd, scope, stdout, stderr, env)
    if getattr(args, "uninstall", False):
        return uninstall(cwd, scope, stdout, stderr, env)
    form = getattr(args, "print_config", None)
    if form:
        print_config(stdout, form, as_json=bool(getattr(args, "json", False)))
        return 0
    return None


__all__ = ["MCP_FILE", "SETTINGS_FILE", "config", "install_files", "print_config", "run_cli"]
