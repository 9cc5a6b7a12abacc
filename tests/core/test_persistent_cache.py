"""The persistent cache (rules_core.discovery.persistent): a second process reuses what the first
learnt, a change anywhere it looked is seen, and a damaged or hostile cache file is
ignored and rebuilt, never trusted — output is always the same as without a cache."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core import Engine, hookimpl
from rules_core.discovery.cache_files import MAX_FILE_BYTES, encode
from rules_core.discovery import persistent
from rules_core.discovery.persistent import CACHE_ENV
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text
import rules_core.discovery.tree as tree
from suite_helpers import SETTLED_CLI, settle_racy_clock

ROOT = Path(__file__).resolve().parents[2]
TOUCHED = ("packages/b/src/app.ts",)


def _build(base: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A git repository with exists rules at the root and in a nested package, and a
    home; returns the environment a process of that user would have."""
    repo, home = base / "repo", base / "home"
    make_rules(repo, {
        ".gitignore": "dist/\n",
        ".pi/rules/py.md": rule_text("python here", globs=["**/*.py"], match="exists"),
        ".pi/rules/css.md": rule_text("css here", globs=["**/*.css"], match="exists"),
        ".pi/rules/ts.md": rule_text("typescript", globs=["**/*.ts"], match="both"),
        "packages/b/.pi/rules/lib.md": rule_text("lib here", globs=["lib/**/*.go"], match="exists"),
        "packages/a/src/main.py": "x",
        "packages/b/src/app.ts": "x",
        "packages/b/lib/deep/util.go": "x",
        "dist/ignored.css": "x",
        "docs/readme.txt": "x",
    })
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    # A path changed within the last second is not kept ("racy"): let the tree settle, by
    # moving the cache's clock rather than sleeping (os.utime cannot set st_ctime back).
    settle_racy_clock(monkeypatch)
    return {"HOME": str(home), "XDG_CACHE_HOME": str(base / "cache"), "PATH": os.environ.get("PATH", "")}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    env = _build(tmp_path, monkeypatch)
    return tmp_path / "repo", env


class _CountScans:
    """Counts exists scans that reach a walker (answers nothing itself)."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(tryfirst=True)
    def pi_rules_scan(self, root: str, queries: Any, git_root: Any) -> None:
        self.calls += 1
        return None


def _engine(env: dict[str, str], counter: _CountScans | None = None) -> Engine:
    # Always the same plugin set: the set is part of the cache file's fingerprint.
    plugins = [("count-scans", counter or _CountScans())]
    return Engine(fresh_manager(plugins), home=env["HOME"], env=env)


def _outcomes(engine: Engine, repo: Path) -> str:
    from rules_core.model import Facts

    evaluation = engine.evaluate(Facts(cwd=str(repo), touched=TOUCHED))
    rows = [(o.rule.id, o.status, o.reasons) for o in evaluation.outcomes]
    return json.dumps([rows, [(e.kind, e.path, e.message) for e in evaluation.errors], evaluation.section])


def _uncached(env: dict[str, str], repo: Path) -> str:
    return _outcomes(_engine({**env, CACHE_ENV: "off"}), repo)


def _cache_files(env: dict[str, str]) -> list[Path]:
    """The project files (the installed entry points have a file of their own there)."""
    found = sorted((Path(env["XDG_CACHE_HOME"]) / "pi-rules").glob("*.json"))
    return [p for p in found if p.is_symlink() or b'"pi-rules-entry-points"' not in p.read_bytes()[:256]]


def _count_listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    real = tree._list

    def counting(directory: str) -> Any:
        listed.append(directory)
        return real(directory)

    monkeypatch.setattr(tree, "_list", counting)
    return listed


def test_second_process_neither_walks_nor_scans(project: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, env = project
    listed = _count_listings(monkeypatch)
    first_counter, second_counter = _CountScans(), _CountScans()
    first = _outcomes(_engine(env, first_counter), repo)
    walked_first = len(listed)
    assert first_counter.calls == 2 and walked_first > 0  # the root and packages/b
    assert len(_cache_files(env)) == 1
    second_engine = _engine(env, second_counter)
    second = _outcomes(second_engine, repo)
    assert second == first == _uncached(env, repo)
    assert second_counter.calls == 0
    assert len(listed) == 2 * walked_first  # the uncached run walked; the warm one did not
    assert second_engine.discovery.persistent.stats["hits"] == 3 + 4  # the tree, two scans and the four parses


def test_cache_file_is_private_and_off_switch_writes_nothing(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    _uncached(env, repo)
    assert _cache_files(env) == []
    _outcomes(_engine(env), repo)
    (path,) = _cache_files(env)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_untrusted_project_is_never_cached(project: tuple[Path, dict[str, str]]) -> None:
    from rules_core.model import Facts

    repo, env = project
    _engine(env).evaluate(Facts(cwd=str(repo), touched=TOUCHED, trusted=False))
    assert _cache_files(env) == []


def test_new_file_in_a_scanned_directory_changes_the_answer(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    before = _outcomes(_engine(env), repo)
    assert '"go here"' not in before
    (repo / "docs" / "style.css").write_text("x")  # docs/ was walked: nothing matched there
    (repo / "packages/b/lib/deep/more").mkdir()
    after = _outcomes(_engine(env), repo)
    assert after == _uncached(env, repo)
    assert after != before and "exists docs/style.css" in after


def test_deleted_file_changes_the_answer(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    before = _outcomes(_engine(env), repo)
    assert "exists packages/a/src/main.py" in before
    (repo / "packages/a/src/main.py").unlink()
    after = _outcomes(_engine(env), repo)
    assert after == _uncached(env, repo) and "exists packages/a/src/main.py" not in after


def test_edited_ignore_file_changes_the_answer(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    before = _outcomes(_engine(env), repo)
    assert "dist/ignored.css" not in before
    with open(repo / ".gitignore", "r+") as handle:  # edited in place: the directory is unchanged
        handle.write("#ist\n")
    after = _outcomes(_engine(env), repo)
    assert after == _uncached(env, repo) and "exists dist/ignored.css" in after


def test_changed_rule_file_and_new_nested_rules_are_read(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    _outcomes(_engine(env), repo)
    make_rules(repo, {
        ".pi/rules/py.md": rule_text("python changed", globs=["**/*.py"], match="exists"),
        "docs/.pi/rules/docs.md": rule_text("docs rule", alwaysApply=True),
    })
    after = _outcomes(_engine(env), repo)
    assert after == _uncached(env, repo)
    assert "python changed" in after and "docs rule" in after


def _valid_cache(env: dict[str, str], repo: Path) -> tuple[Path, bytes, str]:
    expected = _outcomes(_engine(env), repo)
    (path,) = _cache_files(env)
    return path, path.read_bytes(), expected


class _Touch:
    """Unpickling this creates a file: the proof that a cache was unpickled."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.target, "w"))


