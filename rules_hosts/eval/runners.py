"""Agent runners: what drives one agent through one run of a case (docs/eval.md).

A runner is an ``AgentRunner`` that plugins return from ``pi_rules_agent_runners``; the
built-ins are ``command`` (any CLI agent: argv, the prompt on stdin, the section in
``PI_RULES_SECTION``), ``claude-code`` (the real ``claude -p`` with pi-rules' hooks
installed in the run's copy) and ``pi`` (``pi_runner``). A runner never raises: whatever goes wrong is the run's
``error``, and the checks still judge what is on disk.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

from .cases import EvalCase
from .process import count, last_json, spawn, transcript_records, walk
from .workspace import Workspace

CLAUDE_ENV = "PI_RULES_EVAL_CLAUDE"  # the claude binary (default: `claude` on PATH)
CLAUDE_ARGS_ENV = "PI_RULES_EVAL_CLAUDE_ARGS"  # more arguments, e.g. "--model claude-sonnet-4-5"
SECTION_ENV = "PI_RULES_SECTION"
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
    """``command`` and ``claude-code`` (the ``eval`` plugin adds ``pi`` beside them)."""
    return [AgentRunner("command", run_command, lambda: None),
            AgentRunner("claude-code", run_claude, _claude_missing)]


# -- command ----------------------------------------------------------------------------------


def run_command(request: RunRequest) -> RunOutcome:
    env = {**request.env, SECTION_ENV: request.section}
    status, out, error = spawn(list(request.case.command), request.workspace.project, env,
                               request.case.prompt, request.timeout)
    usage = last_json(out).get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return RunOutcome(status, error, count(usage.get("input_tokens")), count(usage.get("output_tokens")))


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
    status, out, error = spawn(argv, project, env, "", request.timeout)
    result = last_json(out)
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    inputs = [count(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if error is None and result.get("is_error") is True:
        error = f"claude reported an error: {str(result.get('result'))[:200]}"
    cost = result.get("total_cost_usd")
    listed, fetched = _transcript_reads(config_dir, request.rule_path)
    return RunOutcome(
        status, error, sum(i for i in inputs if i is not None) if any(i is not None for i in inputs) else None,
        count(usage.get("output_tokens")), float(cost) if isinstance(cost, (int, float)) else None, listed, fetched,
    )


def _transcript_reads(config_dir: str, rule_path: str | None) -> tuple[bool | None, bool | None]:
    """Whether Claude Code's own transcript of the run shows the rule's index line, and a
    Read of the rule file (how the model fetches an on-demand rule under this host)."""
    if rule_path is None:
        return None, None
    target = os.path.realpath(rule_path)
    listed = fetched = False
    for record in transcript_records(os.path.join(config_dir, "projects")):
        for item in walk(record):
            if isinstance(item, str) and rule_path in item and CLAUDE_INDEX_TAIL in item:
                listed = True
            elif isinstance(item, dict) and item.get("type") == "tool_use" and item.get("name") == "Read":
                path = (item.get("input") or {}).get("file_path") if isinstance(item.get("input"), dict) else None
                if isinstance(path, str) and os.path.realpath(path) == target:
                    fetched = True
    return listed, fetched
