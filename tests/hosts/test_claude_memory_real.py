"""Memory files under the real Claude Code 2.1.332 (issue 24, part 7).

Four layouts of AGENTS.md / CLAUDE.md / GEMINI.md, each file holding one unique canary
line. Each layout is run twice through ``claude -p`` against the scripted Messages API
(tests/fake_messages_api.py): once with no hooks, to record what the client reads by itself
(docs/hosts.md, "What Claude Code reads by itself"), and once with pi-rules' hooks
installed as a user installs them. The model reads one source file in each package; the
assertions count each canary in the last request the model was sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from claude_real import ProxyTrap, claude_binary, claude_env, conversation_text, servers_stopped
from fake_messages_api import FakeMessagesAPI, Request, tool_use

RUN_TIMEOUT = 120
PROMPT = "Carry out the scripted steps."


def _canary(case: str, path: str) -> str:
    return f"CANARY-{case}-{path.replace('/', '-').replace('.', '-')}"


def _file(case: str, path: str) -> str:
    return f"# Project notes\n\nKeep this marker in mind: {_canary(case, path)}.\n"


@dataclass(frozen=True)
class Case:
    files: tuple[str, ...]  # memory files holding a canary of their own
    links: tuple[tuple[str, str], ...]  # (link, target) symbolic links
    reads: tuple[str, ...]  # source files the model reads, in order


CASES = {
    # No CLAUDE.md anywhere: the root AGENTS.md and a package's AGENTS.md.
    "agents": Case(("AGENTS.md", "packages/a/AGENTS.md"), (), ("packages/a/src/index.ts",)),
    # CLAUDE.md beside AGENTS.md, at the root and in a package.
    "both": Case(("AGENTS.md", "CLAUDE.md", "packages/a/AGENTS.md", "packages/a/CLAUDE.md"), (),
                 ("packages/a/src/index.ts",)),
    # CLAUDE.md → AGENTS.md links, at the root and in a package (vercel/ai's layout).
    "symlink": Case(("AGENTS.md", "packages/a/AGENTS.md"),
                    (("CLAUDE.md", "AGENTS.md"), ("packages/a/CLAUDE.md", "AGENTS.md")), ("packages/a/src/index.ts",)),
    # A root CLAUDE.md and packages with their own AGENTS.md, CLAUDE.md, GEMINI.md.
    "nested": Case(("CLAUDE.md", "packages/a/AGENTS.md", "packages/b/CLAUDE.md", "packages/c/GEMINI.md"), (),
                   ("packages/a/src/index.ts", "packages/b/src/index.ts", "packages/c/src/index.ts")),
}


@dataclass(frozen=True)
class Run:
    project: Path
    last: str  # everything the model saw in the last main request
    main: list[Request]
    outside: list[str]


def _project(root: Path, name: str, case: Case) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for path in case.files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(_file(name, path))
    for link, target in case.links:
        os.symlink(target, root / link)
    for path in case.reads:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("export const value = 1;\n")


def _run(tmp: Path, name: str, hooked: bool) -> Run:
    binary = claude_binary()
    case = CASES[name]
    project = tmp / "project"
    for folder in (project, tmp / "home", tmp / "state", tmp / "config", tmp / "cache"):
        folder.mkdir(parents=True)
    _project(project, name, case)
    script = [[tool_use(f"toolu_read{i:02d}", "Read", {"file_path": str(project / path)})]
              for i, path in enumerate(case.reads)]
    runtime = Path(tempfile.mkdtemp(prefix="cm-", dir="/tmp"))
    with FakeMessagesAPI(script) as api, ProxyTrap() as trap, servers_stopped(runtime):
        env = {**claude_env(tmp, api.url, trap.url), "XDG_RUNTIME_DIR": str(runtime)}
        if hooked:
            done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code", "--install"],
                                  cwd=project, env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, f"--install failed:\n{done.stdout}{done.stderr}"
        done = subprocess.run(
            [binary, "-p", PROMPT, "--output-format", "json", "--model", "claude-sonnet-4-5",
             "--permission-mode", "acceptEdits", "--allowedTools", "Read", "--strict-mcp-config"],
            cwd=project, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"claude exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    assert json.loads(done.stdout)["result"] == "Done.", done.stdout
    main = [r for r in api.requests if r.is_main]
    return Run(project, conversation_text(main[-1]), main, list(trap.attempts))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, bool], Run]]:
    cache: dict[tuple[str, bool], Run] = {}

    def get(name: str, hooked: bool) -> Run:
        if (name, hooked) not in cache:
            cache[name, hooked] = _run(tmp_path_factory.mktemp(f"{name}-{'hooked' if hooked else 'native'}"),
                                       name, hooked)
        return cache[name, hooked]

    yield _Lazy(get)  # type: ignore[misc]


class _Lazy(dict):  # type: ignore[type-arg]
    """Runs each (case, hooked) on first use, so a ``-k`` selection runs only its own."""

    def __init__(self, get: object) -> None:
        super().__init__()
        self._get = get

    def __missing__(self, key: tuple[str, bool]) -> Run:
        return self._get(*key)  # type: ignore[operator,no-any-return]


def _counts(run: Run, name: str) -> dict[str, int]:
    case = CASES[name]
    return {path: run.last.count(_canary(name, path)) for path in case.files}


# What 2.1.332 put into the conversation by itself, measured with no hooks (docs/hosts.md).
NATIVE = {
    "agents": {"AGENTS.md": 1, "packages/a/AGENTS.md": 1},
    "both": {"AGENTS.md": 0, "CLAUDE.md": 1, "packages/a/AGENTS.md": 0, "packages/a/CLAUDE.md": 1},
    "symlink": {"AGENTS.md": 1, "packages/a/AGENTS.md": 1},
    "nested": {"CLAUDE.md": 1, "packages/a/AGENTS.md": 0, "packages/b/CLAUDE.md": 1, "packages/c/GEMINI.md": 0},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_what_claude_code_reads_by_itself(runs: dict[tuple[str, bool], Run], name: str) -> None:
    run = runs[name, False]
    assert run.outside == []
    assert _counts(run, name) == NATIVE[name]


HOOKED = sorted(CASES)


@pytest.mark.parametrize("name", HOOKED)
def test_every_canary_reaches_the_model_once_with_the_hooks(runs: dict[tuple[str, bool], Run], name: str) -> None:
    run = runs[name, True]
    assert run.outside == []
    assert _counts(run, name) == dict.fromkeys(CASES[name].files, 1)
