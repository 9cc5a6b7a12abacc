"""``pi-rules stats``: find the journals, fold them, print or write the report."""

from __future__ import annotations

import os
import sys
from typing import Any

from rules_core.safe import safe_json

from .read import claude_code_journals, collect
from .report import render_html, render_text, stats_json

DEFAULT_HTML = "pi-rules-stats.html"


def run(command: Any) -> int:
    args = command.args
    if args.since < 1:
        print("pi-rules stats: --since takes a whole number of days, at least 1", file=sys.stderr)
        return 1
    missing = [path for path in [*args.journal, *args.eval_results] if not os.path.isfile(path)]
    if missing:
        print(f"pi-rules stats: no such journal {missing[0]}; give a file `pi-rules serve --session` or `pi-rules eval --results` wrote",
              file=sys.stderr)
        return 1
    cwd = os.path.abspath(command.cwd)
    journals = [("claude-code", p) for p in claude_code_journals(os.environ)]
    named = [os.path.abspath(p) for p in args.journal]
    journals += [("serve", p) for p in named]
    stats = collect(journals, None if args.all_projects else cwd, args.since, named=named)
    rules = command.engine.discover(cwd, not args.untrusted).rules
    data = stats_json(stats, rules, _violations(args.eval_results) if args.eval_results else None)
    name = args.format or ("json" if args.json else "text")
    text = safe_json(data) + "\n" if name == "json" else render_html(data) if name == "html" else render_text(data)
    output = args.output or (DEFAULT_HTML if name == "html" else "-")
    if output == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(output, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        print(f"pi-rules stats: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {output}", file=sys.stderr)
    return 0


def _violations(paths: list[str]) -> dict[str, int]:
    """Per rule, the "with" runs of ``pi-rules eval --results`` files that failed their
    checks although the agent ran (the rule was there, and still not obeyed)."""
    from rules_hosts.eval.run import read_results

    found: dict[str, int] = {}
    for path in paths:
        for record in read_results(path).values():
            if record.get("arm") == "with" and record.get("passed") is False and record.get("error") is None:
                rule = record.get("rule")
                if isinstance(rule, str):
                    found[rule] = found.get(rule, 0) + 1
    return found
