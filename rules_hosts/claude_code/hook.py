"""``pi-rules hook claude-code``: the Session driven by Claude Code's command hooks.

Claude Code starts one process per hook event and hands it one JSON payload on stdin.
The session therefore lives in a state file, ``<state>/pi-rules/claude-code/<id>.jsonl``:
each process folds it into a fresh ``Session``, handles its one event and appends what
changed — holding the session lock throughout when the event may deliver rules, since
parallel tool calls run their hooks at once (``state.py``). Whatever happens, the
process exits 0 — a hook that fails must never block the agent — and says what went
wrong on stderr only. See docs/hosts.md.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Mapping, TextIO

from rules_core.engine.core import Engine
from rules_core.lookup import normalize_touched
from rules_core.safe import safe_line
from rules_core.settings.resolved import Resolved

from rules_hosts.cli.config import configured_engine
from rules_hosts.session.deliver_once import prompt_update
from rules_hosts.session.runtime import Session, touched_entry
from rules_hosts.session.stream import read_records, read_switch_offs, switch_off_record
from rules_hosts.stats.journal import DELIVERY_TYPE, delivery_for, listed_paths, read_record, stream_record, turn_record
from .payload import agent_of, model_fact, tool_fact
from .state import CLEAR_TYPE, COMPACT_TYPE, DELIVERED_TYPE, MODEL_TYPE, STOPPED_TYPE, HookError
from .state import Journal as _Journal, State as _State, load as _load, lock_path, lock_wait_ms, section_digest
from .state import section_record, session_lock
from .tools import HOST, SESSION_TOOLS

_Given = tuple[Engine | None, Resolved | None]  # the caller's engine and the settings it read, if any
MAX_PAYLOAD = 16 * 1024 * 1024  # Read results can be large; beyond this it is hostile
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def run_cli(engine: Engine, args: Any, cwd: str, resolved: Resolved | None = None) -> int:
    """The CLI entry for one hook payload from stdin (plugin.py sends the setup to install.py);
    ``resolved``: the settings the CLI read at the call's entry."""
    trusted = not getattr(args, "untrusted", False)
    return main(sys.stdin, sys.stdout, sys.stderr, engine=engine, cwd=cwd, trusted=trusted, resolved=resolved)


def main(
    stdin: TextIO, stdout: TextIO, stderr: TextIO, *, engine: Engine | None = None,
    cwd: str = ".", trusted: bool = True, env: Mapping[str, str] | None = None, resolved: Resolved | None = None,
) -> int:
    """Handle one payload. Always 0: a broken hook must never block the agent."""
    try:
        env = dict(os.environ if env is None else env)
        output = _handle(stdin, stderr, (engine, resolved), cwd, trusted, env)
        if output is not None:
            stdout.write(json.dumps(output) + "\n")
    except HookError as exc:
        _warn(stderr, str(exc))
    except Exception as exc:  # a bug of ours: say so, still never block the agent
        _warn(stderr, f"internal error: {type(exc).__name__}: {exc}")
    return 0


def _warn(stderr: TextIO, message: str) -> None:
    try:
        stderr.write(f"pi-rules hook claude-code: {safe_line(message)}\n")
    except Exception:
        pass  # even a closed stderr must not turn into a failed hook


def _handle(
    stdin: TextIO, stderr: TextIO, engine: _Given, cwd: str, trusted: bool, env: dict[str, str]
) -> dict[str, Any] | None:
    payload = _read_payload(stdin)
    event = payload.get("hook_event_name")
    if event not in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"):
        raise HookError(f"unsupported hook_event_name {_show(event)}; nothing to do")
    path = _state_path(payload.get("session_id"), env)
    cwd = _session_cwd(payload.get("cwd"), cwd)
    if event == "PreToolUse":  # decides no delivery: never waits behind another hook's evaluation
        return _decide(payload, path, cwd, stderr, engine, trusted, env, locked=True)
    # Load, decide and append under one lock: parallel tool calls run their hooks at once,
    # and two hooks deciding from the same state would both deliver the same rule.
    with session_lock(path, env) as locked:
        if not locked:
            _warn(stderr, f"session busy: another hook held {lock_path(path)} for {lock_wait_ms(env) / 1000:g} s; "
                          f"nothing delivered by this {event} (its rules come with the next prompt)")
        return _decide(payload, path, cwd, stderr, engine, trusted, env, locked)


