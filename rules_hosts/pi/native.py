"""What Pi reads itself (docs/hosts.md, "Files a host reads natively").

A live Pi says exactly what it put in the prompt: the extension passes
``systemPromptOptions.contextFiles`` and ``skills`` to ``serve`` (``Facts.host_loaded``).
Without a live Pi (``--host pi`` on the command line) the list is rebuilt the way Pi 0.73
and 1.6 build it — one file per folder, the first of ``AGENTS.override.md`` (1.6),
``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD``, never a file below cwd — but
only from cwd up to the git root: Pi walks on to the filesystem root and reads its agent
dir, pi-rules may not look there (RULE-SPEC §1, the containment tests).

Either way a rule is Pi's when Pi already shows its text (by content: a link or a copy is
caught too) or its file is a skill Pi lists. A file Pi shows with its ``@imports`` as
literal lines is not read: pi-rules' rule for it carries the imported text, so it stays.
Without a live Pi, skills follow the static table of ``rules_importers/_skill_hosts.py``
(``.agents/skills`` from cwd up, ``~/.agents/skills``).
"""

from __future__ import annotations

import os

from rules_core.model import Facts, Rule
from rules_importers._skill_hosts import host_reads_skill

from rules_hosts.protocols.loaded import real_path, text_key

READ_BY_PI = "Pi reads this file itself (one AGENTS.md or CLAUDE.md per folder from cwd up); not sent twice"
SKILL_OF_PI = "Pi lists this file as one of its skills; left to Pi"
PI_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
_MAX_FOLDERS = 128  # a deeper cwd is not a real one; Pi's own walk would be as long
_MAX_BYTES = 1 << 20  # a context file bigger than this is not compared (never left out)
_cache: dict[tuple[str, tuple[tuple[str, int, int], ...]], frozenset[tuple[str, str]]] = {}


def pi_reads(rule: Rule, facts: Facts) -> str | None:
    if facts.host_loaded is None and rule.file.plugin == "skills":
        return host_reads_skill("pi", rule)
    if facts.host_loaded is not None:
        loaded = facts.host_loaded
    elif rule.source == "project" and facts.trusted and rule.file.bound:
        # Rebuilt only as far as pi-rules may look (RULE-SPEC §1: nothing above the git
        # root is read or stat-ed, an untrusted project not at all); a live Pi's list has no bound.
        loaded = pi_profile(facts.cwd, rule.file.bound)
    else:
        return None
    if ("path", real_path(rule.file.path)) in loaded:
        return SKILL_OF_PI
    if rule.body.strip() and ("text", text_key(rule.body)) in loaded:
        return READ_BY_PI
    return None


def pi_profile(cwd: str, bound: str) -> frozenset[tuple[str, str]]:
    """Pi's context files for ``cwd`` up to ``bound`` (the git root) as ("text", digest)
    pairs, read once per set of (path, mtime, size)."""
    files = _walked_files(cwd, bound)
    stamp = tuple(_stamp(path) for path in files)
    key = (cwd, stamp)
    if key not in _cache:
        pairs: set[tuple[str, str]] = set()
        real_top = os.path.realpath(bound)
        for path, (_, _, size) in zip(files, stamp):
            real = os.path.realpath(path)
            if size > _MAX_BYTES or os.path.commonpath([real, real_top]) != real_top:
                continue  # too big to compare, or a link out of the project: never read
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    pairs.add(("text", text_key(handle.read(_MAX_BYTES))))
            except OSError:
                continue
        _cache.clear()  # one cwd at a time: a server serves one project
        _cache[key] = frozenset(pairs)
    return _cache[key]


def _walked_files(cwd: str, bound: str) -> list[str]:
    found: list[str] = []
    folder, top = os.path.abspath(cwd), os.path.abspath(bound)
    if os.path.commonpath([folder, top]) != top:
        return found  # cwd outside its own bound: nothing to rebuild
    for _ in range(_MAX_FOLDERS):
        first = next((os.path.join(folder, n) for n in PI_NAMES if os.path.isfile(os.path.join(folder, n))), None)
        if first is not None:
            found.append(first)
        parent = os.path.dirname(folder)
        if folder == top or parent == folder:
            break
        folder = parent
    return found


def _stamp(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (path, -1, -1)
    return (path, stat.st_mtime_ns, stat.st_size)
