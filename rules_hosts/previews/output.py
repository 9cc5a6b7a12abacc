"""A preview for people (``report``), for tools (``--json``) and as the agent's context
(``render``); ``run_preview`` is what the CLI calls for a preview host."""

from __future__ import annotations

import os
import sys
from typing import Any

from rules_core.safe import safe_block, safe_line

from .compute import preview
from .model import Preview
from .profiles import PROFILES

# A manual file is one the agent never loads by itself: the text says "not loaded", the
# reason and the JSON state say "manual".
_LABELS = {"loaded": "loaded", "on-demand": "on demand", "manual": "not loaded", "not-loaded": "not loaded",
           "cut": "cut"}


def run_preview(command: Any, kind: str) -> int:
    """``report`` or ``render`` for ``--host`` naming a previewed agent."""
    found = preview(command.engine, command.facts(), PROFILES[command.args.host])
    if command.args.json:
        command.print_json(preview_json(found, command.cwd) | ({"context": found.context} if kind == "render" else {}))
    elif kind == "render":
        sys.stdout.write(safe_block(found.context) + ("\n" if found.context and not found.context.endswith("\n") else ""))
    else:
        sys.stdout.write(report_text(found, command.cwd))
    return 0


def preview_json(found: Preview, cwd: str) -> dict[str, Any]:
    return {
        "host": found.host, "preview": True,
        "files": [{"path": e.path, "relativePath": _shown(e.path, cwd), "id": e.rule_id, "state": e.state,
                   "reason": e.reason, "size": e.size, "loadedSize": _size(e.text, found.unit)}
                  for e in found.entries],
        "warnings": list(found.warnings),
    }


def report_text(found: Preview, cwd: str) -> str:
    lines = [f"{found.title} preview: what {found.title} loads by itself here, in its order "
             "(pi-rules adds nothing and leaves nothing out)"]
    if not found.entries:
        lines.append(f"  no file of {found.title}'s here")
    for item in found.entries:
        kept = _size(item.text, found.unit)
        size = f"{item.size} {found.unit}" if item.state != "cut" else f"{kept} of {item.size} {found.unit}"
        lines.append(f"  {_LABELS[item.state]:<10}  {_shown(item.path, cwd)}  ({size})")
        lines.append(f"              {item.reason}")
    loaded = sum(1 for e in found.entries if e.state in ("loaded", "cut"))
    lines.append(f"{loaded} of {len(found.entries)} file(s) in {found.title}'s context, "
                 f"{len(found.context.encode('utf-8'))} bytes")
    lines += [f"warning: {warning}" for warning in found.warnings]
    return "".join(safe_line(line) + "\n" for line in lines)


def _shown(path: str, cwd: str) -> str:
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") and os.path.isabs(path) and relative.count("..") > 3 else relative


def _size(text: str, unit: str) -> int:
    return len(text) if unit == "chars" else len(text.encode("utf-8"))