SCAN_OFF_TYPE = "pi-rules/scan-overran"  # exists-scan roots cut at the deadline, for later hooks


def _decide(
    payload: dict[str, Any], path: str, cwd: str, stderr: TextIO, engine: _Given, trusted: bool,
    env: dict[str, str], locked: bool,
) -> dict[str, Any] | None:
    event = payload.get("hook_event_name")
    state = _load(path, lambda message: _warn(stderr, message), compact=locked and event != "PreToolUse")
    journal = _Journal(path, lambda message: _warn(stderr, message))
    if event == "SessionStart":
        _remember_model(state, journal, payload.get("model"))
    agent_id, agent = agent_of(payload)
    tools = tool_fact(payload.get("tool_name")) if event in ("PreToolUse", "PostToolUse") else ()
    session = _session(engine, cwd, trusted, env, state, agent_id, agent)
    session.use_facts(model=state.model, tools=tools)
    # A scan an earlier hook of this session cut at the deadline is not tried again.
    known_slow = [r for rec in read_records(path, SCAN_OFF_TYPE) for r in rec.get("roots", ()) if isinstance(r, str)]
    session.engine.remember_overran(known_slow)
    output = None
    if not locked:
        _record_only(session, journal, event, payload)
    elif event == "SessionStart":
        output = _session_start(session, state, journal, payload.get("source"))
    elif event == "UserPromptSubmit":
        prompt = payload.get("prompt")
        output = _prompt(session, state, journal, prompt if isinstance(prompt, str) else "")
    else:
        tool, tool_input = payload.get("tool_name"), payload.get("tool_input")
        _capture(session, journal, tool, tool_input)
        if event == "PreToolUse":
            output = _gate(session, journal, tool, tool_input)
        if event == "PostToolUse":  # captured again: a missed PreToolUse must not lose a path
            output = _tool_result(session, journal, payload, agent_id)
    newly_slow = [root for root in session.engine.overran() if root not in known_slow]
    if newly_slow:
        journal.append({"type": SCAN_OFF_TYPE, "roots": newly_slow})
    if session.last_fault is not None:  # swallowed by the session; worth a bug report
        _warn(stderr, f"session fault: {session.last_fault}")
    return output


# -- events ---------------------------------------------------------------------------


def _remember_model(state: _State, journal: _Journal, value: Any) -> None:
    """SessionStart's model, kept for every later event (a later start may replace it)."""
    model = model_fact(value)
    if model is not None and model != state.model:
        journal.append({"type": MODEL_TYPE, "model": model})
        state.model = model


def _session_start(session: Session, state: _State, journal: _Journal, source: Any) -> dict[str, Any] | None:
    if source == "clear":
        # Claude Code keeps no transcript across /clear: a new conversation.
        journal.append({"type": CLEAR_TYPE})
        session.session_switch([])
        state.delivered.clear()
        state.agents.clear()
    elif source == "compact":
        journal.append({"type": COMPACT_TYPE})
        session.compact()
        state.delivered.clear()
    # Every start injects the section afresh: Claude Code adds SessionStart context to
    # the new (or compacted, or resumed) transcript, so what we injected before is moot.
    # A resume keeps the delivered ids: Claude Code restores the transcript that holds them.
    session.restore("", state.delivered)
    turn = session.before_agent_start("", state.model, ())
    return _deliver(session, state, journal, "SessionStart", turn.section if turn.action == "patch" else None)


