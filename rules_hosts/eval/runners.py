"""Agent runners: what drives one agent through one run of a case (docs/eval.md).

A runner is an ``AgentRunner`` that plugins return from ``pi_rules_agent_runners``; the
built-ins are ``command`` (any CLI agent: argv, the prompt on stdin, the section in
``PI_RULES_SECTION``) and ``claude-code`` (the real ``claude -p`` with pi-rules' hooks
installed in the run's copy). A runner never raises: whatever goes wrong is the run's
``error``, and the checks still judge what is on disk.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .cases import EvalCase
from .workspace import Workspace

CLAUDE_ENV = "PI_RULES_EVAL_CLAUDE"  # the claude binary (default: `claude` on PATH)
CLAUDE_ARGS_ENV = "PI_RULES_EVAL_CLAUDE_ARGS"  # more arguments, e.g. "--model claude-sonnet-4-5"
SECTION_ENV = "PI_RULES_SECTION"
MAX_OUTPUT = 4 * 1024 * 1024
MAX_TRANSCRIPT = 64 * 1024 * 1024
CLAUDE_TOOLS = "Read,Write,Edit,MultiEdit"
CLAUDE_INDEX_TAIL = "(read it with the Read tool)"  # CONTRACT §6: the hook's index line


@dataclass(frozen=True)
class RunRequest:
    """One run: the case, its arm (``with``, ``without``, ``variant``), the run's copy and
    environment (HOME, XDG folders and settings of its own), the rule file's path in the
    copy (``None`` for a rule with no file there), the section a host would inject at
    session start, and the time limit."""

    case: EvalCase
    arm: str
    workspace: Workspace
    env: dict[str, str]
    rule_path: str | None
    section: str
    timeout: float


@dataclass(frozen=True)
class RunOutcome:
    """What a runner saw. ``None`` wherever the agent does not say: tokens, and whether an
    on-demand rule was listed and its body fetched."""

    exit: int | None = None
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    listed: bool | None = None
    fetched: bool | None = None


@dataclass(frozen=True)
class AgentRunner:
    """``run`` drives the agent; ``missing`` says why it cannot run here (``None``: it can)."""

    name: str
    run: Callable[[RunRequest], RunOutcome]
    missing: Callable[[], str | None]


def builtin_runners() -> list[AgentRunner]:
    return [AgentRunner("command", run_command, lambda: None),
            AgentRunner("claude-code", run_claude, _claude_missing)]


# -- processes ------------------------------------------------------------------------------


def _spawn(argv: list[str], cwd: str, env: dict[str, str], stdin: str, timeout: float) -> tuple[int | None, str, str | None]:
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
        _kill_group(process.pid)
        process.communicate()
        return None, "", f"timed out after {timeout:g} s"
    finally:
        _kill_group(process.pid)  # whatever the agent left running in its group
    error = None
    if process.returncode != 0:
        tail = err[-400:].decode("utf-8", "replace").strip().splitlines()
        error = f"exit status {process.returncode}" + (f": {tail[-1]}" if tail else "")
    return process.returncode, out[:MAX_OUTPUT].decode("utf-8", "replace"), error


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


# -- command ----------------------------------------------------------------------------------


def run_command(request: RunRequest) -> RunOutcome:
    env = {**request.env, SECTION_ENV: request.section}
    status, out, error = _spawn(list(request.case.command), request.workspace.project, env,
                                request.case.prompt, request.timeout)
    usage = _last_json(out).get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return RunOutcome(status, error, _count(usage.get("input_tokens")), _count(usage.get("output_tokens")))


def _last_json(out: str) -> dict[str, Any]:
    """The last stdout line when it is a JSON object (how an agent may report its usage)."""
    lines = [line for line in out.strip().splitlines() if line.strip()]
    if not lines:
        return {}
    try:
        value = json.loads(lines[-1])
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# -- claude-code ------------------------------------------------------------------------------


def _claude_binary() -> str | None:
    return os.environ.get(CLAUDE_ENV) or shutil.which("claude")


def _claude_missing() -> str | None:
    if _claude_binary() is None:
        return f"the claude binary is not on PATH; install Claude Code or set {CLAUDE_ENV}"
    return None


def run_claude(request: RunRequest) -> RunOutcome:
    binary = _claude_binary()
    if binary is None:
        return RunOutcome(error=_claude_missing())
    project = request.workspace.project
    config_dir = os.path.join(request.workspace.folder("home"), ".claude")
    # Each run's hooks answer in process: a resident hook server would be shared between
    # runs whose settings differ (the "without" arm's mute).
    env = {**request.env, "CLAUDE_CONFIG_DIR": config_dir, "PI_RULES_HOOK_SERVER": "off"}
    try:
        install = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code", "--install",
                                  "--scope", "local"], cwd=project, env=env, capture_output=True, text=True,
                                 timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return RunOutcome(error=f"installing the hooks failed: {type(exc).__name__}")
    if install.returncode != 0:
        return RunOutcome(error=f"installing the hooks failed: {install.stderr.strip()[-300:]}")
    argv = [binary, "-p", request.case.prompt, "--output-format", "json", "--permission-mode", "acceptEdits",
            "--allowedTools", CLAUDE_TOOLS, "--strict-mcp-config", *shlex.split(os.environ.get(CLAUDE_ARGS_ENV, ""))]
    status, out, error = _spawn(argv, project, env, "", request.timeout)
    result = _last_json(out)
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    inputs = [_count(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if error is None and result.get("is_error") is True:
        error = f"claude reported an error: {str(result.get('result'))[:200]}"
    cost = result.get("total_cost_usd")
    listed, fetched = _transcript_reads(config_dir, request.rule_path)
    return RunOutcome(
        status, error, sum(i for i in inputs if i is not None) if any(i is not None for i in inputs) else None,
        _count(usage.get("output_tokens")), float(cost) if isinstance(cost, (int, float)) else None, listed, fetched,
    )


def _transcript_reads(config_dir: str, rule_path: str | None) -> tuple[bool | None, bool | None]:
    """Whether Claude Code's own transcript of the run shows the rule's index line, and a
    Read of the rule file (how the model fetches an on-demand rule under this host)."""
    if rule_path is None:
        return None, None
    target = os.path.realpath(rule_path)
    listed = fetched = False
    for record in _transcript_records(os.path.join(config_dir, "projects")):
        for item in _walk(record):
            if isinstance(item, str) and rule_path in item and CLAUDE_INDEX_TAIL in item:
                listed = True
            elif isinstance(item, dict) and item.get("type") == "tool_use" and item.get("name") == "Read":
                path = (item.get("input") or {}).get("file_path") if isinstance(item.get("input"), dict) else None
                if isinstance(path, str) and os.path.realpath(path) == target:
                    fetched = True
    return listed, fetched


def _transcript_records(folder: str) -> Iterator[Any]:
    budget = MAX_TRANSCRIPT
    for base, _, names in os.walk(folder):
        for name in sorted(n for n in names if n.endswith(".jsonl")):
            try:
                with open(os.path.join(base, name), "rb") as handle:
                    data = handle.read(budget)
            except OSError:
                continue
            budget -= len(data)
            for line in data.splitlines():
                try:
                    yield json.loads(line)
                except (ValueError, RecursionError):
                    continue


def _walk(value: Any, depth: int = 0) -> Iterator[Any]:
    if depth > 32:
        return
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, depth + 1)
