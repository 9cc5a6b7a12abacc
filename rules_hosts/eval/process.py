"""Process and transcript plumbing shared by the agent runners: one agent process run in
its own process group under a time limit, and bounded reads of the JSON lines agents
write (docs/eval.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any, Iterator

MAX_OUTPUT = 4 * 1024 * 1024
MAX_TRANSCRIPT = 64 * 1024 * 1024


def spawn(argv: list[str], cwd: str, env: dict[str, str], stdin: str, timeout: float) -> tuple[int | None, str, str | None]:
    """Exit status, stdout (bounded) and an error; the whole process group is killed on
    timeout, so an agent's children do not outlive its run."""
    try:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return None, "", f"cannot start {argv[0]}: {exc.strerror or exc}"
    try:
        out, err = process.communicate(stdin.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        process.communicate()
        return None, "", f"timed out after {timeout:g} s"
    finally:
        kill_group(process.pid)  # whatever the agent left running in its group
    error = None
    if process.returncode != 0:
        tail = err[-400:].decode("utf-8", "replace").strip().splitlines()
        error = f"exit status {process.returncode}" + (f": {tail[-1]}" if tail else "")
    return process.returncode, out[:MAX_OUTPUT].decode("utf-8", "replace"), error


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def last_json(out: str) -> dict[str, Any]:
    """The last stdout line when it is a JSON object (how an agent may report its usage)."""
    lines = [line for line in out.strip().splitlines() if line.strip()]
    if not lines:
        return {}
    try:
        value = json.loads(lines[-1])
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def transcript_records(folder: str) -> Iterator[Any]:
    """Every JSON line of the ``.jsonl`` files below ``folder``, at most MAX_TRANSCRIPT bytes
    in all (unparsable lines skipped)."""
    budget = MAX_TRANSCRIPT
    for base, _, names in os.walk(folder):
        for name in sorted(n for n in names if n.endswith(".jsonl")):
            data = _read(os.path.join(base, name), budget)
            budget -= len(data)
            yield from _lines(data)


def jsonl_records(path: str) -> Iterator[Any]:
    """Every JSON line of one file (at most MAX_TRANSCRIPT bytes of it; none when it is missing)."""
    yield from _lines(_read(path, MAX_TRANSCRIPT))


def _read(path: str, budget: int) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(max(0, budget))
    except OSError:
        return b""


def _lines(data: bytes) -> Iterator[Any]:
    for line in data.splitlines():
        try:
            yield json.loads(line)
        except (ValueError, RecursionError):
            continue


def walk(value: Any, depth: int = 0) -> Iterator[Any]:
    if depth > 32:
        return
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item, depth + 1)
