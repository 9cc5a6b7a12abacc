"""The ``pi-rules`` command line (CONTRACT §3): text for people, ``--json`` for tools."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from .git import current_branch
from .engine import Engine, find_by_id, find_reference, unknown_rule
from .manager import PluginLoadError, list_plugins, make_plugin_manager
from .model import Discovery, Evaluation, Explanation, Facts, Outcome, Rule, RuleError
from .safe import safe_block, safe_json, safe_line, safe_lines
from .imports import IMPORT_ENV, select_importers
from .select import parse_max_tokens
from . import claude_code
from . import serve
from . import mcp_server
from . import stream_cli

FACT_COMMANDS = ("render", "report", "explain")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if "hook" in words:
        # An agent's hook must never be blocked by pi-rules: Claude Code reads exit 2 from
        # a PreToolUse hook as "deny the tool call". Every failure becomes exit 0 + stderr.
        try:
            _main(words)
        except SystemExit:
            pass  # argparse already said what was wrong on stderr
        except Exception as exc:  # noqa: BLE001 - reported, never raised into the agent
            print(f"pi-rules hook: {type(exc).__name__}: {safe_line(str(exc))}", file=sys.stderr)
        return 0
    return _main(words)


def _main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    blocked = []
    for value in args.plugin_options:
        if not value.startswith("no:") or not value[3:]:
            parser.error(f"-p takes no:NAME to block a plugin, got {value!r}")
        blocked.append(value[3:])
    try:
        pm = make_plugin_manager(blocked, env=os.environ)
    except PluginLoadError as exc:
        print(f"pi-rules: {safe_line(str(exc))}", file=sys.stderr)
        return 2
    engine = Engine(pm, env=os.environ)
    cwd = os.path.abspath(args.cwd)
    if not os.path.isdir(cwd):
        print(f"pi-rules: --cwd {safe_line(args.cwd)} is not a directory", file=sys.stderr)
        return 2
    try:
        return _COMMANDS[args.command](engine, args, cwd)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for a user; say what to report
        print(f"pi-rules: internal error: {type(exc).__name__}: {safe_line(str(exc))}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-rules", description="Discover, check, match and render project rules."
    )
    parser.add_argument("--cwd", default=".", help="project working directory (default: .)")
    parser.add_argument("--untrusted", action="store_true", help="read no project rules")
    parser.add_argument(
        "-p", dest="plugin_options", action="append", default=[], metavar="no:NAME",
        help="block the plugin NAME (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="every discovered rule and every error")
    commands.add_parser("check", help="one line per error; exit 1 if any")
    explain = commands.add_parser("explain", help="which rules PATH would activate, and why")
    explain.add_argument("path", metavar="PATH")
    show = commands.add_parser("show", help="one rule in full")
    show.add_argument("id", metavar="ID")
    read = commands.add_parser("read", help="what the read_rule tool returns for REL")
    read.add_argument("name", metavar="REL")
    _add_agent(read)
    for name, text in (("render", "the system-prompt section"), ("report", "the /rules report")):
        _add_facts(commands.add_parser(name, help=text))
    _add_facts(explain)
    commands.add_parser("plugins", help="registered plugins and the hooks they implement")
    hook = commands.add_parser("hook", help="run as an agent's hook command (reads one payload on stdin)")
    hook.add_argument("host", choices=["claude-code"], help="the agent whose hook payload stdin carries")
    hook.add_argument("--print-config", action="store_true", help="print the settings snippet that installs the hooks")
    serve.add_parser(commands)
    mcp_server.add_parser(commands)
    stream_cli.add_parser(commands)
    return parser


def _add_facts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--touched", action="append", default=[], metavar="PATH")
    parser.add_argument("--prompt", default="", metavar="TEXT")
    parser.add_argument("--model", default=None, metavar="ID")
    branch = parser.add_mutually_exclusive_group()
    branch.add_argument("--branch", default=None, metavar="NAME")
    branch.add_argument("--no-branch", action="store_true", help="no git branch")
    parser.add_argument("--tool", action="append", default=[], metavar="NAME")
    parser.add_argument("--mute", action="append", default=[], metavar="ID")
    _add_agent(parser)


def _add_agent(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent", default="main", metavar="NAME",
        help="the agent asking: main (default), sub, or a sub-agent's name",
    )


def _facts(args: argparse.Namespace, cwd: str) -> Facts:
    if args.no_branch:
        branch = None
    elif args.branch is not None:
        branch = args.branch
    else:
        branch = current_branch(cwd)
    return Facts(
        cwd=cwd,
        trusted=not args.untrusted,
        touched=tuple(args.touched),
        prompt=args.prompt,
        model=args.model,
        branch=branch,
        tools=tuple(args.tool),
        mutes=frozenset(args.mute),
        agent=args.agent,
        max_tokens=parse_max_tokens(os.environ.get("PI_RULES_MAX_TOKENS")),
    )


def _render(engine: Engine, kind: str, data: dict[str, Any]) -> str:
    text = engine.hooks.render(kind, data)
    if text is None:
        raise RuntimeError(f"no plugin renders {kind!r} (is the report plugin blocked?)")
    return text


def _cmd_list(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    discovery = engine.discover(cwd, not args.untrusted)
    if args.json:
        _print_json({"rules": [rule_json(r) for r in discovery.rules], "errors": errors_json(discovery.errors)})
    else:
        sys.stdout.write(_render(engine, "list", {"discovery": discovery, "cwd": cwd}))
    return 0


def _cmd_check(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    discovery = engine.discover(cwd, not args.untrusted)
    if args.json:
        _print_json({"errors": errors_json(discovery.errors)})
    else:
        sys.stdout.write(_render(engine, "check", {"discovery": discovery, "cwd": cwd}))
    return 1 if discovery.errors else 0


def _cmd_explain(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    explanation = engine.explain(_facts(args, cwd), args.path)
    if args.json:
        _print_json(explanation_json(explanation))
    else:
        sys.stdout.write(_render(engine, "explain", {"explanation": explanation, "cwd": cwd}))
    return 0


def _cmd_show(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    rule = find_by_id(engine.discover(cwd, not args.untrusted).rules, args.id)
    if rule is None:
        return _unknown(f"Unknown rule: {safe_line(args.id)}", args.json)
    if args.json:
        _print_json(rule_json(rule) | {"conditions": conditions_json(rule), "body": rule.body})
    else:
        sys.stdout.write(_render(engine, "show", {"rule": rule, "cwd": cwd}))
    return 0


def _cmd_read(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    facts = Facts(cwd=cwd, trusted=not args.untrusted, agent=args.agent)
    rules = engine.reachable(engine.discover(cwd, not args.untrusted).rules, facts)
    rule = find_reference(rules, args.name)
    if rule is None:
        return _unknown(unknown_rule(rules, args.name), args.json)
    if args.json:
        _print_json({"name": args.name, "content": rule.body})
    else:
        sys.stdout.write(safe_block(rule.body) + "\n")
    return 0


def _cmd_render(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    evaluation = engine.evaluate(_facts(args, cwd))
    if args.json:
        _print_json(evaluation_json(evaluation))
    else:
        sys.stdout.write(safe_block(evaluation.section))
    return 0


def _cmd_report(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    evaluation = engine.evaluate(_facts(args, cwd))
    if args.json:
        _print_json(evaluation_json(evaluation))
    else:
        sys.stdout.write(_render(engine, "report", {"evaluation": evaluation, "cwd": cwd}))
    return 0


def _cmd_plugins(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    infos = list_plugins(engine.pm)
    importers = engine.hooks.importers()
    enabled, _ = select_importers(os.environ.get(IMPORT_ENV), importers)
    if args.json:
        _print_json({
            "plugins": [{"name": i.name, "origin": i.origin, "hooks": list(i.hooks)} for i in infos],
            "importers": [
                {"name": i.name, "default": i.default, "enabled": i.name in enabled, "summary": i.summary}
                for i in importers
            ],
        })
        return 0
    width = max((len(i.name) for i in infos), default=0)
    origin_width = max((len(i.origin) for i in infos), default=0)
    for info in infos:
        hooks = ", ".join(info.hooks)
        print(f"{safe_line(info.name).ljust(width)}  {safe_line(info.origin).ljust(origin_width)}  {hooks}")
    if importers:
        print(f"\nimporters ({IMPORT_ENV}={os.environ.get(IMPORT_ENV, '')!r}):")
        name_width = max(len(i.name) for i in importers)
        for importer in importers:
            state = "enabled" if importer.name in enabled else "disabled"
            default = "on by default" if importer.default else "off by default"
            print(f"  {safe_line(importer.name).ljust(name_width)}  {state:<8}  {default:<14}  {safe_line(importer.summary)}")
    return 0


_COMMANDS = {
    "list": _cmd_list,
    "check": _cmd_check,
    "explain": _cmd_explain,
    "show": _cmd_show,
    "read": _cmd_read,
    "render": _cmd_render,
    "report": _cmd_report,
    "plugins": _cmd_plugins,
    "hook": claude_code.run_cli,
    "serve": serve.run,
    "mcp": mcp_server.run,
    "stream": stream_cli.run,
}


def _unknown(text: str, as_json: bool) -> int:
    """A refusal: the ``Unknown rule: …`` text, or under ``--json`` (whose output must
    always parse) ``{"error": text}``; exit 1 either way."""
    if as_json:
        _print_json({"error": text})
    else:
        print(safe_lines(text))
    return 1


def _print_json(value: Any) -> None:
    sys.stdout.write(safe_json(value) + "\n")


# -- JSON shapes (CONTRACT §3) ---------------------------------------------------------


def rule_json(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "relativePath": rule.relative_path,
        "path": rule.file.path,
        "source": rule.source,
        "plugin": rule.file.plugin,
        "description": rule.description,
        "load": rule.load,
        "priority": rule.priority,
        "enforcement": rule.enforcement,
    }


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    return rule_json(outcome.rule) | {
        "status": outcome.status,
        "reasons": list(outcome.reasons),
        "cause": outcome.cause,
        "tokens": outcome.tokens,
    }


def errors_json(errors: Sequence[RuleError]) -> list[dict[str, str]]:
    return [{"kind": e.kind, "path": e.path, "message": e.message} for e in errors]


def evaluation_json(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "rules": [outcome_json(o) for o in evaluation.outcomes],
        "errors": errors_json(evaluation.errors),
        "budget": {"used": evaluation.budget_used, "limit": evaluation.facts.max_tokens},
        "section": evaluation.section,
        "sectionTokens": evaluation.section_tokens,
    }


def explanation_json(explanation: Explanation) -> dict[str, Any]:
    return {
        "path": explanation.path,
        "rules": [
            {"id": e.rule.id, "verdict": e.verdict, "reasons": list(e.reasons), "caveats": list(e.caveats)}
            for e in explanation.entries
        ],
        "errors": errors_json(explanation.errors),
    }


def conditions_json(rule: Rule) -> dict[str, Any]:
    return {
        "globs": list(rule.globs),
        "match": rule.match,
        "tools": list(rule.tools),
        "model": rule.model,
        "branch": rule.branch,
        "keywords": list(rule.keywords),
        "alwaysApply": rule.always_apply,
    }
