"""The session-wide guard (tests/session_guard.py): this run's HOME, XDG folders and
runtime folder are its own, and a write under a watched place is seen."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import session_guard
from rules_hosts.cli import main


def test_home_and_xdg_folders_point_into_this_runs_folder():
    run = Path(os.environ["XDG_RUNTIME_DIR"]).parent
    assert run.name.startswith("pi-rules-test-run-")
    for name in ("HOME", "XDG_RUNTIME_DIR"):
        assert Path(os.environ[name]).is_relative_to(run), name
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        assert name not in os.environ, name  # so each follows HOME, into this run's folder
    assert Path(os.path.expanduser("~")) != session_guard.REAL_HOME


def test_a_child_process_sees_the_runs_home_and_commits_with_its_identity(tmp_path):
    said = subprocess.run([sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert said == os.environ["HOME"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a").write_text("a")
    subprocess.run(["git", "-C", str(tmp_path), "add", "a"], check=True)
    done = subprocess.run(["git", "-C", str(tmp_path), "commit", "-q", "-m", "a"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_cli_writes_its_caches_under_the_runs_home(tmp_path, capsys):
    (tmp_path / ".pi" / "rules").mkdir(parents=True)
    (tmp_path / ".pi" / "rules" / "a.md").write_text("---\ndescription: a\nalwaysApply: true\n---\nA.\n")
    assert main(["--cwd", str(tmp_path), "list"]) == 0
    capsys.readouterr()
    cache = Path(os.environ["HOME"]) / ".cache" / "pi-rules"
    assert cache.is_dir() and any(cache.iterdir())  # the entry-point cache, in this run's home
    assert cache.is_relative_to(Path(os.environ["XDG_RUNTIME_DIR"]).parent)


def test_the_comparison_sees_a_created_a_changed_and_a_removed_path():
    # The positive control of the end-of-run check: each kind of write is reported.
    before = {"/h/.cache/pi-rules": (1, 0), "/h/.cache/pi-rules/a": (1, 3), "/h/.pi": None}
    after = {"/h/.cache/pi-rules": (2, 0), "/h/.cache/pi-rules/a": (1, 4), "/h/.cache/pi-rules/b": (3, 1),
             "/h/.pi": (5, 0)}
    assert session_guard.written(before, after) == ["/h/.cache/pi-rules", "/h/.cache/pi-rules/a",
                                                    "/h/.cache/pi-rules/b", "/h/.pi"]
    assert session_guard.written(after, after) == []


def test_snapshot_reads_a_real_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(session_guard, "REAL_HOME", tmp_path)
    monkeypatch.setattr(session_guard, "caught", [])  # these writes are the control's own
    before = session_guard.snapshot()
    (tmp_path / ".cache" / "pi-rules").mkdir(parents=True)
    (tmp_path / ".cache" / "pi-rules" / "x.json").write_text("{}")
    assert session_guard.written(before, session_guard.snapshot()) == [
        str(tmp_path / ".cache" / "pi-rules"), str(tmp_path / ".cache" / "pi-rules" / "x.json")]


def test_the_audit_hook_catches_a_write_under_the_real_home(monkeypatch, tmp_path):
    # Pointed at a stand-in home, so the control writes nowhere real.
    monkeypatch.setattr(session_guard, "REAL_HOME", tmp_path)
    monkeypatch.setattr(session_guard, "caught", [])
    (tmp_path / ".cache").mkdir()
    (tmp_path / "elsewhere.txt").write_text("not watched")
    (tmp_path / ".cache" / "pi-rules").mkdir()
    (tmp_path / ".cache" / "pi-rules" / "x.json").write_text("{}")
    (tmp_path / ".cache" / "pi-rules" / "x.json").read_text()  # a read is no write
    assert session_guard.caught == [f"os.mkdir {tmp_path / '.cache' / 'pi-rules'}",
                                    f"open {tmp_path / '.cache' / 'pi-rules' / 'x.json'}"]


def _hook_server(socket: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A real hook server on ``socket``, started as the hook client starts one."""
    socket.parent.mkdir(mode=0o700)
    return subprocess.Popen([sys.executable, "-P", "-m", "rules_hosts.hook_server.server", str(socket)],
                            env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def test_a_hook_server_of_this_run_is_found_and_stopped_and_another_runs_is_not():
    # The check after every test (tests/conftest.py) rests on these two helpers: a server
    # a test started is seen (by the run's marker in its environment) and stopped; one of
    # another checkout's run on the machine is neither.
    before = session_guard.processes()
    folder = Path(tempfile.mkdtemp(prefix="pr-", dir="/tmp"))  # short: a socket path fits 108 bytes
    foreign_env = {k: v for k, v in os.environ.items() if k != session_guard.RUN_MARKER}
    ours = _hook_server(folder / "a" / "hook-x", dict(os.environ))
    theirs = _hook_server(folder / "b" / "hook-x", foreign_env)
    try:
        for server in (ours, theirs):  # Popen may return while the kernel still sets up argv
            deadline = time.monotonic() + 30
            while not Path(f"/proc/{server.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
                time.sleep(0.01)
        assert session_guard.hook_servers(session_guard.processes() - before) == {ours.pid: str(folder / "a" / "hook-x")}
        assert session_guard.hook_servers(under=str(folder / "a")) == {ours.pid: str(folder / "a" / "hook-x")}
        assert session_guard.hook_servers(under=str(folder / "b")) == {theirs.pid: str(folder / "b" / "hook-x")}
        assert session_guard.stop_hook_servers({ours.pid: "a"}) == {}
        assert ours.wait(timeout=30) == -signal.SIGKILL
        assert theirs.poll() is None  # the other run's server was left alone
    finally:
        for server in (ours, theirs):
            server.kill()
            server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
