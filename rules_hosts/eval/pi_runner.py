"""The ``pi`` agent runner: the real Pi, non-interactive (``pi --mode json``), in the run's
copy, with the pi-rules Pi extension loaded for that run only (docs/eval.md).

Each run gets its own Pi agent dir, session folder and temporary folder inside the run's
folder, so no setting, login, extension or session of the user's own Pi is read or
written. Pi's session file (JSON lines, Pi's docs/session-format.md) is what the runner
reads back: every assistant message carries Pi's ``usage`` (input, output, cache reads
and writes, cost), and a failed model call is an assistant message with ``stopReason:
"error"`` (Pi still exits 0). The extension's section is not in it (Pi stores its own
system prompt), so whether the rule was listed and read comes from the journal the run's
``pi-rules serve`` keeps (``--session``, added by the ``PI_RULES_COMMAND`` script).
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

from .process import count, jsonl_records, spawn, transcript_records, walk
from .runners import AgentRunner, RunOutcome, RunRequest

PI_ENV = "PI_RULES_EVAL_PI"  # the command that starts Pi, split like a shell (default: `pi` on PATH)
PI_ARGS_ENV = "PI_RULES_EVAL_PI_ARGS"  # more arguments, e.g. "--provider anthropic --model claude-sonnet-4-5"
PI_EXTENSION_ENV = "PI_RULES_EVAL_PI_EXTENSION"  # the pi-rules Pi extension (hosts/pi of a checkout)
PI_MODELS_ENV = "PI_RULES_EVAL_PI_MODELS"  # a models.json copied into every run's agent dir
MAX_MODELS = 1024 * 1024
# The statistics records of the run's serve journal (rules_hosts/stats/journal.py, docs/stats.md;
# the stats wing imports this one, so the names are spelt here).
TURN_TYPE, DELIVERY_TYPE, READ_TYPE = "pi-rules/turn", "pi-rules/delivery", "pi-rules/read"
_FAILED = ("error", "aborted")  # Pi's stopReason of a model call that did not finish
_CHECKOUT_EXTENSION = Path(__file__).resolve().parents[2] / "hosts" / "pi"


def pi_runner() -> AgentRunner:
    return AgentRunner("pi", run_pi, pi_missing)


def _pi_command() -> tuple[list[str] | None, str | None]:
    """The argv that starts Pi, or why there is none."""
    raw = os.environ.get(PI_ENV, "").strip()
    if not raw:
        found = shutil.which("pi")
        if found is None:
            return None, ("the pi binary is not on PATH; install Pi (npm install -g @earendil-works/pi-coding-agent, "
                          f"which needs Node >= 22.19) or set {PI_ENV} to the command that starts it")
        return [found], None
    try:
        argv = shlex.split(raw)
    except ValueError as exc:
        return None, f"{PI_ENV} is not a command line ({exc}); quote it as a shell would"
    if not argv or shutil.which(argv[0]) is None:
        return None, f"{PI_ENV}={raw!r}: {argv[0] if argv else 'nothing'} is not an executable program"
    return argv, None


def _extension() -> tuple[str | None, str | None]:
    """The pi-rules Pi extension to load with ``-e``, or why there is none."""
    given = os.environ.get(PI_EXTENSION_ENV, "").strip()
    folder = Path(given) if given else _CHECKOUT_EXTENSION
    entry = folder / "index.ts" if folder.is_dir() else folder
    if entry.is_file():
        return str(entry.resolve()), None
    if given:
        return None, f"{PI_EXTENSION_ENV}={given!r} is neither the extension's folder (hosts/pi) nor its index.ts"
    return None, (f"the pi-rules Pi extension was not found (it is hosts/pi in a pi-rules checkout, not part of "
                  f"the installed package); set {PI_EXTENSION_ENV} to that folder")


def pi_missing() -> str | None:
    for why in (_pi_command()[1], _extension()[1], _models_problem(), _extra_args()[1]):
        if why is not None:
            return why
    return None


def _extra_args() -> tuple[list[str], str | None]:
    try:
        return shlex.split(os.environ.get(PI_ARGS_ENV, "")), None
    except ValueError as exc:
        return [], f"{PI_ARGS_ENV} is not a command line ({exc}); quote it as a shell would"


def _models_problem() -> str | None:
    given = os.environ.get(PI_MODELS_ENV, "").strip()
    if not given:
        return None
    try:
        info = os.stat(given)
    except OSError as exc:
        return f"{PI_MODELS_ENV}={given!r}: {exc.strerror or exc}; name Pi's models.json file"
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MODELS:
        return f"{PI_MODELS_ENV}={given!r} is not a models.json file of at most {MAX_MODELS >> 20} MiB"
    return None


def run_pi(request: RunRequest) -> RunOutcome:
    command, why = _pi_command()
    extension, why_not = _extension()
    extra, bad_args = _extra_args()
    problem = why or why_not or _models_problem() or bad_args
    if command is None or extension is None or problem is not None:
        return RunOutcome(error=problem)
    root = request.workspace.root
    agent_dir = os.path.join(request.workspace.folder("home"), ".pi", "agent")
    sessions = os.path.join(root, "pi-sessions")
    os.makedirs(agent_dir, exist_ok=True)
    os.makedirs(sessions, exist_ok=True)
    models = os.environ.get(PI_MODELS_ENV, "").strip()
    if models:
        shutil.copyfile(models, os.path.join(agent_dir, "models.json"))  # OSError: the run's error
    journal = os.path.join(root, "pi-rules-serve.jsonl")
    # Pi's extension loader (jiti) and Node's compile cache write below the temporary
    # folder: the run's own, so nothing outlives the run.
    scratch = os.path.join(root, "tmp")
    os.makedirs(scratch, exist_ok=True)
    env = {**request.env, "PI_CODING_AGENT_DIR": agent_dir, "PI_CODING_AGENT_SESSION_DIR": sessions,
           "PI_RULES_COMMAND": _rules_command(root, journal), "TMPDIR": scratch}
    for name, value in (("PI_SKIP_VERSION_CHECK", "1"), ("PI_OFFLINE", "1"), ("PI_TELEMETRY", "0")):
        env.setdefault(name, value)
    # --approve: eval runs only in a trusted project, and a copy holding a resource Pi guards
    # (.pi/settings.json, .pi/skills, ...) would otherwise be untrusted in a non-interactive run.
    argv = [*command, "--mode", "json", "--approve", "--session-dir", sessions, "-e", extension,
            *extra, "--", request.case.prompt]
    status, _, error = spawn(argv, request.workspace.project, env, "", request.timeout)
    records = list(transcript_records(sessions))
    messages = [r["message"] for r in records
                if isinstance(r, dict) and r.get("type") == "message" and isinstance(r.get("message"), dict)]
    replies = [m for m in messages if m.get("role") == "assistant"]
    if error is None and not replies:
        error = f"pi recorded no model reply; give it a provider and model ({PI_ARGS_ENV}) and their key"
    elif error is None and replies[-1].get("stopReason") in _FAILED:
        error = f"pi reported an error: {str(replies[-1].get('errorMessage') or replies[-1].get('stopReason'))[:200]}"
    inputs, outputs, cost = _usage(replies)
    listed, fetched = _reads(list(jsonl_records(journal)), records, request)
    return RunOutcome(status, error, inputs, outputs, cost, listed, fetched)


def _rules_command(root: str, journal: str) -> str:
    """A ``pi-rules`` for the extension to start (``PI_RULES_COMMAND``): this very pi-rules,
    whatever ``PATH`` holds (``-P`` keeps the project folder off ``sys.path``). The
    extension starts ``pi-rules --cwd DIR [trust] serve``; the run's ``serve`` also keeps a
    ``--session`` journal, whose statistics records say what was listed and read (the
    extension still hands Pi's own entries to every ``session_start``, which win)."""
    folder = os.path.join(root, "bin")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "pi-rules")
    with open(path, "w", encoding="utf-8") as out:
        out.write("#!/bin/sh\n"
                  'for last in "$@"; do :; done\n'
                  f'if [ "${{last:-}}" = serve ]; then set -- "$@" --session {shlex.quote(journal)}; fi\n'
                  f'exec {shlex.quote(sys.executable)} -P -m rules_hosts "$@"\n')
    os.chmod(path, 0o755)
    return path