def _prompt(session: Session, state: _State, journal: _Journal, prompt: str) -> dict[str, Any] | None:
    """Only what the conversation lacks: the rules not yet delivered, one line per delivered
    rule that stopped applying. The first delivery of a conversation is the whole section."""
    first = not state.delivered and not state.section
    turn = session.before_agent_start(prompt, state.model, ())  # a prompt has no tool
    if first or turn.evaluation is None:
        return _deliver(session, state, journal, "UserPromptSubmit", turn.section if turn.action == "patch" else None)
    if turn.action != "none":  # the section as it now reads: diagnostics, and the benchmark's "before"
        journal.append(section_record(turn.section or ""))
    update = prompt_update(turn.evaluation, state.delivered, session.engine.hooks.render, reference=session.reference)
    if update.stopped:
        journal.append({"type": STOPPED_TYPE, "ids": list(update.stopped)})
    if update.delivered:
        journal.append({"type": DELIVERED_TYPE, "ids": list(update.delivered)})
    _stats(journal, turn_record(turn.evaluation), delivery_for(session, update.delivered, "section", turn.evaluation))
    return _output("UserPromptSubmit", update.text) if update.text else None


def _capture(session: Session, journal: _Journal, tool: Any, tool_input: Any) -> None:
    capture = session.tool_start(tool, tool_input)
    if capture.entry is not None:
        # Absolute paths: Claude's cwd may differ between hooks; the rebuild re-relativises.
        journal.record_touched([os.path.join(session.cwd, p) for p in capture.paths])


def _record_only(session: Session, journal: _Journal, event: Any, payload: dict[str, Any]) -> None:
    """Without the session lock: what happened is still recorded — a touched path (its rules
    come with the next prompt's section), a clear or a compaction (a delivery from the old
    transcript must not hide a rule from the new one) — but nothing is delivered."""
    if event == "PostToolUse":
        _capture(session, journal, payload.get("tool_name"), payload.get("tool_input"))
    elif event == "SessionStart" and payload.get("source") in ("clear", "compact"):
        journal.append({"type": CLEAR_TYPE if payload.get("source") == "clear" else COMPACT_TYPE})


def _gate(session: Session, journal: _Journal, tool: Any, tool_input: Any) -> dict[str, Any] | None:
    """Refuse a Write/Edit/MultiEdit/NotebookEdit whose content an interrupting, tool-scoped
    stream rule forbids, before the file changes (CONTRACT §5). Every call is checked:
    ``repeat`` does not apply, since a refused write never happened."""
    written = session.engine.hooks.tool_output(HOST, tool, tool_input)
    if written is None:
        return None
    # Conditions an earlier hook found too slow stay off: each process would otherwise
    # pay for them again, and 300 of them outlast Claude Code's timeout (issue 14, attack 4).
    known = read_switch_offs(journal.path)
    session.stream.switch_off(known)
    result = session.stream.check("tool", written.text, tool=written.tool, path=written.path)
    new = {k: v for k, v in session.stream.switched_off().items() if known.get(k) != v}
    if new:
        try:
            journal.append(switch_off_record(new))
        except HookError as exc:  # the decision below matters more than remembering
            if journal.warn is not None:
                journal.warn(str(exc))
    denying = tuple(f for f in result.fired if f.interrupt)
    _stats(journal, stream_record([f.rule.id for f in result.fired], [f.rule.id for f in denying]))
    if not denying:
        return None
    reason = session.engine.hooks.render("stream-deny", {"firings": denying})
    if not isinstance(reason, str) or not reason:
        return None  # the stream plugin is blocked: nothing to enforce with
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _tool_result(
    session: Session, journal: _Journal, payload: dict[str, Any], agent_id: str | None
) -> dict[str, Any] | None:
    """Attach what this result newly activated in its transcript: the main conversation's,
    or the sub-agent's ``agent_id`` names (``_session`` restored that one's deliveries)."""
    tool, tool_input, response = payload.get("tool_name"), payload.get("tool_input"), payload.get("tool_response")
    name = SESSION_TOOLS.get(tool, "") if isinstance(tool, str) else ""
    errored = isinstance(response, dict) and (response.get("is_error") is True or response.get("success") is False)
    # Judge this call's own paths only: with parallel calls the state also holds the other
    # calls' paths, and their rules belong to their own results (issue 14, attack 8).
    own = normalize_touched(session.engine.hooks.capture_paths(HOST, tool, tool_input), session.cwd)
    session.session_start("startup", [touched_entry(list(own))])
    # The session attaches to content parts; the parts themselves are never printed.
    effect = session.tool_result(name, [{"type": "text", "text": ""}], errored)
    read = tool_input.get("file_path") if tool == "Read" and isinstance(tool_input, dict) and not errored else None
    if isinstance(read, str):  # the model fetching the body of a rule it was pointed to
        listed = listed_paths(read_records(journal.path, DELIVERY_TYPE))
        _stats(journal, read_record([listed[read]] if read in listed else []))
    if not effect.attached or effect.block is None:
        return None
    record: dict[str, Any] = {"type": DELIVERED_TYPE, "ids": list(effect.attached)}
    if agent_id is not None:
        record["agent"] = agent_id
    journal.append(record)
    _stats(journal, delivery_for(session, effect.attached, "attachment"))
    return _output("PostToolUse", effect.block)


