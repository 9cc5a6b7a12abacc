"""The data behind ``pi-rules map`` (docs/map.md): which rules a touched file activates in
each folder of the repository, evaluated by the engine itself.

Every folder below the working directory (git's ignore rules applied, as the exists scan
applies them) is evaluated once with ``Engine.evaluate``, its own files standing in as the
touched paths — what an agent working there touches. Nothing here matches a glob: the
statuses, reasons and token counts are the engine's, and stream rules' path gates are
judged by the ``pi_rules_match`` hook. Dead globs and cross-format duplicates come from the
``check`` linters (``dead-glob``, ``duplicate-body``).

A repository is hostile input: the walk stops at ``MAX_FOLDERS`` folders and
``MAX_DEPTH`` levels, and at most ``MAX_FILES_PER_FOLDER`` files of a folder are used, one
per distinct file extension first; the result says when a cap cut it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rules_core.engine.core import Engine
from rules_core.discovery.ignore import IgnoreStack
from rules_core.lint.check import lint
from rules_core.discovery.listing import NEVER_SCANNED
from rules_core.model import Discovery, Facts, MatchContext, Outcome, Rule
from rules_core.settings.resolved import Resolved
from rules_plugins.lint_duplicates import duplicate_groups

from rules_hosts.previews.compute import NO_BUDGET, agent_discovery, as_outcomes, profile_of
from rules_hosts.shapes import conditions_json

MAX_FOLDERS = 20_000
MAX_DEPTH = 32
MAX_FILES_PER_FOLDER = 64
DEAD_CODE = "dead-glob"
# The engine's source plugins that read pi-rules' own format.
_NATIVE_PLUGINS = frozenset({"native", "ancestors", "nested"})


@dataclass(frozen=True)
class MapRule:
    """One discovered rule as the map shows it."""

    id: str
    format: str  # the colour family: native, global, or the importer's name
    plugin: str
    relative_path: str
    path: str
    source: str
    description: str
    load: str
    tokens: int
    conditions: Mapping[str, Any]
    body: str
    stream: bool


@dataclass(frozen=True)
class FolderRule:
    """A rule a touched file in one folder activates. ``status`` is the engine's (``active``,
    ``on-demand``, ``dropped``) or ``stream`` for a stream rule whose path gate admits the
    folder; ``kind`` says why: ``always``, ``path`` (a file there matched), ``exists``
    (a file somewhere matched: active in every session), ``on-demand`` or ``stream``."""

    id: str
    status: str
    kind: str
    tokens: int
    reason: str


@dataclass(frozen=True)
class Folder:
    path: str  # cwd-relative, "/"-separated; "." for the working directory
    depth: int
    files: int  # the folder's own files (not below it)
    sampled: int  # how many of them were evaluated as touched
    rules: tuple[FolderRule, ...]
    tokens: int  # pinned tokens the folder asks for: the active rules plus those the budget dropped
    overflow: bool  # the budget dropped a rule here


@dataclass(frozen=True)
class RepoMap:
    cwd: str
    host: str | None
    budget: int
    folders: tuple[Folder, ...]
    rules: tuple[MapRule, ...]
    dead: tuple[str, ...]
    duplicates: tuple[tuple[str, ...], ...]
    conditional: tuple[str, ...]  # rules with a model, branch or tools condition the map cannot judge
    truncated: bool  # the folder or depth cap cut the walk
    errors: tuple[Mapping[str, str], ...]
    partly_dead: tuple[str, ...] = ()  # some positive globs dead, others live: not "nowhere"
    root: str | None = None  # the git root: what the HTML's paths are relative to (issue 34)


def build_map(engine: Engine, cwd: str, *, trusted: bool = True, host: str | None = None,
              resolved: Resolved | None = None) -> RepoMap:
    """The map of ``cwd``: one ``Engine.evaluate`` per folder, the discovery and the
    settings (``resolved``, else read once here) shared."""
    cwd = os.path.abspath(cwd)
    resolved = (engine.resolve(cwd, trusted, host) if resolved is None else resolved).for_host(host)
    max_tokens, overflow = resolved.max_tokens, resolved.overflow
    profile = profile_of(host)  # a previewed agent: its files, judged as it judges them
    shown_budget = max_tokens  # a preview draws pi-rules' budget for scale; its agent has none
    if profile is not None:
        discovery = agent_discovery(engine, cwd, trusted, profile)
        max_tokens = NO_BUDGET
    else:
        discovery = engine.discover(cwd, trusted, host, resolved)
    git_root = engine.discovery.git_root(cwd) if trusted else None
    # An untrusted project's tree is not read: only the working directory itself is mapped.
    listed, truncated = _walk(cwd, git_root) if trusted else ([(".", 0, ())], False)
    base = Facts(cwd=cwd, trusted=trusted, max_tokens=max_tokens, overflow=overflow,
                 host=None if profile is not None else host, branch=None)
    # The stream rules this host can arm (not scoped out, not disabled).
    streams = engine.reachable([r for r in discovery.rules if engine.hooks.stream_spec(r) is not None], base,
                               resolved)
    folders = []
    errors: dict[tuple[str, str, str], None] = {}
    untouched = None  # every folder without files of its own has the same facts: evaluated once
    for relative, depth, names in listed:
        sample = _sample(names)
        touched = tuple(n if relative == "." else f"{relative}/{n}" for n in sample)
        facts = dataclasses.replace(base, touched=touched)
        if touched or untouched is None:
            evaluation = engine.evaluate(facts, discovery, resolved)
            untouched = evaluation if not touched else untouched
        else:
            evaluation = untouched
        for error in evaluation.errors:
            errors.setdefault((error.kind, error.path, error.message), None)
        outcomes = as_outcomes(evaluation, facts, profile) if profile is not None else evaluation.outcomes
        entries = [entry for o in outcomes if (entry := _entry(o)) is not None]
        entries.extend(_watching(engine, streams, facts, cwd))
        demand = sum(o.tokens for o in outcomes if _costs(o))
        folders.append(Folder(relative, depth, len(names), len(sample), tuple(entries), demand,
                              any(o.status == "dropped" and o.cause == "budget" for o in evaluation.outcomes)))
    stream_ids = {r.id for r in streams}
    dead, partly = _dead(engine, discovery, cwd, trusted, shown_budget, resolved.for_host(None))
    return RepoMap(
        cwd=cwd,
        host=host,
        budget=shown_budget,
        folders=tuple(folders),
        rules=tuple(_map_rule(engine, r, r.id in stream_ids) for r in discovery.rules),
        dead=dead,
        partly_dead=partly,
        root=git_root,
        duplicates=tuple(tuple(r.id for r in group) for group in duplicate_groups(discovery.rules)),
        conditional=tuple(r.id for r in discovery.rules if _judged_elsewhere(r) and r.id not in stream_ids),
        truncated=truncated,
        errors=tuple({"kind": k, "path": p, "message": m} for k, p, m in errors),
    )


def map_json(repo: RepoMap) -> dict[str, Any]:
    """CONTRACT §6's shape (``folders``, ``dead``, ``duplicates``) plus the keys the page
    needs; keys are only ever added."""
    return {
        "folders": [
            {
                "path": f.path, "depth": f.depth, "files": f.files, "sampled": f.sampled,
                "rules": [{"id": r.id, "status": r.status, "kind": r.kind, "tokens": r.tokens, "reason": r.reason}
                          for r in f.rules],
                "tokens": f.tokens, "overflow": f.overflow,
            }
            for f in repo.folders
        ],
        "dead": list(repo.dead),
        "partlyDead": list(repo.partly_dead),
        "duplicates": [list(group) for group in repo.duplicates],
        "conditional": list(repo.conditional),
        "rules": [
            {
                "id": r.id, "format": r.format, "plugin": r.plugin, "relativePath": r.relative_path,
                "path": r.path, "source": r.source, "description": r.description, "load": r.load,
                "tokens": r.tokens, "stream": r.stream, "conditions": dict(r.conditions), "body": r.body,
            }
            for r in repo.rules
        ],
        "budget": repo.budget,
        "host": repo.host,
        "cwd": repo.cwd,
        "truncated": repo.truncated,
        "limits": {"folders": MAX_FOLDERS, "depth": MAX_DEPTH, "filesPerFolder": MAX_FILES_PER_FOLDER},
        "errors": list(repo.errors),
    }


def map_json_text(repo: RepoMap) -> str:
    """``map_json`` as text with one folder per line: a monorepo's map has thousands of
    folders, each naming every rule that applies there, and indenting every key made it
    five times larger. ASCII-escaped, so no string can drive a terminal."""
    data = map_json(repo)
    lines = ["{"]
    for n, (key, value) in enumerate(data.items()):
        comma = "," if n < len(data) - 1 else ""
        if isinstance(value, list) and value and key in ("folders", "rules"):
            items = ",\n".join("  " + _compact(item) for item in value)
            lines.append(f"{_compact(key)}: [\n{items}\n]{comma}")
        else:
            lines.append(f"{_compact(key)}: {_compact(value)}{comma}")
    return "\n".join(lines) + "\n}\n"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(", ", ": "))


def _entry(outcome: Outcome) -> FolderRule | None:
    if outcome.status not in ("active", "on-demand", "dropped"):
        return None
    reason = outcome.reasons[0] if outcome.reasons else ""
    if outcome.status == "on-demand":
        kind = "on-demand"
    elif reason.startswith("touched "):
        kind = "path"
    elif reason.startswith("exists "):
        kind = "exists"
    else:
        kind = "always"
    if outcome.status == "dropped":
        reason = f"dropped ({outcome.cause})" + (f"; {reason}" if reason else "")
    return FolderRule(outcome.rule.id, outcome.status, kind, outcome.tokens, reason)


def _costs(outcome: Outcome) -> bool:
    """Pinned tokens working here asks for: what was sent, and what the budget turned away."""
    return outcome.status == "active" or (outcome.status == "dropped" and outcome.cause == "budget")


def _watching(engine: Engine, streams: Sequence[Rule], facts: Facts, cwd: str) -> list[FolderRule]:
    """Stream rules whose ``globs`` path gate admits a file of the folder, as the
    ``pi_rules_match`` hook judges it; a rule without globs watches every folder."""
    context = MatchContext(facts=facts, touched=facts.touched, existing={}, intents=(), cwd=cwd)
    found = []
    for rule in streams:
        if not rule.globs:
            found.append(FolderRule(rule.id, "stream", "stream", 0, "no path gate"))
            continue
        gate = [v for v in engine.hooks.match(rule, context) if v.condition == "globs"]
        if gate and all(v.ok for v in gate):
            found.append(FolderRule(rule.id, "stream", "stream", 0, gate[0].reasons[0] if gate[0].reasons else ""))
    return found


def _judged_elsewhere(rule: Rule) -> bool:
    return bool(rule.tools or rule.model is not None or rule.branch is not None or rule.extra_conditions)


def _map_rule(engine: Engine, rule: Rule, stream: bool) -> MapRule:
    plugin = rule.file.plugin
    family = "native" if plugin in _NATIVE_PLUGINS else plugin
    return MapRule(rule.id, family, plugin, rule.relative_path, rule.file.path, rule.source, rule.description,
                   rule.load, engine.hooks.estimate_tokens(rule.body), conditions_json(rule), rule.body, stream)


def _dead(engine: Engine, discovery: Discovery, cwd: str, trusted: bool, max_tokens: int,
          settings: Resolved) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Rules whose every positive glob ``check`` warns about (``dead-glob``: they apply
    nowhere), and rules with some dead globs beside live ones, each in discovery order
    (``[lint] ignore`` of the top level, as ``check`` reads it). A glob the linter cannot
    judge (as written) counts as live."""
    warnings = lint(engine, discovery, cwd=cwd, trusted=trusted, max_tokens=max_tokens,
                    ignore=settings.lint_ignore, resolved=settings)
    counts: dict[str, int] = {}
    for warning in dict.fromkeys(w for w in warnings if w.code == DEAD_CODE):
        counts[warning.path] = counts.get(warning.path, 0) + 1
    dead, partly = [], []
    for rule in discovery.rules:
        warned = counts.get(rule.file.path, 0)
        if warned:
            (dead if warned >= len(set(rule.positive_globs)) else partly).append(rule.id)
    return tuple(dead), tuple(partly)


