"""What Pi reads itself (docs/hosts.md, "Files a host reads natively").

A live Pi says exactly what it put in the prompt: the extension passes
``systemPromptOptions.contextFiles`` and ``skills`` to ``serve`` (``Facts.host_loaded``).
Without a live Pi (``--host pi`` on the command line) the list is rebuilt the way Pi 0.73
and 1.6 build it: from cwd up to the filesystem root, one file per folder — the first of
``AGENTS.override.md`` (1.6), ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD`` —
never a file below cwd, plus the agent dir's own ``AGENTS.md``/``CLAUDE.md``.

Either way a rule is Pi's when Pi already shows its text (by content: a link or a copy is
caught too) or its file is a skill Pi lists. A file Pi shows with its ``@imports`` as
literal lines is not read: pi-rules' rule for it carries the imported text, so it stays.
"""

from __future__ import annotations

import os

from rules_core.model import Facts, Rule
from rules_hosts.protocols.loaded import real_path, text_key

READ_BY_PI = "Pi reads this file itself (one AGENTS.md or CLAUDE.md per folder from cwd up); not sent twice"
SKILL_OF_PI = "Pi lists this file as one of its skills; left to Pi"
PI_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
_MAX_FOLDERS = 128  # a deeper cwd is not a real one; Pi's own walk would be as long
_MAX_BYTES = 1 << 20  # a context file bigger than this is not compared (never left out)
_cache: dict[tuple[str, tuple[tuple[str, int, int], ...]], frozenset[tuple[str, str]]] = {}


def pi_reads(rule: Rule, facts: Facts) -> str | None:
    loaded = facts.host_loaded if facts.host_loaded is not None else pi_profile(facts.cwd)
    if ("path", real_path(rule.file.path)) in loaded:
        return SKILL_OF_PI
    if rule.body.strip() and ("text", text_key(rule.body)) in loaded:
        return READ_BY_PI
    return None


def pi_profile(cwd: str, agent_dir: str | None = None) -> frozenset[tuple[str, str]]:
    """Pi's context files for ``cwd`` as ("text", digest) pairs, read once per set of
    (path, mtime, size)."""
    files = [*_agent_files(agent_dir), *_walked_files(cwd)]
    stamp = tuple(_stamp(path) for path in files)
    key = (cwd, stamp)
    if key not in _cache:
        pairs: set[tuple[str, str]] = set()
        for path, (_, _, size) in zip(files, stamp):
            if size > _MAX_BYTES:
                continue
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    pairs.add(("text", text_key(handle.read(_MAX_BYTES))))
            except OSError:
                continue
        _cache.clear()  # one cwd at a time: a server serves one project
        _cache[key] = frozenset(pairs)
    return _cache[key]


def _walked_files(cwd: str) -> list[str]:
    found: list[str] = []
    folder = os.path.abspath(cwd)
    for _ in range(_MAX_FOLDERS):
        first = next((os.path.join(folder, n) for n in PI_NAMES if os.path.isfile(os.path.join(folder, n))), None)
        if first is not None:
            found.append(first)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return found


def _agent_files(agent_dir: str | None) -> list[str]:
    folder = agent_dir or os.environ.get("PI_CODING_AGENT_DIR") or os.path.join(os.path.expanduser("~"), ".pi", "agent")
    return [p for p in (os.path.join(folder, n) for n in ("AGENTS.md", "CLAUDE.md")) if os.path.isfile(p)][:1]


def _stamp(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, stat.st_mtime_ns, stat.st_size)