def _hostile(kind: str, data: bytes, path: Path, tmp: Path) -> None:
    """Damage the file; a damaged document is re-signed (``encode``), so that the field
    checks themselves are what must refuse it, not only the digest line."""
    document = json.loads(data.partition(b"\n")[2])
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "garbage":
        path.write_bytes(os.urandom(4096))
    elif kind == "bad-digest":  # a plausible answer, but not what was written
        path.write_bytes(data.replace(b"main.py", b"maio.py"))
    elif kind == "wrong-version":
        path.write_bytes(encode({**document, "version": 999}))
    elif kind == "wrong-types":
        document["signatures"] = ["x" for _ in document["signatures"]]
        path.write_bytes(encode(document))
    elif kind == "answers-outside":
        for entry in document["entries"]:
            if entry["key"].startswith('["tree"'):  # folders above cwd
                entry["value"]["owners"] = {name: [[1, "../../etc"]] for name in entry["value"]["owners"]}
            else:  # answers above the scan root
                entry["value"] = ["../../etc/passwd" for _ in entry["value"]]
        path.write_bytes(encode(document))
    elif kind == "paths-outside":
        document["paths"] = ["/etc" for _ in document["paths"]]
        path.write_bytes(encode(document))
    elif kind == "huge":
        path.write_bytes(b"[" + b"0," * (MAX_FILE_BYTES // 2) + b"0]")
    elif kind == "deep":
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    elif kind == "symlink":
        elsewhere = tmp / "elsewhere.json"
        elsewhere.write_bytes(data)
        path.unlink()
        path.symlink_to(elsewhere)
    elif kind == "pickle":
        path.write_bytes(pickle.dumps(_Touch(str(tmp / "unpickled"))))
    elif kind == "foreign-owner":
        os.chown(path, 54321, -1)


HOSTILE = ["truncated", "garbage", "bad-digest", "wrong-version", "wrong-types", "answers-outside", "paths-outside", "huge",
           "deep", "symlink", "pickle", "foreign-owner"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_cache_file_is_ignored_and_rebuilt(project: tuple[Path, dict[str, str]], kind: str) -> None:
    repo, env = project
    if kind == "foreign-owner" and os.getuid() != 0:
        pytest.skip("changing a file's owner needs root")
    path, data, expected = _valid_cache(env, repo)
    _hostile(kind, data, path, repo.parent)
    counter = _CountScans()
    engine = _engine(env, counter)
    assert _outcomes(engine, repo) == expected == _uncached(env, repo)
    assert counter.calls == 2  # nothing was taken from the hostile file
    assert engine.discovery.persistent.stats["hits"] == 0
    assert not (repo.parent / "unpickled").exists()
    # Rebuilt: a regular file of ours again, which the next process uses.
    assert not path.is_symlink() and path.stat().st_uid == os.getuid()
    again = _CountScans()
    assert _outcomes(_engine(env, again), repo) == expected and again.calls == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_random_mutations_never_change_the_output(project: tuple[Path, dict[str, str]], data: st.DataObject) -> None:
    repo, env = project
    path, original, expected = _valid_cache(env, repo)
    mutated = bytearray(original)
    for _ in range(data.draw(st.integers(1, 6))):
        where = data.draw(st.integers(0, max(0, len(mutated) - 1)))
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "digit"]))
        if action == "flip" and mutated:
            mutated[where] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del mutated[where:where + data.draw(st.integers(1, 64))]
        elif action == "insert":
            mutated[where:where] = data.draw(st.binary(min_size=1, max_size=16))
        elif mutated and chr(mutated[where]).isdigit():  # a signature or an index moves
            mutated[where] = ord(str((int(chr(mutated[where])) + 1) % 10))
    path.write_bytes(bytes(mutated))
    assert _outcomes(_engine(env), repo) == expected


