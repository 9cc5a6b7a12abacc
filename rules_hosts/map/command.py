"""``pi-rules map``: build the map once, write it as HTML, JSON or a tree (docs/map.md)."""

from __future__ import annotations

import os
import sys
import webbrowser
from pathlib import Path
from typing import Any

from rules_core.discovery.containment import enclosing_project, write_contained
from rules_core.safe import safe_line

from rules_hosts.map.data import build_map, map_json_text
from rules_hosts.map.html import render_html
from rules_hosts.map.tree import render_tree

DEFAULT_PAGE = "rules-map.html"


def run(command: Any) -> int:
    args = command.args
    directory = os.path.abspath(os.path.join(command.cwd, args.directory)) if args.directory else command.cwd
    if not os.path.isdir(directory):
        print(f"pi-rules map: {safe_line(args.directory)} is not a directory; name a folder of the project",
              file=sys.stderr)
        return 2
    hosts = command.engine.hooks.hosts()
    if args.host is not None and args.host not in hosts:
        print(f"pi-rules map: unknown host {safe_line(args.host)!r}; known: {', '.join(hosts) or 'none'}",
              file=sys.stderr)
        return 2
    if args.depth < 0:
        print("pi-rules map: --depth takes a number of levels, 0 or more", file=sys.stderr)
        return 2
    name = args.format or ("json" if args.json else "html")
    given = getattr(command, "resolved", None)  # the call's settings, when read for this folder
    if given is not None and not given.serves(os.path.abspath(directory), not args.untrusted):
        given = None
    repo = build_map(command.engine, directory, trusted=not args.untrusted, host=args.host, resolved=given)
    if name == "json":
        text = map_json_text(repo)
    elif name == "tree":
        text = render_tree(repo, args.depth)
    else:
        text = render_html(repo, args.depth)
    target = args.output if args.output is not None else (DEFAULT_PAGE if name == "html" else "-")
    if target == "-":
        sys.stdout.write(text)
        return 0
    # Not resolved first: a link the repository ships (rules-map.html -> ~/.ssh/id_ed25519)
    # is refused by the containment check, never followed.
    path = Path(os.path.abspath(os.path.expanduser(target)))
    try:
        write_contained(str(path), text.encode("utf-8"), enclosing_project(str(path.parent)), mode=0o644)
    except OSError as exc:
        print(f"pi-rules map: cannot write {safe_line(str(path))}: {safe_line(exc.strerror or str(exc))}; "
              "choose another file with -o", file=sys.stderr)
        return 2
    print(f"map written to {safe_line(str(path))} ({len(repo.folders)} folders, {len(repo.rules)} rules)")
    if args.open:
        webbrowser.open(path.as_uri())
    return 0
