"""The ``pi-rules`` command line (CONTRACT §3): text for people, ``--json`` for tools.

The app owns the global options and the library's own commands (``list``, ``check``,
``explain``, ``show``, ``read``, ``render``, ``report``, ``plugins``, ``init``; the global
options and their conventions live in ``cli_options``). Hosts add theirs
through ``pi_rules_cli_commands`` — ``serve``, ``mcp``, ``stream`` and ``hook
claude-code`` are plugins like any third party's — and import their heavy modules only
when run, so a command pays for what it uses.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from rules_core.engine.core import Engine
from rules_core.lint.check import evaluate_with_setup_warnings, lint, with_warnings
from rules_core.lookup import find_by_id
from rules_core.plugins.manager import PluginLoadError, list_plugins
from rules_core.model import Facts
from rules_core.safe import safe_block, safe_json, safe_line, safe_lines
from rules_core.settings.apply import importer_selection
from rules_core.settings.resolved import Resolved

from rules_hosts.cli.options import global_parser, print_version, share_global_options
from rules_hosts.cli.config import (
    add_agent_option,
    add_config_command,
    add_fact_options,
    add_host_option,
    command_options,
    configured_engine,
)
from rules_hosts.session.facts import LIVE, host_facts, shell_paths
from rules_hosts.cli.init import run_init
from rules_hosts.cli.notes import outside_project
from rules_hosts.shapes import (
    catalogue_json,
    conditions_json,
    errors_json,
    evaluation_json,
    explanation_json,
    rule_json,
    warnings_json,
)
from rules_hosts.previews.plugin import PREVIEWS

# configured_engine's: (cwd, trusted, blocked plugins, argv, environment) → the engine, the call's settings.
EngineFactory = Callable[[str, bool, Sequence[str], Sequence[str], Mapping[str, str]], tuple[Engine, Resolved]]

CHECK_FORMATS = ("text", "json")  # the command's own; plugins add more


@dataclass
class Command:
    """What a command's ``run`` gets: the engine, the parsed arguments, the project."""

    engine: Engine
    args: argparse.Namespace
    cwd: str
    resolved: Resolved | None = None  # the call's settings, read once at its entry (``_main``)

    def settings(self) -> Resolved:
        """The call's settings for the parsed ``--host`` (the files are not read again)."""
        trusted, given = not getattr(self.args, "untrusted", False), self.resolved
        if given is None or not given.serves(self.cwd, trusted):
            given = self.engine.resolve(self.cwd, trusted)
        return given.for_host(getattr(self.args, "host", None))

    def print_json(self, value: Any) -> None:
        sys.stdout.write(safe_json(value) + "\n")

    def render(self, kind: str, data: Mapping[str, Any]) -> str:
        text = self.engine.hooks.render(kind, {**data, "cwd": self.cwd})
        if text is None:
            raise RuntimeError(f"no plugin renders {kind!r} (is the report plugin blocked?)")
        return text

    def facts(self) -> Facts:
        """The facts the command's options give (``render``, ``report``, ``explain``)."""
        args = self.args
        branch = None if args.no_branch else args.branch if args.branch is not None else LIVE
        return host_facts(
            self.cwd, env=self.engine.env, trusted=not args.untrusted, touched=args.touched,
            prompt=args.prompt, model=args.model, branch=branch, tools=args.tool, mutes=args.mute,
            agent=args.agent, host=args.host, settings=self.settings(),
            shell_touched=shell_paths(self.engine.hooks, args.host, getattr(args, "shell", ())),
        )


Run = Callable[[Command], int]


class Commands:
    """The registry ``pi_rules_cli_commands`` receives."""

    def __init__(self, commands: Any, hooks: Any) -> None:
        self._commands = commands
        self._hooks = hooks

    def command(self, name: str, help: str, run: Run) -> argparse.ArgumentParser:
        """``pi-rules NAME``: returns the parser to add arguments to."""
        parser = self._commands.add_parser(name, help=help)
        parser.set_defaults(run=run)
        return parser

    def hook(self, host: str, help: str, run: Run) -> argparse.ArgumentParser:
        """``pi-rules hook HOST``: an agent's hook command (always exits 0)."""
        parser = self._hooks.add_parser(host, help=help)
        parser.set_defaults(run=run)
        return parser


