"""The settings on the command line: ``pi-rules config``, the options that set a value
for one run (``--max-tokens``, ``--overflow``; the global ``--import``), and the engine
the CLI makes with the files' ``[plugins] block`` applied before any plugin loads.

See docs/configuration.md; the files themselves are read by ``rules_core.settings.load``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Mapping, Sequence

from rules_core.engine.core import Engine
from rules_core.plugins.manager import make_plugin_manager
from rules_core.safe import safe_line
from rules_core.settings.load import KEYS, LIST_KEYS, OVERFLOWS, Settings, SettingsCache, Value, import_value
from rules_core.settings.resolved import Resolved
from rules_core.settings.apply import (
    host_warnings,
    importer_selection,
    plugin_blocks,
    project_bound,
    required_errors,
)

from rules_hosts.shapes import errors_json, warnings_json

IMPORT_DEST = "import_names"  # ``--import`` (rules_hosts.cli.options); ``import`` is a keyword


def configured_engine(
    cwd: str, trusted: bool, blocked: Sequence[str], argv: Sequence[str], env: Mapping[str, str]
) -> tuple[Engine, Resolved]:
    """The CLI's engine and the call's settings: the plugin manager is made with
    ``blocked`` (``-p no:NAME``) and the settings files' ``[plugins] block`` (the host's
    table too when ``argv`` names a host); the files are read once, here, and the
    ``Resolved`` value is what the command reads from then on (docs/configuration.md).
    Raises ``PluginLoadError`` as ``make_plugin_manager`` does."""
    home = env.get("HOME") or None
    cache = SettingsCache(env, home, project_bound(home))
    project, host = os.path.abspath(cwd), host_named(argv)
    resolved = Resolved(cache.settings(project, trusted), host, project, trusted)
    pm = make_plugin_manager([*blocked, *plugin_blocks(resolved.settings, host)], env=env)
    engine = Engine(pm, env=env, settings=cache)
    engine.options["plugins.block"] = tuple(blocked)
    return engine, resolved


def host_named(argv: Sequence[str]) -> str | None:
    """The host a command line runs for, read before the parser exists: ``--host NAME``,
    ``hook NAME``, or ``pi`` for ``serve`` (its default)."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == "--host" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--host="):
            return word[len("--host="):]
        if word == "hook" and i + 1 < len(words) and not words[i + 1].startswith("-"):
            return words[i + 1]
    return "pi" if "serve" in words else None