def _sample(names: Sequence[str]) -> tuple[str, ...]:
    """At most ``MAX_FILES_PER_FOLDER`` of a folder's files: one per extension first (rules
    mostly tell files apart by it), then the rest in name order."""
    if len(names) <= MAX_FILES_PER_FOLDER:
        return tuple(names)
    firsts = dict.fromkeys(next(n for n in names if posixpath.splitext(n)[1] == ext)
                           for ext in dict.fromkeys(posixpath.splitext(n)[1] for n in names))
    chosen = list(firsts)[:MAX_FILES_PER_FOLDER]
    rest = (n for n in names if n not in firsts)
    chosen.extend(next(rest) for _ in range(MAX_FILES_PER_FOLDER - len(chosen)))
    return tuple(sorted(chosen))


def _walk(cwd: str, git_root: str | None) -> tuple[list[tuple[str, int, tuple[str, ...]]], bool]:
    """(cwd-relative folder, depth, its file names) depth-first in name order, and whether
    a cap cut the walk. Git's ignore rules apply; ``.git`` and ``node_modules`` are never
    entered, nor symlinked directories."""
    ignores = IgnoreStack(cwd, git_root) if git_root is not None else None
    out: list[tuple[str, int, tuple[str, ...]]] = []
    cut = [False]
    if ignores is None or not ignores.root_excluded:
        _visit(cwd, "", 0, ignores, out, cut)
    return out, cut[0]


