"""``pi-rules export`` (CONTRACT §7): the command around plan and write."""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

from rules_core.model import Rule
from rules_core.safe import safe_json, safe_line

from .plan import TARGETS, Plan, make_plan
from .write import Outcome, apply, compare

NATIVE = ("native", "nested")  # the project's own .pi/rules (its folder and the folders below)
USAGE = 2


def run_export(command: Any) -> int:
    args, engine, cwd = command.args, command.engine, command.cwd
    if args.untrusted:
        # An untrusted project's rules are not read: exporting "nothing" would remove every file.
        print("pi-rules export: the project is not trusted, so its rules are not read and there is nothing to "
              "export; run it without --untrusted", file=sys.stderr)
        return USAGE
    resolved = command.settings()  # the call's settings, read once at its entry
    targets, problem = _targets(args.to, resolved.settings.items("export.to"))
    if problem:
        print(f"pi-rules export: {problem}", file=sys.stderr)
        return USAGE
    importers = {info.name for info in engine.hooks.importers()}
    if args.source is not None and args.source not in importers:
        print(f"pi-rules export: --from {safe_line(args.source)}: no such importer; choose one of "
              f"{', '.join(sorted(importers))}", file=sys.stderr)
        return USAGE
    discovery = engine.discover(cwd, True, resolved=resolved)
    plugins = (args.source,) if args.source is not None else NATIVE
    rules = [rule for rule in discovery.rules if rule.file.plugin in plugins and rule.source == "project"]
    for error in discovery.errors:
        if error.plugin in plugins or (args.source is None and error.plugin in ("schema-v1", "settings")):
            print(f"pi-rules export: warning: {safe_line(error.path)}: {error.kind}: {safe_line(error.message)} "
                  "(that file is not exported)", file=sys.stderr)
    out = os.path.abspath(os.path.join(cwd, args.out)) if args.out else cwd
    plan = make_plan(rules, targets, cwd, args.lossy, lambda rule: _is_stream(engine, rule))
    plan.broken = {os.path.relpath(error.path, cwd).replace(os.sep, "/") for error in discovery.errors}
    outcome, changes = compare(plan, out)
    if not (args.check or args.dry_run):
        apply(out, changes, outcome)
    _print(command, plan, outcome, out)
    if outcome.refused:
        return 1
    return 1 if args.check and (outcome.written or outcome.removed) else 0


def _targets(given: Sequence[str] | None, setting: Sequence[tuple[str, Any]]) -> tuple[list[str], str]:
    """The targets named by --to (comma lists, repeatable) or else by ``[export] to``
    (``setting``: each item with the settings value that listed it)."""
    if given is not None:
        names, where = [n.strip() for item in given for n in item.split(",") if n.strip()], {}
    else:
        names, where = [name for name, _ in setting], {name: value.source or value.level for name, value in setting}
    if not names:
        return [], ("name the targets with --to TARGET[,TARGET…] or [export] to = [...] in .pi/rules.toml; "
                    f"targets: {', '.join(TARGETS)}")
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        said = f"[export] to in {where[unknown[0]]}" if where else "--to"
        return [], f"{said}: unknown target {safe_line(unknown[0])!r}; targets: {', '.join(TARGETS)}"
    return list(dict.fromkeys(names)), ""


def _is_stream(engine: Any, rule: Rule) -> bool:
    return engine.hooks.stream_spec(rule) is not None


def _print(command: Any, plan: Plan, outcome: Outcome, out: str) -> None:
    args = command.args
    skipped = [*plan.skipped, *outcome.refused]
    if args.json:
        absolute = lambda paths: [os.path.join(out, p) for p in paths]  # noqa: E731
        command.print_json({
            "written": absolute(outcome.written), "unchanged": absolute(outcome.unchanged),
            "removed": absolute(outcome.removed),
            "skipped": [{"rule": s.rule, "target": s.target, "reason": s.reason} for s in skipped],
        })
    elif args.check:
        sys.stdout.write("".join(outcome.diffs))
    else:
        verb = "would write" if args.dry_run else "wrote"
        gone = "would remove" if args.dry_run else "removed"
        lines = [f"{verb} {p}" for p in outcome.written] + [f"{gone} {p} (its rule is gone)" for p in outcome.removed]
        lines.append(f"{len(outcome.unchanged)} file(s) unchanged")
        sys.stdout.write("".join(safe_line(line) + "\n" for line in lines))
    for warning in plan.warnings:
        print(f"pi-rules export: note: {safe_line(warning)}", file=sys.stderr)
    for skip in plan.skipped:
        print(f"pi-rules export: warning: rule {safe_line(skip.rule)} → {skip.target}: {safe_line(skip.reason)}",
              file=sys.stderr)
    for skip in outcome.refused:
        print(f"pi-rules export: refused: {safe_line(skip.reason)}", file=sys.stderr)
