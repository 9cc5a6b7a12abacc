"""Journals written before the statistics records existed ("old format", docs/stats.md):
what ``pi-rules stats`` can still count from them, and what it cannot.

Such a journal has no record with a time and no turn record naming its project. What it
does carry: the Claude Code state file's deliver-once records (``pi-rules/delivered``,
the ids handed to the model, one record per delivery), and in every journal the touched
entries (paths). So an old session counts its deliveries per rule; its time is the file's
last change; and its project is the one its touched absolute paths lie in (Claude Code
records them absolute). A ``serve --session`` file the user names is counted whatever
its paths say (they are relative), though it holds no delivery to count.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

OLD_DELIVERED = "pi-rules/delivered"  # Claude Code's deliver-once record: {"ids": [...]}
TOUCHED = "pi-rules-md/touched"  # a touched entry: {"data": {"paths": [...]}}
_OURS = b'"pi-rules'  # any record pi-rules wrote: a pi-rules/… type or the touched customType
# What no old journal recorded, so stats cannot count it for an old session.
NOT_COUNTED = ("turns", "active", "listed", "tokens", "section/attachment/pointer", "reads", "fires", "denies")
UNATTRIBUTED = "no touched path places it in this project; --all-projects counts it"


@dataclass
class OldSession:
    name: str
    host: str
    counted: bool  # False: its project is not known to be this one
    delivered: dict[str, int] = field(default_factory=dict)
    why: str | None = None  # why it was not counted

    def as_json(self) -> dict[str, Any]:
        # Only Claude Code's state file kept deliveries (its deliver-once records); an old
        # serve --session file kept touched paths alone.
        kept = self.counted and self.host == "claude-code"
        return {"session": self.name, "host": self.host, "counted": self.counted,
                "deliveries": sum(self.delivered.values()),
                "countedFields": ["delivered"] if kept else [],
                "notCounted": list(NOT_COUNTED) if kept else ["delivered", *NOT_COUNTED], "why": self.why}


def fold_old(name: str, host: str, data: bytes, mtime: float, project: str | None, cutoff: float,
             parse: Callable[[Sequence[str]], Iterable[dict[str, Any]]]) -> OldSession | None:
    """The old session a journal holds; ``None`` when it was last written before the
    period or holds no pi-rules record at all. ``project``: count it only when its touched
    paths lie there (``None``: count it)."""
    if mtime < cutoff or _OURS not in data:
        return None
    if project is not None and not _touches(parse((TOUCHED,)), project):
        return OldSession(name, host, False, why=UNATTRIBUTED)
    delivered: dict[str, int] = {}
    for record in parse((OLD_DELIVERED,)):
        ids = record.get("ids")
        for rule_id in dict.fromkeys(ids if isinstance(ids, list) else []):
            if isinstance(rule_id, str) and len(rule_id) <= 1000:
                delivered[rule_id] = delivered.get(rule_id, 0) + 1
    return OldSession(name, host, True, delivered)


def _touches(entries: Iterable[dict[str, Any]], project: str) -> bool:
    root = os.path.abspath(project).rstrip(os.sep)
    for entry in entries:
        data = entry.get("data")
        paths = data.get("paths") if isinstance(data, dict) else None
        for path in paths if isinstance(paths, list) else []:
            if isinstance(path, str) and os.path.isabs(path) and (path == root or path.startswith(root + os.sep)):
                return True
    return False