def _deliver(
    session: Session, state: _State, journal: _Journal, event: str, section: str | None
) -> dict[str, Any] | None:
    new = [i for i in session.delivered if i not in state.delivered]
    if new:
        journal.append({"type": DELIVERED_TYPE, "ids": new})
    _stats(journal, turn_record(session.last_evaluation), delivery_for(session, new, "section", session.last_evaluation))
    if section is None:
        return None
    if event != "SessionStart" and state.section_digest is not None and section_digest(section) == state.section_digest:
        return None  # the conversation has it: only its digest was journalled (too big)
    journal.append(section_record(section))
    return _output(event, section)


def _stats(journal: _Journal, *records: dict[str, Any] | None) -> None:
    """Statistics records for ``pi-rules stats`` (rules_hosts.stats.journal); losing one
    costs a count, never the hook's answer."""
    for record in records:
        if record is None:
            continue
        try:
            journal.append(record)
        except HookError as exc:
            if journal.warn is not None:
                journal.warn(str(exc))


def _output(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


# -- session --------------------------------------------------------------------------


def _session(
    given: _Given, cwd: str, trusted: bool, env: dict[str, str], state: _State, agent_id: str | None,
    agent: str,
) -> Session:
    engine, resolved = given
    if engine is None:  # an embedding caller's: the settings' [plugins] block still applies
        engine, resolved = configured_engine(cwd, trusted, (), ("hook", HOST), env)
    # The session's host leaves out what Claude Code reads itself (claude_code.native).
    session = Session(engine, cwd, trusted=trusted, host=HOST, env=env, agent=agent)
    if resolved is not None:  # one process, one event: the settings read at its entry serve it all
        session.use_settings(resolved)
    session.session_start("startup", state.entries)  # rebuild the touched set
    # A sub-agent never saw the main conversation's section: only its own deliveries count.
    session.restore(state.section if agent_id is None else "", state.delivered_to(agent_id))
    return session


# -- payload and state ----------------------------------------------------------------


def _read_payload(stdin: TextIO) -> dict[str, Any]:
    try:
        text = stdin.read(MAX_PAYLOAD + 1)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HookError(f"cannot read the payload: {exc}") from None
    if len(text) > MAX_PAYLOAD:
        raise HookError(f"payload larger than {MAX_PAYLOAD} characters; ignored")
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HookError(f"payload is not JSON ({exc}); ignored") from None
    if not isinstance(payload, dict):
        raise HookError("payload is not a JSON object; ignored")
    return payload


def _state_path(session_id: Any, env: Mapping[str, str]) -> str:
    """The state file; a hostile id never names anything outside the state directory."""
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id) or ".." in session_id:
        raise HookError(f"session_id {_show(session_id)} is not a safe file name; ignored")
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid, use the default
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".local", "state")
    return os.path.join(base, "pi-rules", HOST, session_id + ".jsonl")


def _session_cwd(value: Any, fallback: str) -> str:
    """The payload's ``cwd`` (Claude's working directory) when it is a real directory."""
    if isinstance(value, str) and "\0" not in value and os.path.isabs(value) and os.path.isdir(value):
        return value
    return fallback


def _show(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."
