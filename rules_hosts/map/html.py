"""``pi-rules map`` as one self-contained HTML page (docs/map.md).

The page is a single file: inline CSS and JavaScript (``map_page``), no framework, no
network, so it opens from ``file://`` and can be attached to a wiki. The map's data is
embedded as JSON in a ``<script type="application/json">`` element and rendered with
``textContent`` only: repository text never becomes markup. Before embedding, control and
invisible characters are shown as escapes (``rules_core.safe``), so a hidden instruction
in a rule body is visible on the page, and ``<``, ``>`` and ``&`` are JSON-escaped so no
body can close the script element.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rules_core.safe import safe_block, safe_line

from rules_hosts.map.data import Folder, FolderRule, RepoMap
from rules_hosts.map.page import SCRIPT, STYLE

_JSON_IN_HTML = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026",
                 0x2028: "\\u2028", 0x2029: "\\u2029"}


def render_html(repo: RepoMap, depth: int) -> str:
    data = json.dumps(page_data(repo, depth), ensure_ascii=False, separators=(",", ":")).translate(_JSON_IN_HTML)
    title = _escape(f"Rules map — {os.path.basename(repo.cwd) or repo.cwd}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # No request may leave the page: everything it needs is in this file.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<script id=\"map-data\" type=\"application/json\">{data}</script>\n"
        "<noscript>This page draws the map with JavaScript; `pi-rules map --format tree` prints it "
        "in a terminal.</noscript>\n"
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


def page_data(repo: RepoMap, depth: int) -> dict[str, Any]:
    """The map in the page's compact form: folder rows refer to rules by index."""
    index = {r.id: n for n, r in enumerate(repo.rules)}
    everywhere = _everywhere(repo)
    return {
        # A shared page names no folder of the machine that made it (issue 34): the project
        # by its name, rules by project-relative paths (docs/map.md, "Paths").
        "cwd": safe_line(_project_name(repo)),
        "name": safe_line(os.path.basename(repo.cwd) or repo.cwd),
        "host": safe_line(repo.host) if repo.host else None,
        "budget": repo.budget,
        "depth": depth,
        "truncated": repo.truncated,
        "rules": [
            {
                "id": safe_line(r.id), "format": safe_line(r.format), "plugin": safe_line(r.plugin),
                "rel": safe_line(r.relative_path), "path": safe_line(_shown(repo, r.path)), "source": r.source,
                "desc": safe_line(r.description), "load": r.load, "tokens": r.tokens, "stream": r.stream,
                "cond": _conditions(r.conditions), "body": safe_block(r.body),
            }
            for r in repo.rules
        ],
        # Rules active in every folder for the same reason are listed once; a folder row
        # lists only its other entries, and ``[rule]`` alone for an everywhere rule it lacks.
        "everywhere": [[index[e.id], e.kind, e.status, safe_line(e.reason)] for e in everywhere.values()],
        # [path, depth, files, sampled, tokens, overflow, [[rule, kind, status, reason], ...]]
        "folders": [
            [safe_line(f.path), f.depth, f.files, f.sampled, f.tokens, f.overflow, _own(f, everywhere, index)]
            for f in repo.folders
        ],
        "dead": [index[i] for i in repo.dead if i in index],
        "partlyDead": [index[i] for i in repo.partly_dead if i in index],
        "duplicates": [[index[i] for i in group if i in index] for group in repo.duplicates],
        "conditional": [index[i] for i in repo.conditional if i in index],
        "errors": [{k: safe_line(_shown(repo, v) if k == "path" else v) for k, v in e.items()} for e in repo.errors],
    }


def _project_name(repo: RepoMap) -> str:
    """The mapped folder as the project's name and the folder's path in it (``repo/packages/app``)."""
    root = repo.root if repo.root and repo.cwd.startswith(repo.root.rstrip(os.sep) + os.sep) else None
    if root is None:
        return os.path.basename(repo.cwd) or repo.cwd
    return (os.path.basename(root) or root) + "/" + os.path.relpath(repo.cwd, root).replace(os.sep, "/")


def _shown(repo: RepoMap, path: str) -> str:
    """``path`` relative to the project (the git root, else the mapped folder), spelt from
    the mapped folder (``../AGENTS.md`` for an ancestor's); ``~/…`` for a file in the home
    folder outside it; absolute otherwise (a file that is nowhere in the project)."""
    if not os.path.isabs(path):
        return path  # a variable's name (env-value), not a file
    project = repo.root or repo.cwd
    if path == project or path.startswith(project.rstrip(os.sep) + os.sep):
        return os.path.relpath(path, repo.cwd).replace(os.sep, "/")
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home.rstrip(os.sep) + os.sep):
        return "~/" + path[len(home.rstrip(os.sep)) + 1:].replace(os.sep, "/")
    return path


def _everywhere(repo: RepoMap) -> dict[str, FolderRule]:
    """Entries (always-on or exists) that most folders share unchanged: the root's."""
    root = next((f for f in repo.folders if f.path == "."), None)
    return {e.id: e for e in root.rules if e.kind in ("always", "exists")} if root else {}


def _own(folder: Folder, everywhere: dict[str, FolderRule], index: dict[str, int]) -> list[list[Any]]:
    entries: list[list[Any]] = [[index[e.id], e.kind, e.status, safe_line(e.reason)]
                                for e in folder.rules if e.id in index and everywhere.get(e.id) != e]
    present = {e.id for e in folder.rules}
    entries.extend([index[i]] for i in everywhere if i not in present)
    return entries


def _conditions(conditions: Any) -> list[list[str]]:
    """The conditions a rule declares, as (name, value) text; unset ones left out."""
    rows = []
    for name, value in conditions.items():
        if value in (None, False, [], ""):
            continue
        if name == "match" and not conditions.get("globs"):
            continue
        text = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
        rows.append([safe_line(name), safe_line(text)])
    return rows


def _escape(text: str) -> str:
    return safe_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
