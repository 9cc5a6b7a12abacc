"""``pi-rules stream test`` and ``pi-rules stream scan`` (CONTRACT §5).

``test`` runs a snippet through the real watcher and prints the rules that fire;
``scan`` checks the files of a tree against the stream rules that watch what tools
write, like a linter (gitignore-aware, binary and huge files skipped, exit 1 on
findings).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from dataclasses import dataclass
from typing import Iterator, Sequence

from rules_core.engine.core import Engine
from rules_core.discovery.git import git_output
from rules_core.lookup import normalize_touched
from rules_core.model import Facts
from rules_core.discovery.reading import read_at_most
from rules_core.safe import safe_json, safe_line
from rules_core.stream.watcher import SEARCH_SECONDS, StreamSpec, StreamWatcher, globs_gate, quote_snippet

from rules_hosts.session.facts import LIVE, host_facts
from rules_hosts.cli.stream_why import Surface as _Surface, quiet_rules

MAX_SCAN_BYTES = 1 << 20  # a file larger than this is skipped (and counted)
MAX_FINDINGS_PER_RULE = 100  # per file: a generated file must not flood the report
SNIFF = 8192  # bytes read to tell a binary file (a NUL byte) from text
SCAN_TOOLS = ("write", "edit")


def run(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    if args.stream_command == "test":
        return _test(engine, args, cwd)
    return _scan(engine, args, cwd)


def _facts(engine: Engine, args: argparse.Namespace, cwd: str) -> Facts:
    branch = None if args.no_branch else args.branch if args.branch is not None else LIVE
    return host_facts(
        cwd, env=engine.env, trusted=not args.untrusted, touched=args.touched,
        model=args.model, branch=branch, agent=args.agent,
    )


# -- test ------------------------------------------------------------------------------------------


def _test(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    if args.file is not None:
        try:
            text = sys.stdin.read() if args.file == "-" else _read_text(args.file)
        except (OSError, UnicodeDecodeError) as exc:
            print(f"pi-rules: cannot read --file {safe_line(args.file)}: {safe_line(str(exc))}", file=sys.stderr)
            return 2
    else:
        text = args.text
    facts = _facts(engine, args, cwd)
    source = args.source or ("tool" if args.tool else "text")
    discovery = engine.discover(cwd, facts.trusted)
    specs = engine.stream_specs(facts, discovery)
    gate = globs_gate(cwd)
    watcher = StreamWatcher(specs, gate=gate, touched=facts.touched)
    # A file's own path is the path it is checked as, unless --path says otherwise (issue 34).
    named = args.path or (os.path.abspath(args.file) if args.file not in (None, "-") else None)
    path = normalize_touched((named,), cwd)[0] if named else None
    result = watcher.check(source, text, tool=args.tool, path=path)
    for fault in watcher.faults:
        print(f"pi-rules stream test: {safe_line(fault)}", file=sys.stderr)
    fired = {f.rule.id for f in result.fired}
    quiet = quiet_rules(engine, discovery, specs, fired, _Surface(source, args.tool, path, facts.touched), gate)
    if args.json:
        rows = [{"id": rule_id, "armed": armed, "reason": why} for rule_id, armed, why in quiet]
        sys.stdout.write(safe_json({"fired": [f.to_json() for f in result.fired], "notFired": rows}) + "\n")
    else:
        for firing in result.fired:
            print(f"{safe_line(firing.rule.id)}: {safe_line(firing.source)} {safe_line(firing.reason)}")
        for rule_id, armed, why in quiet:
            print(f"{safe_line(rule_id)}: {'armed' if armed else 'not armed'}, did not fire: {safe_line(why)}")
        if not result.fired and not quiet:
            print("no stream rule here (a rule with condition: or astCondition:); nothing to test")
    return 0


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


# -- scan ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    rule_id: str
    file: str
    line: int
    reason: str


def _scan(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    root = os.path.abspath(os.path.join(cwd, args.dir))
    if not os.path.isdir(root):
        print(f"pi-rules: {safe_line(args.dir)} is not a directory", file=sys.stderr)
        return 2
    facts = _facts(engine, args, cwd)
    discovery = engine.discover(cwd, facts.trusted)
    # Rule files spell out the very patterns they forbid: they are not findings.
    rule_files = {r.file.path for r in discovery.rules} | {e.path for e in discovery.errors}
    specs = [s for s in engine.stream_specs(facts, discovery) if _watches_files(s)]
    gate = globs_gate(cwd)
    findings: list[Finding] = []
    skipped = {"binary": 0, "huge": 0, "unreadable": 0}
    for path in _files(root, use_git=facts.trusted):
        if path in rule_files:
            continue
        shown = os.path.relpath(path, cwd)
        eligible = [s for s in specs if _admits(s, shown) and (not s.rule.globs or gate(s.rule, (shown,)))]
        if not eligible:
            continue
        text = _load(path, skipped)
        if text is not None:
            findings.extend(f for spec in eligible for f in _check(spec, text, shown))
    if args.json:
        rows = [{"id": f.rule_id, "file": f.file, "line": f.line, "reason": f.reason} for f in findings]
        sys.stdout.write(safe_json({"findings": rows}) + "\n")
    else:
        for f in findings:
            print(f"{safe_line(f.file)}:{f.line}: {safe_line(f.rule_id)}: {safe_line(f.reason)}")
    notes = [f"{n} {kind}" for kind, n in skipped.items() if n]
    if notes:
        print(f"pi-rules stream scan: skipped {', '.join(notes)} file(s)", file=sys.stderr)
    return 1 if findings else 0


def _watches_files(spec: StreamSpec) -> bool:
    return any(e.surface == "tool" and e.tool in (None, *SCAN_TOOLS) for e in spec.scope)


def _admits(spec: StreamSpec, path: str) -> bool:
    return any(entry.admits("tool", tool, path) for entry in spec.scope for tool in SCAN_TOOLS)


def _check(spec: StreamSpec, text: str, path: str) -> Iterator[Finding]:
    count = 0
    for pattern in spec.patterns:
        try:
            for found in pattern.regex.finditer(text, timeout=SEARCH_SECONDS * 10):
                line = text.count("\n", 0, found.start()) + 1
                yield Finding(spec.rule.id, path, line, f"matched /{pattern.source}/: {quote_snippet(found.group(0))}")
                count += 1
                if count >= MAX_FINDINGS_PER_RULE:
                    return
        except TimeoutError:
            print(
                f"pi-rules stream scan: {safe_line(path)}: rule {safe_line(spec.rule.id)}: condition "
                f"/{safe_line(pattern.source)}/ took too long (catastrophic backtracking?); rest of file skipped",
                file=sys.stderr,
            )
    if spec.ast is not None:
        found_ast = spec.ast(text, path)
        if found_ast is not None:
            yield Finding(spec.rule.id, path, found_ast[0], found_ast[1])


def _load(path: str, skipped: dict[str, int]) -> str | None:
    data = _read_regular(path)
    if data is None:
        skipped["unreadable"] += 1
        return None
    if len(data) > MAX_SCAN_BYTES:
        skipped["huge"] += 1
        return None
    if b"\0" in data[:SNIFF]:
        skipped["binary"] += 1
        return None
    return data.decode("utf-8", errors="replace")


def _read_regular(path: str) -> bytes | None:
    """At most ``MAX_SCAN_BYTES`` + 1 bytes of a regular file, or ``None``.

    Opened non-blocking, without following a final link, and checked to be a regular
    file before reading (as ``rules_core.discovery.reading`` does): a FIFO named like a watched
    file, or one swapped in after listing, would otherwise block ``open`` forever
    (issue 14, attack 12)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return read_at_most(fd, MAX_SCAN_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _files(root: str, use_git: bool) -> Iterator[str]:
    """Every regular file below ``root`` git would not ignore, in sorted order; links,
    FIFOs, sockets and devices are never scanned. An untrusted project is not handed to
    git (its config can run commands, e.g. core.fsmonitor)."""
    listed = _git_files(root) if use_git else None
    if listed is not None:
        for rel in sorted(listed):
            path = os.path.join(root, rel)
            if _is_regular(path):
                yield path
        return
    for current, dirs, files in os.walk(root):
        # Outside a repository there is no ignore file to honour: skip what no one edits.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        for name in sorted(files):
            path = os.path.join(current, name)
            if _is_regular(path):
                yield path


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def _git_files(root: str) -> Sequence[str] | None:
    # rules_core.discovery.git runs git by absolute path with the repository variables cleared.
    output = git_output(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".", timeout=60)
    if output is None:
        return None
    return [p for p in output.decode("utf-8", errors="surrogateescape").split("\0") if p]