_SLOW_WRITER = """
import os, sys, time
import rules_core.discovery.cache_files as cache_files
import rules_core.discovery.persistent as persistent
def slow(directory, name, data):  # the project file's write: half written, then killed
    import tempfile
    fd, temporary = tempfile.mkstemp(prefix=cache_files._TEMP_PREFIX, dir=directory)
    os.write(fd, data[: len(data) // 2])
    open(sys.argv[2], "w").close()  # tell the test: killed from here on, mid-write
    time.sleep(60)
persistent.write_atomically = slow
now = int(sys.argv[3])
persistent.now_ns = lambda: now  # the test's clock (settle_racy_clock)
from rules_hosts.cli import main
sys.exit(main(["--cwd", sys.argv[1], "report", "--json", "--no-branch", "--touched", "packages/b/src/app.ts"]))
"""


def _cli(*args: str) -> list[str]:
    """``pi-rules ARGS`` as its own process, on the test's clock (settle_racy_clock)."""
    return [sys.executable, "-c", SETTLED_CLI, str(persistent.now_ns()), *args]


@pytest.mark.parametrize("had_cache", [False, True])
def test_kill_during_write_leaves_a_usable_cache(project: tuple[Path, dict[str, str]], had_cache: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    repo, env = project
    env = {**env, "PYTHONPATH": str(ROOT)}
    args = ["--cwd", str(repo), "report", "--json", "--no-branch", "--touched", TOUCHED[0]]
    expected = subprocess.run(_cli(*args), env={**env, CACHE_ENV: "off"}, capture_output=True, text=True,
                              check=True).stdout
    if had_cache:
        subprocess.run(_cli(*args), env=env, capture_output=True, check=True)
        # A change makes the next process rewrite the file, and that write is killed.
        (repo / "docs" / "new.py").write_text("x")
        settle_racy_clock(monkeypatch)  # a second later: the change has settled
    before = [p.read_bytes() for p in _cache_files(env)]
    marker = repo.parent / "writing"
    writer = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(repo), str(marker), str(persistent.now_ns())],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(6000):  # up to a minute for the writer to reach the write
            if marker.exists() or writer.poll() is not None:
                break
            time.sleep(0.01)
        assert marker.exists()
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert [p.read_bytes() for p in _cache_files(env)] == before  # the old file, or none
    expected = subprocess.run(_cli(*args), env={**env, CACHE_ENV: "off"}, capture_output=True, text=True,
                              check=True).stdout
    after = subprocess.run(_cli(*args), env=env, capture_output=True, text=True, check=True).stdout
    assert after == expected
    assert subprocess.run(_cli(*args), env=env, capture_output=True, text=True, check=True).stdout == expected
    assert len(_cache_files(env)) == 1


@pytest.mark.parametrize("command", [["report", "--json"], ["render"], ["explain", "packages/b/lib/x.go"],
                                     ["report"]])
def test_cli_output_identical_with_and_without_cache(project: tuple[Path, dict[str, str]], command: list[str]) -> None:
    repo, env = project
    env = {**env, "PYTHONPATH": str(ROOT)}
    cli = _cli("--cwd", str(repo), *command)
    if command[0] != "explain":
        cli += ["--no-branch", "--touched", TOUCHED[0]]
    off = subprocess.run(cli, env={**env, CACHE_ENV: "off"}, capture_output=True, text=True, check=True).stdout
    cold = subprocess.run(cli, env=env, capture_output=True, text=True, check=True).stdout
    assert _cache_files(env)
    warm = subprocess.run(cli, env=env, capture_output=True, text=True, check=True).stdout
    assert off == cold == warm


def test_long_lived_engine_sees_a_change_after_invalidation(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    engine = _engine(env)
    before = _outcomes(engine, repo)
    (repo / "docs" / "style.css").write_text("x")
    engine.invalidate_scans()  # what the session runtime does after a write
    after = _outcomes(engine, repo)
    assert after != before and after == _uncached(env, repo)


def test_symlinked_cache_directory_is_never_used(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    expected = _outcomes(_engine({**env, "XDG_CACHE_HOME": str(elsewhere)}), repo)
    planted = {p.name: p.read_bytes() for p in (elsewhere / "pi-rules").iterdir()}
    (Path(env["XDG_CACHE_HOME"])).mkdir()
    (Path(env["XDG_CACHE_HOME"]) / "pi-rules").symlink_to(elsewhere / "pi-rules")
    counter = _CountScans()
    assert _outcomes(_engine(env, counter), repo) == expected
    assert counter.calls == 2  # nothing read through the link
    assert {p.name: p.read_bytes() for p in (elsewhere / "pi-rules").iterdir()} == planted  # nothing written
