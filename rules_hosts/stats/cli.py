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
    missing = [path for path in args.journal if not os.path.isfile(path)]
    if missing:
        print(f"pi-rules stats: no such journal {missing[0]}; give the file `pi-rules serve --session` wrote",
              file=sys.stderr)
        return 1
    cwd = os.path.abspath(command.cwd)
    journals = [("claude-code", p) for p in claude_code_journals(os.environ)]
    journals += [("serve", os.path.abspath(p)) for p in args.journal]
    stats = collect(journals, None if args.all_projects else cwd, args.since)
    rules = command.engine.discover(cwd, not args.untrusted).rules
    data = stats_json(stats, rules)
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