def _visit(cwd: str, relative: str, depth: int, ignores: IgnoreStack | None,
           out: list[tuple[str, int, tuple[str, ...]]], cut: list[bool]) -> None:
    if len(out) >= MAX_FOLDERS:
        cut[0] = True
        return
    directory = os.path.join(cwd, relative) if relative else cwd
    dirs, files, has_ignore_file = _list(directory)
    pushed = ignores is not None and has_ignore_file and ignores.push_dir(directory, relative)
    kept = tuple(f for f in files if ignores is None or not ignores.excluded(_join(relative, f), False))
    out.append((relative or ".", depth, kept))
    for name in dirs:
        child = _join(relative, name)
        if ignores is not None and ignores.excluded(child, True):
            continue
        if depth + 1 > MAX_DEPTH:
            cut[0] = True
            break
        _visit(cwd, child, depth + 1, ignores, out, cut)
    if pushed:
        ignores.pop()  # type: ignore[union-attr]


def _join(relative: str, name: str) -> str:
    return f"{relative}/{name}" if relative else name


def _list(directory: str) -> tuple[list[str], list[str], bool]:
    dirs: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in NEVER_SCANNED:
                            dirs.append(entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        files.append(entry.name)
                except OSError:
                    continue
    except OSError:
        pass  # unlistable: mapped with no files
    return sorted(dirs), sorted(files), ".gitignore" in files