def main(argv: Sequence[str] | None = None, make_engine: EngineFactory = configured_engine) -> int:
    """Run one command line. ``make_engine`` builds the engine (the hook server passes
    one that keeps its engines between calls)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if "hook" in words and "--install" not in words and "--uninstall" not in words:
        # An agent's hook must never be blocked by pi-rules: Claude Code reads exit 2 from
        # a PreToolUse hook as "deny the tool call". Every failure becomes exit 0 + stderr.
        # (--install/--uninstall are a person's command: a refusal must fail the shell.)
        try:
            _main(words, make_engine)
        except SystemExit:
            pass  # argparse already said what was wrong on stderr
        except Exception as exc:  # noqa: BLE001 - reported, never raised into the agent
            print(f"pi-rules hook: {type(exc).__name__}: {safe_line(str(exc))}", file=sys.stderr)
        return 0
    return _main(words, make_engine)


def _main(argv: Sequence[str], make_engine: EngineFactory) -> int:
    # The plugins decide which commands exist, and -p decides which plugins load: read
    # the global options first, then build the whole parser.
    known, _ = global_parser(add_help=False).parse_known_args(argv)
    if known.version:  # before any plugin loads, so a broken plugin cannot hide it
        print_version(argv)
        return 0
    blocked = []
    for value in known.plugin_options:
        if not value.startswith("no:") or not value[3:]:
            global_parser().error(f"-p takes no:NAME to block a plugin, got {value!r}")
        blocked.append(value[3:])
    untrusted, trust = _trust(known)
    try:  # the settings files' [plugins] block applies here too, before any plugin loads
        engine, resolved = make_engine(known.cwd, not untrusted, blocked, argv, os.environ)
    except PluginLoadError as exc:
        print(f"pi-rules: {safe_line(str(exc))}", file=sys.stderr)
        return 2
    parser = _parser(engine)
    args = parser.parse_args(argv)
    if args.command is None:
        # Bare `pi-rules` is a person asking what it does (as bare `git` is): help, exit 0.
        # Options without a command are a mistake, so a script that lost its command fails.
        if argv:
            parser.error("a command is required")
        parser.print_help()
        return 0
    args.plugin_options = known.plugin_options  # a -p after the command replaced the list
    args.untrusted, args.trust_decision = untrusted, trust
    engine.options.update(command_options(args))  # the command line's settings: the highest level
    cwd = os.path.abspath(args.cwd)
    if not os.path.isdir(cwd):
        print(f"pi-rules: --cwd {safe_line(args.cwd)} is not a directory", file=sys.stderr)
        return 2
    try:
        return args.run(Command(engine, args, cwd, resolved.with_options(engine.options)))
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for a user; say what to report
        print(f"pi-rules: internal error: {type(exc).__name__}: {safe_line(str(exc))}", file=sys.stderr)
        return 2


def _trust(known: argparse.Namespace) -> tuple[bool, Any]:
    """Whether the run is untrusted, and the trust store's decision when ``--trust-store``
    asked for one (``--untrusted`` wins: the host already decided)."""
    if known.untrusted or not known.trust_store:
        return bool(known.untrusted), None
    from rules_hosts.session.trust import trust_decision  # only the hosts that ask pay for it

    decision = trust_decision(os.path.abspath(known.cwd), os.environ)
    if decision.problem is not None:
        print(f"pi-rules: {safe_line(decision.problem)}; reading no project rules", file=sys.stderr)
    return not decision.trusted, decision


def _parser(engine: Engine) -> argparse.ArgumentParser:
    parser = global_parser()
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    registry = Commands(commands, None)
    registry.command("list", "every discovered rule and every error", _cmd_list)
    check = registry.command("check", "one line per error, then warnings; exit 1 on errors", _cmd_check)
    formats = (*CHECK_FORMATS, *engine.hooks.output_formats("check"))
    check.add_argument(
        "--format", choices=formats, default=None,
        help="output format (default: text, or json with --json)",
    )
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings too, not only on errors")
    explain = registry.command("explain", "which rules PATH would activate, and why", _cmd_explain)
    explain.add_argument("path", metavar="PATH")
    show = registry.command("show", "one rule in full", _cmd_show)
    show.add_argument("id", metavar="ID")
    read = registry.command("read", "what the read_rule tool returns for REL", _cmd_read)
    read.add_argument("name", metavar="REL")
    add_agent_option(read)
    hosts = tuple(engine.hooks.hosts())
    add_host_option(read, hosts)
    add_fact_options(registry.command("render", "the system-prompt section", _cmd_render), hosts)
    add_fact_options(registry.command("report", "the /rules report", _cmd_report), hosts)
    add_fact_options(explain, hosts)
    registry.command("plugins", "registered plugins and the hooks they implement", _cmd_plugins)
    registry.command("init", "create .pi/rules/ with an example rule and a commented .pi/rules.toml", run_init)
    add_config_command(registry, hosts)
    hook = commands.add_parser("hook", help="run as an agent's hook command (reads one payload on stdin)")
    hosts = hook.add_subparsers(dest="host", required=True, metavar="HOST")
    _, faults = engine.hooks.call("pi_rules_cli_commands", commands=Commands(commands, hosts))
    for name, exc in faults:
        print(f"pi-rules: plugin {name!r} failed to add its commands ({type(exc).__name__}: "
              f"{safe_line(str(exc))}); block it with -p no:{name}", file=sys.stderr)
    share_global_options(parser)  # last, so the plugins' commands get them too
    return parser


def _cmd_list(command: Command) -> int:
    discovery = command.engine.discover(command.cwd, not command.args.untrusted, resolved=command.settings())
    if command.args.json:
        rules = [rule_json(r) | {"conditions": conditions_json(r)} for r in discovery.rules]
        command.print_json({"rules": rules, "errors": errors_json(discovery.errors)})
    else:
        sys.stdout.write(command.render("list", {"discovery": discovery}))
    return 0


def _cmd_check(command: Command) -> int:
    trusted = not command.args.untrusted
    settings = command.settings().for_host(None)
    discovery = command.engine.discover(command.cwd, trusted, resolved=settings)
    # The linters' warnings join discovery's own; the codes [lint] ignore lists are dropped.
    warnings = lint(command.engine, discovery, cwd=command.cwd, trusted=trusted,
                    max_tokens=settings.max_tokens, ignore=settings.lint_ignore, resolved=settings)
    discovery = with_warnings(discovery, warnings)
    name = command.args.format or ("json" if command.args.json else "text")
    if name == "json":
        command.print_json({"errors": errors_json(discovery.errors), "warnings": warnings_json(discovery.warnings)})
    elif name == "text":
        sys.stdout.write(command.render("check", {"discovery": discovery}))
    else:
        output = command.engine.hooks.output_formats("check")[name]
        git_root = command.engine.discovery.git_root(command.cwd) if trusted else None
        sys.stdout.write(output.render({"discovery": discovery, "cwd": command.cwd, "git_root": git_root,
                                        "env": command.engine.env}))
    return 1 if discovery.errors or (command.args.strict and discovery.warnings) else 0


def _cmd_explain(command: Command) -> int:
    explanation = command.engine.explain(command.facts(), command.args.path, command.settings())
    outside = outside_project(command.engine, command.cwd, not command.args.untrusted, command.args.path)
    if command.args.json:
        command.print_json(explanation_json(explanation) | ({"outsideProject": outside} if outside else {}))
    else:
        if outside:
            print(f"pi-rules explain: note: {outside}", file=sys.stderr)
        sys.stdout.write(command.render("explain", {"explanation": explanation}))
    return 0


def _cmd_show(command: Command) -> int:
    rule = find_by_id(command.engine.discover(command.cwd, not command.args.untrusted,
                                              resolved=command.settings()).rules, command.args.id)
    if rule is None:
        return _unknown(command, f"Unknown rule: {safe_line(command.args.id)}")
    if command.args.json:
        from rules_plugins.report import rule_folder  # the text show's folder line, as a key

        folder = rule_folder(rule, command.cwd)
        command.print_json(rule_json(rule) | ({"folder": folder} if folder is not None else {})
                           | {"conditions": conditions_json(rule), "body": rule.body})
    else:
        sys.stdout.write(command.render("show", {"rule": rule}))
    return 0


def _cmd_read(command: Command) -> int:
    facts = Facts(cwd=command.cwd, trusted=not command.args.untrusted, agent=command.args.agent,
                  host=command.args.host)
    reading = command.engine.read_rule(facts, command.args.name, resolved=command.settings())
    if reading.rule is None:
        return _unknown(command, reading.refusal or "")
    if command.args.json:
        shared = {"shared": [r.id for r in reading.shared]} if reading.shared else {}
        command.print_json({"name": command.args.name, "content": reading.rule.body} | shared)
    else:
        sys.stdout.write(safe_block(reading.rule.body) + "\n")
        if reading.note:
            print(reading.note, file=sys.stderr)
    return 0


def _cmd_render(command: Command) -> int:
    if command.args.host in PREVIEWS:  # an agent pi-rules does not drive: what it loads by itself
        return _preview(command, "render")
    evaluation = evaluate_with_setup_warnings(command.engine, command.facts(), command.settings())
    if command.args.json:
        command.print_json(evaluation_json(evaluation))
    else:
        sys.stdout.write(safe_block(evaluation.section))
    return 0


def _cmd_report(command: Command) -> int:
    if command.args.host in PREVIEWS:
        return _preview(command, "report")
    evaluation = evaluate_with_setup_warnings(command.engine, command.facts(), command.settings())
    catalogue = catalogue_json(evaluation, command.engine.hooks)
    if command.args.json:
        command.print_json({**evaluation_json(evaluation), "shellTouched": list(evaluation.facts.shell_touched),
                            "catalogue": catalogue})
    else:
        sys.stdout.write(command.render("report", {"evaluation": evaluation, "catalogue": catalogue}))
    return 0


def _preview(command: Command, kind: str) -> int:
    from rules_hosts.previews.output import run_preview  # only a preview pays for the agents' profiles

    return run_preview(command, kind)


def _cmd_plugins(command: Command) -> int:
    engine, resolved = command.engine, command.settings().for_host(None)
    infos = list_plugins(engine.pm)
    importers = engine.hooks.importers()
    enabled, _ = importer_selection(resolved.settings, None, importers)  # from the value read, as before
    from rules_plugins.packs import registered_packs  # only this command shows pack folders

    packs = registered_packs(engine.pm.list_name_plugin())
    if command.args.json:
        command.print_json({
            "plugins": [{"name": i.name, "origin": i.origin, "hooks": list(i.hooks)} for i in infos],
            "packs": [{"name": p.name, "entryPoint": p.value, "folder": p.folder or None, "error": p.problem or None}
                      for p in packs],
            "importers": [
                {"name": i.name, "default": i.default, "enabled": i.name in enabled, "summary": i.summary}
                for i in importers
            ],
            "hosts": [{"name": h.name, "summary": h.summary} for h in engine.hooks.hosts().values()],
        })
        return 0
    width = max((len(i.name) for i in infos), default=0)
    origin_width = max((len(i.origin) for i in infos), default=0)
    for info in infos:
        hooks = ", ".join(info.hooks)
        print(f"{safe_line(info.name).ljust(width)}  {safe_line(info.origin).ljust(origin_width)}  {hooks}")
    if importers:
        chosen = resolved.settings.value("import")
        print(f"\nimporters (import: {safe_line(str(chosen.value))} from {safe_line(chosen.origin)}):")
        name_width = max(len(i.name) for i in importers)
        for importer in importers:
            state = "enabled" if importer.name in enabled else "disabled"
            default = "on by default" if importer.default else "off by default"
            print(f"  {safe_line(importer.name).ljust(name_width)}  {state:<8}  {default:<14}  {safe_line(importer.summary)}")
    hosts = engine.hooks.hosts()
    if hosts:
        print("\nhosts (--host NAME leaves out what that host's agent reads itself; "
              "a preview shows what its agent loads by itself):")
        host_width = max(len(name) for name in hosts)
        for name, host in hosts.items():
            print(f"  {safe_line(name).ljust(host_width)}  {safe_line(host.summary)}")
    if packs:
        print("\nrule packs (entry points in pi_rules.rules; docs/packs.md):")
        pack_width = max(len(p.name) for p in packs)
        for pack in packs:
            where = pack.folder or f"error: {pack.problem}"
            print(f"  {safe_line(pack.name).ljust(pack_width)}  {safe_line(pack.value)}  {safe_line(where)}")
    return 0


def _unknown(command: Command, text: str) -> int:
    """A refusal: the ``Unknown rule: …`` text, or under ``--json`` (whose output must
    always parse) ``{"error": text}``; exit 1 either way."""
    if command.args.json:
        command.print_json({"error": text})
    else:
        print(safe_lines(text))
    return 1
