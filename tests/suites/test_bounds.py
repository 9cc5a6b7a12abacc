"""Every cache and every piece of session state that lives as long as a process is bounded
(issue 7, item 5). Each test pushes far past the documented cap and checks the size — not
the time. The long-running view (RSS of a real ``pi-rules serve`` under load) is
benchmarks/bench_serve.py.
"""

from __future__ import annotations

import dataclasses
import gc
import io
import json
import tracemalloc
from pathlib import Path

from rules_core import Engine
from rules_hosts import Session
import rules_core.engine.discovery as engine_module
from rules_core.discovery.cache import MAX_SCAN_ROOTS, ScanCache, add_bounded
from rules_core.discovery.listing import MAX_LISTING_FAILURES, ListingCache
from rules_core.model import RuleError
from rules_hosts.protocols.serve import Server, serve_stream
from rules_hosts.session.runtime import MAX_DELIVERED, MAX_TOUCHED, touched_from_entries
from rules_hosts.session.file import SessionFile, encode_entry, read_entries
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

RULE = rule_text("Body.", globs=["src/**"])


def test_file_cache_holds_only_what_the_last_discovery_listed(rule_project, tmp_path):
    rule_project.write({f".pi/rules/r{i}.md": RULE for i in range(50)})
    other = make_rules(tmp_path / "other", {".pi/rules/a.md": RULE, ".pi/rules/b.md": RULE})
    engine = rule_project.engine()
    engine.discover(str(rule_project.cwd))
    assert len(engine.discovery._files) == 50
    engine.discover(str(other))
    assert len(engine.discovery._files) == 2


def test_scan_cache_keeps_at_most_its_cap_of_roots():
    cache = ScanCache()
    calls = []

    def scan(root, queries, git_root):
        calls.append(root)
        return {q: None for q in queries}

    for number in range(MAX_SCAN_ROOTS * 4):
        cache.get(f"/root/{number}", (("src/**",),), None, scan)
        cache.get(f"/root/{number}", (("lib/**",),), None, scan)  # a new query set replaces the old
    assert len(cache) == MAX_SCAN_ROOTS
    before = len(calls)
    cache.get(f"/root/{MAX_SCAN_ROOTS * 4 - 1}", (("lib/**",),), None, scan)  # the newest is still cached
    assert len(calls) == before


def test_listing_cache_keeps_at_most_its_cap_of_failures(tmp_path):
    cache = ListingCache()
    for number in range(MAX_LISTING_FAILURES * 3):
        directory = str(tmp_path / f"d{number}")
        cache.remember_failure(directory, RuleError("source-unreadable", directory, "x"))
    assert len(cache) == MAX_LISTING_FAILURES


def test_engine_git_roots_and_tree_walks_are_bounded(rule_project, tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "find_git_root", lambda cwd: None)
    engine = rule_project.engine()
    for number in range(engine_module.MAX_CWDS * 2):
        engine.discovery.git_root(f"/nowhere/{number}")
    assert len(engine.discovery._git_roots) == engine_module.MAX_CWDS
    for number in range(engine_module.MAX_TREES * 3):
        cwd = make_rules(tmp_path / f"cwd{number}", {"pkg/.pi/rules/n.md": RULE})
        engine.discover(str(cwd))
    assert 0 < len(engine.discovery._tree) <= engine_module.MAX_TREES


def test_token_cache_is_bounded(rule_project):
    rule_project.write({".pi/rules/a.md": RULE})
    engine = rule_project.engine()
    (rule,) = engine.discover(str(rule_project.cwd)).rules
    for number in range(10_000):
        engine._rule_tokens(dataclasses.replace(rule, body=f"body {number}"))
    assert len(engine._tokens) <= 4097


def test_add_bounded_is_a_deterministic_fold():
    live: dict[str, None] = {}
    add_bounded(live, (f"k{i % 700}" for i in range(5000)), 500)
    assert len(live) == 500
    replay: dict[str, None] = {}
    add_bounded(replay, (f"k{i % 700}" for i in range(5000)), 500)
    assert list(live) == list(replay)


def test_touched_set_forgets_the_oldest_and_a_rebuild_agrees(rule_project, tmp_path):
    session = Session(rule_project.engine(), str(rule_project.cwd), trusted=True)
    entries = []
    for number in range(MAX_TOUCHED * 2 + 17):
        capture = session.tool_start("read", {"path": f"src/f{number % (MAX_TOUCHED + 900)}.ts"})
        if capture.entry is not None:
            entries.append(capture.entry)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(encode_entry(e) for e in entries))  # what --session appended
    assert len(session.touched) == MAX_TOUCHED
    assert session.touched[-1] == f"src/f{(MAX_TOUCHED * 2 + 16) % (MAX_TOUCHED + 900)}.ts"
    # Replaying the entries (the host's or the session file's) rebuilds exactly this set.
    assert touched_from_entries(entries, session.cwd) == session.touched
    assert touched_from_entries(read_entries(str(path)), session.cwd) == session.touched
    resumed = SessionFile(str(path))
    assert sum(len(e["data"]["paths"]) for e in resumed.entries) <= MAX_TOUCHED  # bounded in memory
    assert touched_from_entries(resumed.entries, session.cwd) == session.touched


def test_delivered_set_is_bounded(rule_project):
    session = Session(rule_project.engine(), str(rule_project.cwd), trusted=True)
    session.restore("", [f"id{i}" for i in range(MAX_DELIVERED * 3)])
    assert len(session.delivered) == MAX_DELIVERED
    assert session.delivered[-1] == f"id{MAX_DELIVERED * 3 - 1}"


def _requests(start: int, count: int) -> str:
    lines = []
    for number in range(start, start + count):
        kind = number % 10
        if kind < 6:
            request = {"method": "tool_start", "params": {"tool": "read", "args": {"path": f"src/f{number}.ts"}}}
        elif kind < 8:
            request = {"method": "tool_result", "params": {"tool": "grep", "content": [{"type": "text", "text": "x"}]}}
        elif kind == 8:
            request = {"method": "read_rule", "params": {"args": {"path": "a.md"}}}
        else:
            request = {"method": "command", "params": {"text": "/rules mute nothing"}}
        lines.append(json.dumps({"id": number, **request}))
    return "\n".join(lines) + "\n"


def test_serve_state_stops_growing_under_a_stream_of_new_paths(rule_project, tmp_path):
    """10k requests, most naming a new path: once past the caps, memory stays flat."""
    rule_project.write({".pi/rules/a.md": RULE})
    engine = Engine(fresh_manager(), home=str(rule_project.home), env={})
    session = Session(engine, str(rule_project.cwd), trusted=True)
    server = Server(session, SessionFile(str(tmp_path / "s.jsonl")), log=io.StringIO())
    server.store.append = lambda entry: server.store._remember(entry)  # memory only: no fsync per request

    def run(start: int, count: int) -> None:
        serve_stream(server, io.StringIO(_requests(start, count)), io.StringIO())

    tracemalloc.start()  # from the start, so what eviction frees counts against what is added
    try:
        run(0, 7_000)  # past every cap: touched set, path caches, session file window
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run(7_000, 3_000)
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(session.touched) == MAX_TOUCHED
    assert len(server.store.entries[0]["data"]["paths"]) == MAX_TOUCHED
    print(f"growth over 3,000 requests: {growth} bytes")  # shown with -s
    assert growth < 256 * 1024, growth  # 1,800 more new paths cost nothing once at the caps
    assert not Path(tmp_path / "s.jsonl").exists()