def command_options(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the parsed command line gives (the highest level); absent ones are left out."""
    found: dict[str, Any] = {}
    if getattr(args, "max_tokens", None) is not None:
        found["max_tokens"] = args.max_tokens
    if getattr(args, "overflow", None) is not None:
        found["overflow"] = args.overflow
    if (getattr(args, IMPORT_DEST, None) or "").strip():
        found["import"] = import_value(getattr(args, IMPORT_DEST))
    return found


def add_budget_options(parser: argparse.ArgumentParser) -> None:
    """``--max-tokens`` and ``--overflow``: the budget for this run, above every other level."""
    parser.add_argument("--max-tokens", type=_positive_int, default=None, metavar="N",
                        help="the pinned-rule budget in estimated tokens (beats PI_RULES_MAX_TOKENS and the files)")
    parser.add_argument("--overflow", choices=OVERFLOWS, default=None,
                        help="what happens to a pinned rule the budget leaves out: drop (default) or index")


def add_config_command(registry: Any, hosts: Sequence[str]) -> None:
    parser = registry.command("config", "the effective settings and where each value came from", run_config)
    parser.add_argument("--host", default=None, choices=tuple(hosts) or None, metavar="NAME",
                        help=f"apply that host's [hosts.NAME] table ({', '.join(hosts)})")
    add_budget_options(parser)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text!r}")
    return value


# -- pi-rules config ----------------------------------------------------------------------


def run_config(command: Any) -> int:  # a rules_hosts.cli.Command (not imported: no cycle)
    """Every key's effective value with its origin; the files and what was wrong with them.
    Exit 0, as ``list`` (``check`` is the command that fails on errors)."""
    engine, args = command.engine, command.args
    settings = command.settings().settings
    host = args.host
    _, import_errors = importer_selection(settings, host, engine.hooks.importers())
    errors = (*settings.errors, *import_errors, *required_errors(settings, host, engine.pm))
    warnings = host_warnings(settings, engine.hooks.hosts())
    if args.json:
        command.print_json({
            "cwd": command.cwd, "host": host, "trusted": not args.untrusted,
            "settings": {key: _value_json(settings, key, host) for key in KEYS},
            "files": [{"level": s.level, "path": s.path, "state": s.state} for s in settings.states],
            "errors": errors_json(errors), "warnings": warnings_json(warnings),
        })
        return 0
    sys.stdout.write(render_config(settings, host, command.cwd))
    # The lines `check` prints for the same problems (CONTRACT §6).
    for error in errors:
        print(f"{error.kind} {safe_line(_relative(error.path, command.cwd))}: {safe_line(error.message)}")
    for warning in warnings:
        print(f"warning {warning.code} {safe_line(_relative(warning.path, command.cwd))}: {safe_line(warning.message)}")
    return 0


def _relative(path: str, cwd: str) -> str:
    return path[len(cwd) + 1:] if path.startswith(cwd.rstrip("/") + "/") else path


def render_config(settings: Settings, host: str | None, cwd: str) -> str:
    """The settings as TOML a user could paste into a file, each line commented with its
    origin, then the files looked for (commented, so the output stays valid TOML)."""
    rows = []
    for key in KEYS:
        value = settings.value(key, host)
        if key in LIST_KEYS:
            items = settings.items(key, host)
            origin = "; ".join(f"{json.dumps(i)}: {v.origin}" for i, v in items) or "default"
        else:
            origin = value.origin
        rows.append((f"{key} = {_toml(value.value)}", origin))
    width = max(len(left) for left, _ in rows)
    lines = [f"# effective settings for {cwd}" + (f" (host {host})" if host else "")]
    lines += [f"{left.ljust(width)}  # {origin}" for left, origin in rows]
    lines.append("")
    lines += [f"# {s.level} file: {s.shown} ({_STATES.get(s.state, s.state)})" for s in settings.states]
    return "\n".join(safe_line(line) for line in lines) + "\n"


_STATES = {
    "read": "read", "missing": "not found", "error": "has errors, see below",
    "untrusted": "not read: the project is not trusted",
}


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return json.dumps(list(value))
    return json.dumps(value)


def _value_json(settings: Settings, key: str, host: str | None) -> dict[str, Any]:
    value = settings.value(key, host)
    shown = _json_value(value)
    if key in LIST_KEYS:
        shown["items"] = [_json_value(v) for _, v in settings.items(key, host)]
    return shown


def _json_value(value: Value) -> dict[str, Any]:
    return {"value": list(value.value) if isinstance(value.value, tuple) else value.value,
            "level": value.level, "source": value.source or None, "table": value.table or None}


def add_host_option(parser: argparse.ArgumentParser, hosts: tuple[str, ...]) -> None:
    parser.add_argument(
        "--host", default=None, choices=hosts or None, metavar="NAME",
        help=f"evaluate as this host would, leaving out the files its agent reads itself; for an agent "
             f"pi-rules does not drive, preview what it loads by itself ({', '.join(hosts)})",
    )


def add_fact_options(parser: argparse.ArgumentParser, hosts: tuple[str, ...] = ()) -> None:
    parser.add_argument("--touched", action="append", default=[], metavar="PATH")
    parser.add_argument(
        "--shell", action="append", default=[], metavar="COMMAND",
        help="a shell command the agent ran: the paths it touches count as touched (docs/shell.md)",
    )
    parser.add_argument("--prompt", default="", metavar="TEXT")
    parser.add_argument("--model", default=None, metavar="ID")
    branch = parser.add_mutually_exclusive_group()
    branch.add_argument("--branch", default=None, metavar="NAME")
    branch.add_argument("--no-branch", action="store_true", help="no git branch")
    parser.add_argument("--tool", action="append", default=[], metavar="NAME")
    parser.add_argument("--mute", action="append", default=[], metavar="ID")
    add_budget_options(parser)
    add_agent_option(parser)
    add_host_option(parser, hosts)


def add_agent_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent", default="main", metavar="NAME",
        help="the agent asking: main (default), sub, or a sub-agent's name",
    )