def _usage(replies: list[dict[str, Any]]) -> tuple[int | None, int | None, float | None]:
    """Input tokens (fresh, cache reads and cache writes added up, as for Claude Code),
    output tokens and cost, summed over the run's model calls; ``None`` where Pi said nothing."""
    inputs: list[int] = []
    outputs: list[int] = []
    costs: list[float] = []
    for reply in replies:
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        parts = [count(usage.get(key)) for key in ("input", "cacheRead", "cacheWrite")]
        inputs.extend(p for p in parts if p is not None)
        output = count(usage.get("output"))
        if output is not None:
            outputs.append(output)
        total = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), dict) else None
        if isinstance(total, (int, float)) and not isinstance(total, bool) and total >= 0:
            costs.append(float(total))
    return (sum(inputs) if inputs else None, sum(outputs) if outputs else None,
            round(sum(costs), 6) if costs else None)


def _reads(journal: list[Any], records: list[Any], request: RunRequest) -> tuple[bool | None, bool | None]:
    """Whether the rule was listed in the on-demand index in some turn, and whether the
    model fetched its body: pi-rules' own journal of the run's ``serve`` (its turn records
    name the listed ids, its read records the rules ``read_rule`` returned), or a ``read``
    of the rule file in Pi's session that Pi answered without error."""
    if request.rule_path is None:
        return None, None
    rule = request.case.rule
    listed = fetched = False
    for record in journal:
        if not isinstance(record, dict):
            continue
        named = record.get({TURN_TYPE: "listed", DELIVERY_TYPE: "pointers", READ_TYPE: "ids"}.get(
            str(record.get("type")), ""))
        if isinstance(named, list) and rule in named:
            fetched = fetched or record.get("type") == READ_TYPE
            listed = listed or record.get("type") != READ_TYPE
    return listed, fetched or _read_the_file(records, request)


def _read_the_file(records: list[Any], request: RunRequest) -> bool:
    target = os.path.realpath(str(request.rule_path))
    reads: set[str] = set()
    answered: set[str] = set()
    for record in records:
        for item in walk(record):
            if not isinstance(item, dict):
                continue
            arguments = item.get("arguments")
            if item.get("type") == "toolCall" and item.get("name") == "read" and isinstance(arguments, dict):
                path = arguments.get("path")
                if isinstance(path, str) and os.path.realpath(os.path.join(request.workspace.project, path)) == target:
                    reads.add(str(item.get("id")))
            elif item.get("role") == "toolResult" and item.get("isError") is False:
                answered.add(str(item.get("toolCallId")))
    return bool(reads & answered)
