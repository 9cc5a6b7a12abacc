"""``pi-rules map --format tree``: the map as a compact terminal tree.

The working directory lists every rule a file there activates; each folder below lists
only what changes against its parent (``+id`` added, ``-id`` gone), so a rule that
applies everywhere is named once. Markers say why a rule is there.
"""

from __future__ import annotations

from rules_core.safe import safe_line

from rules_hosts.map.data import Folder, FolderRule, RepoMap

MARKERS = {"always": "*", "path": "+", "exists": "=", "on-demand": "?", "stream": "!"}
LEGEND = ("legend: *always-on  +path rule (a file here matches)  =exists (a file somewhere matches)  "
          "?on-demand index  !stream rule  ~dropped (budget or duplicate)  -no longer applies")


def render_tree(repo: RepoMap, depth: int) -> str:
    host = f", host {safe_line(repo.host)}" if repo.host else ""
    lines = [f"rules map of {safe_line(repo.cwd)} (budget {repo.budget} tokens{host})", LEGEND, ""]
    by_path = {f.path: f for f in repo.folders}
    hidden = 0
    for folder in repo.folders:
        if folder.depth > depth:
            hidden += 1
            continue
        parent = by_path.get(_parent(folder.path)) if folder.path != "." else None
        lines.append(_line(folder, parent, repo.budget))
    if hidden:
        lines.append(f"… {hidden} deeper folder{'s' if hidden != 1 else ''} not shown (--depth N to see them)")
    if repo.truncated:
        lines.append("(the walk stopped at its folder or depth cap; see docs/map.md)")
    lines.append("")
    lines.append("dead (a glob matches no file): " + (", ".join(safe_line(i) for i in repo.dead) or "none"))
    groups = ["(" + ", ".join(safe_line(i) for i in group) + ")" for group in repo.duplicates]
    lines.append("duplicated across files: " + (" ".join(groups) or "none"))
    if repo.conditional:
        lines.append("also need a model, branch or tool (not judged here): "
                     + ", ".join(safe_line(i) for i in repo.conditional))
    return "\n".join(lines) + "\n"


def _line(folder: Folder, parent: Folder | None, budget: int) -> str:
    name = "." if folder.path == "." else folder.path.rsplit("/", 1)[-1] + "/"
    cost = f"{folder.tokens}/{budget}" + (" OVER" if folder.overflow else "")
    head = f"{'  ' * folder.depth}{safe_line(name)}  [{cost}]"
    if parent is None:
        return head + "  " + (" ".join(_chip(r) for r in folder.rules) or "(no rules)")
    mine = {r.id: r for r in folder.rules}
    theirs = {r.id: r for r in parent.rules}
    changes = [_chip(r) for r in folder.rules if _changed(r, theirs.get(r.id))]
    changes += [f"-{safe_line(i)}" for i in theirs if i not in mine]
    return head + ("  " + " ".join(changes) if changes else "")


def _changed(rule: FolderRule, before: FolderRule | None) -> bool:
    # The reason names a file, which differs in every folder: only status and kind count.
    return before is None or (before.status, before.kind) != (rule.status, rule.kind)


def _chip(rule: FolderRule) -> str:
    mark = "~" if rule.status == "dropped" else MARKERS.get(rule.kind, "")
    return f"{mark}{safe_line(rule.id)}"


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."
