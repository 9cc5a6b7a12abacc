"""Parse results kept across processes (rules_core.discovery.kept_parses, issue 30).

A second engine (what a new process builds) reads the parses the first one kept instead of
parsing, and says the same; a rule file edited behind an unchanged stat is parsed afresh;
a kept parse whose values are damaged, or whose patterns a rule file could not hold, is
refused and the file parsed again; and a pattern read back compiles only when an
evaluation asks, through the same bounded compiler.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rules_core import Engine, hookimpl
from rules_core.discovery.cache_files import encode, read_json
from rules_core.discovery.persistent import CACHE_ENV
from rules_core.globs.compiled import LazyCompiledRule
from rules_core.model import Facts
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text
from suite_helpers import settle_racy_clock

TOUCHED = ("src/app.ts",)
RULES = {"ts": ["src/**/*.ts"], "py": ["**/*.py"], "docs": ["docs/**"], "gone": ["!**/*.md", "lib/**"]}


class _CountParses:
    """Counts parses that reach the schema plugins (answers none itself)."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(tryfirst=True)
    def pi_rules_parse(self, rule_file: Any, text: str, extra_keys: Any) -> None:
        self.calls += 1
        return None


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    repo, home = tmp_path / "repo", tmp_path / "home"
    files = {f".pi/rules/{name}.md": rule_text(f"{name} body", globs=globs) for name, globs in RULES.items()}
    make_rules(repo, {**files, ".pi/rules/model.md": rule_text("model body", model="*sonnet*"),
                      "src/app.ts": "x", "lib/a.py": "x"})
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    settle_racy_clock(monkeypatch)  # a path changed within the last second is not kept ("racy")
    return repo, {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": os.environ.get("PATH", "")}


def _engine(env: dict[str, str], counter: _CountParses | None = None) -> Engine:
    return Engine(fresh_manager([("count-parses", counter or _CountParses())]), home=env["HOME"], env=env)


def _outcomes(engine: Engine, repo: Path) -> str:
    evaluation = engine.evaluate(Facts(cwd=str(repo), touched=TOUCHED, model="claude-sonnet-4"))
    rows = [(o.rule.id, o.status, o.reasons, o.rule.body, o.rule.globs) for o in evaluation.outcomes]
    return json.dumps([rows, [(e.kind, e.path, e.message) for e in evaluation.errors], evaluation.section])


def _uncached(env: dict[str, str], repo: Path) -> str:
    return _outcomes(_engine({**env, CACHE_ENV: "off"}), repo)


def _store(env: dict[str, str]) -> Path:
    found = [p for p in (Path(env["XDG_CACHE_HOME"]) / "pi-rules").glob("*.json")
             if b'"pi-rules-entry-points"' not in p.read_bytes()[:256]]
    assert len(found) == 1
    return found[0]


def _rewrite_parses(env: dict[str, str], change: Any) -> None:
    """Apply ``change(value)`` to every kept parse and re-sign the file, so the field
    checks themselves must refuse it, not the digest."""
    path = _store(env)
    document = read_json(str(path))
    for entry in document["entries"]:
        if entry["key"].startswith('["parse"') and entry["value"]["rule"] is not None:
            change(entry["value"])
    path.write_bytes(encode(document))


def test_a_second_engine_parses_nothing_and_says_the_same(project):
    repo, env = project
    first_count, second_count = _CountParses(), _CountParses()
    first = _outcomes(_engine(env, first_count), repo)
    second_engine = _engine(env, second_count)
    second = _outcomes(second_engine, repo)

    assert second == first == _uncached(env, repo)
    assert first_count.calls == len(RULES) + 1  # the positive control: the first engine parsed each file
    assert second_count.calls == 0
    assert second_engine.discovery.persistent.stats["hits"] >= len(RULES) + 1


def test_kept_matchers_compile_only_when_an_evaluation_asks(project):
    repo, env = project
    _outcomes(_engine(env), repo)
    engine = _engine(env)

    rules = {rule.file.relative_path: rule for rule in engine.discover(str(repo)).rules}
    assert all(isinstance(r.compiled, LazyCompiledRule) and not r.compiled.compiled_parts for r in rules.values())
    engine.evaluate(Facts(cwd=str(repo), touched=TOUCHED))  # no model given: the model matcher has nothing to match
    assert rules["ts.md"].compiled.compiled_parts == {"globs"}
    assert "model" not in rules["model.md"].compiled.compiled_parts


def test_a_rule_file_edited_behind_an_unchanged_stat_is_parsed_again(project):
    repo, env = project
    _outcomes(_engine(env), repo)
    path = repo / ".pi/rules/ts.md"
    before = path.stat()
    path.write_text(path.read_text().replace("ts body", "TS BODY"))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    counter = _CountParses()
    after = _outcomes(_engine(env, counter), repo)

    assert "TS BODY" in after and after == _uncached(env, repo) and counter.calls == 1


@pytest.mark.parametrize("damage", ["wrong-types", "extra-field", "too-many-globs", "overlong-glob",
                                    "expansion-over-cap", "bad-pool", "not-a-dict"])
def test_a_damaged_or_oversized_kept_parse_is_refused_and_the_file_parsed(project, damage):
    repo, env = project
    expected = _outcomes(_engine(env), repo)

    def change(value: dict[str, Any]) -> None:
        rule = value["rule"]
        if damage == "wrong-types":
            rule["priority"] = "high"
        elif damage == "extra-field":
            rule["compiled"] = {"py/object": "os.system"}
        elif damage == "too-many-globs":
            rule["globs"] = ["src/*.ts"] * 1001
        elif damage == "overlong-glob":
            rule["globs"] = ["a" * 70_000]
        elif damage == "expansion-over-cap":
            rule["globs"] = ["{a,b,c,d,e,f,g,h,i,j}" * 4]  # 10,000 patterns; a rule file's cap is 1,000
        elif damage == "bad-pool":
            rule["pool"] = ["p", "many", ""]
        else:
            value["rule"] = ["description", "body"]

    _rewrite_parses(env, change)
    counter = _CountParses()
    engine = _engine(env, counter)

    assert _outcomes(engine, repo) == expected
    assert counter.calls == len(RULES) + 1  # every damaged entry was parsed afresh from its file


def test_a_pattern_read_back_meets_the_compilers_own_bounds(project):
    repo, env = project
    _outcomes(_engine(env), repo)
    slow = "+(a|aa)b"  # backtracks exponentially: a rule file's copy is refused when compiled
    _rewrite_parses(env, lambda value: value["rule"].update(globs=[slow, "src/**/*.ts"]))

    engine = _engine(env)
    rules = engine.discover(str(repo)).rules
    globsets = [rule.compiled.globs for rule in rules if rule.globs]

    assert globsets and all([g.pattern for g in gs.positives] == ["src/**/*.ts"] for gs in globsets)


def test_a_kept_error_keeps_its_line_and_column(project, monkeypatch):
    """Issue 34: an error read back from the store points where the parse said, and a
    kept error whose place is not a positive whole number is refused (parsed again)."""
    repo, env = project
    (repo / ".pi/rules/broken.md").write_text("---\ndescription: B\nversion: 1\nglob: [a]\n---\nbody\n")
    settle_racy_clock(monkeypatch)  # the new file has settled, as after a second's sleep
    first = _engine(env).discover(str(repo))
    counter = _CountParses()
    second = _engine(env, counter).discover(str(repo))
    [error] = [e for e in second.errors if e.path.endswith("broken.md")]
    assert (error.kind, error.line, error.column) == ("unknown-key", 4, 1)
    assert second.errors == first.errors and counter.calls == 0  # from the store, not parsed again
    path = _store(env)
    document = read_json(str(path))
    for entry in document["entries"]:
        if entry["key"].startswith('["parse"') and entry["value"]["errors"]:
            entry["value"]["errors"][0][4] = True  # a boolean is no line
    path.write_bytes(encode(document))
    recount = _CountParses()
    again = _engine(env, recount).discover(str(repo))
    assert recount.calls == 1 and again.errors == first.errors
