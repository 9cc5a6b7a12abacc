"""``pi-rules serve``: a JSON-lines protocol over stdin/stdout that drives one ``Session``.

One request per line ``{"id", "method", "params"}``, one response per line, in order:
``{"id", "result"}`` or ``{"id", "error": {"code", "message"}}`` with JSON-RPC's error
numbers. Nothing a host sends can stop the server: every line gets an answer (blank lines
are skipped) and only EOF ends it, with exit status 0. See ``docs/protocol.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from typing import IO, Any, Callable

from rules_core.engine.core import Engine
from rules_core.safe import safe_line
from rules_core.stream.watcher import SURFACES

from rules_hosts.protocols.loaded import host_loaded
from rules_hosts.session.facts import LIVE
from rules_hosts.session.runtime import Session
from rules_hosts.session.file import SessionFile, entry_refusal
from rules_hosts.stats.journal import delivery_for, read_record, session_rules, stream_record, turn_record
from rules_hosts.shapes import evaluation_json

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_LINE = 1 << 20  # bytes (characters on a text stream) per request line
MAX_DEPTH = 100  # nesting of a request; real ones are under 10 deep

_ANY = object()  # a parameter the session validates itself (untrusted payloads)
_ABSENT = object()


class RequestError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# method -> {param: (accepted types or _ANY, default or _ABSENT when required)}
_PARAMS: dict[str, dict[str, tuple[Any, Any]]] = {
    "session_start": {"reason": ((str,), "startup"), "entries": ((list, type(None)), _ABSENT)},
    "session_tree": {"entries": ((list, type(None)), _ABSENT)},
    "session_switch": {"entries": ((list, type(None)), _ABSENT)},
    "compact": {},
    "tool_start": {"tool": ((str,), _ABSENT), "args": (_ANY, None)},
    "tool_result": {"tool": ((str,), _ABSENT), "content": (_ANY, _ABSENT), "is_error": ((bool, type(None)), False)},
    "before_agent_start": {
        "prompt": ((str,), ""), "model": ((str, type(None)), None),
        "tools": ((list,), []), "branch": ((str, type(None)), LIVE),
        # What the host already put in the prompt (Pi: systemPromptOptions), left out.
        "context_files": ((list, type(None)), None), "skills": ((list, type(None)), None),
    },
    "command": {"text": ((str,), _ABSENT)},
    "read_rule": {"args": (_ANY, _ABSENT)},
    "read_rule_tool": {},
    "status": {},
    "evaluate": {},
    "trust_status": {},
    # Stream rules (docs/stream.md): the model's output as it streams.
    "stream_turn": {},
    "stream_delta": {
        "source": ((str,), _ABSENT), "text": ((str,), _ABSENT), "tool": ((str, type(None)), None),
        "call_id": ((str, int, type(None)), None), "path": ((str, type(None)), None),
    },
    "stream_end": {
        "source": ((str,), _ABSENT), "tool": ((str, type(None)), None),
        "call_id": ((str, int, type(None)), None), "path": ((str, type(None)), None),
    },
    "stream_check": {
        "source": ((str,), _ABSENT), "text": ((str,), _ABSENT), "tool": ((str, type(None)), None),
        "path": ((str, type(None)), None),
    },
}
_OPTIONAL_LIST = ("entries",)  # absent means "the session file's", not "required"


class Server:
    """One session and, with ``--session``, its file. ``handle`` answers one line."""

    def __init__(
        self, session: Session, store: SessionFile | None = None, log: IO[str] | None = None, trust: Any = None,
    ) -> None:
        self.session = session
        self.store = store
        self.trust = trust  # the trust store's decision with --trust-store (rules_hosts.session.trust)
        self.log = log if log is not None else sys.stderr
        if store is not None:
            # Resume: the file's entries are this session's branch until the host says otherwise.
            session.session_start("startup", store.entries)

    def handle(self, line: str | bytes) -> dict[str, Any] | None:
        """The response object for one request line; ``None`` for a blank line."""
        request_id: Any = None
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            if not text.strip():
                return None
            request = _loads(text)
            if not isinstance(request, dict):
                raise RequestError(INVALID_REQUEST, "a request must be a JSON object")
            request_id = _request_id(request)
            method = request.get("method")
            if not isinstance(method, str):
                raise RequestError(INVALID_REQUEST, "'method' must be a string")
            if method not in _PARAMS:
                raise RequestError(METHOD_NOT_FOUND, f"unknown method: {safe_line(method[:100])}")
            params = _params(method, request.get("params"))
            return {"id": request_id, "result": self._call(method, params)}
        except RequestError as exc:
            return _error(request_id, exc.code, exc.message)
        except UnicodeDecodeError:
            return _error(None, PARSE_ERROR, "the line is not UTF-8")
        except Exception as exc:  # a bug must cost one answer, never the server
            return _error(request_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {safe_line(str(exc))}")

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        session = self.session
        session.last_fault = None
        if method in ("session_start", "session_tree", "session_switch"):
            if params.get("entries", _ABSENT) is _ABSENT:
                params["entries"] = self.store.entries if self.store is not None else None
            result: Any = getattr(session, method)(**params).to_json()
        elif method == "compact":
            result = session.compact().to_json()
        elif method == "tool_start":
            result = session.tool_start(params["tool"], params["args"]).to_json()
            result["persisted"], error = self._persist(result["entry"])
            if error is not None:  # the host still has the entry and may persist it itself
                result["persistError"] = error
        elif method == "tool_result":
            effect = session.tool_result(params["tool"], params["content"], params["is_error"])
            result = effect.to_json()
            self._stats(lambda: [delivery_for(session, effect.attached, "attachment")])
        elif method == "before_agent_start":
            loaded = host_loaded(params.pop("context_files"), params.pop("skills"))
            before = set(session.delivered)
            result = session.before_agent_start(**params, host_loaded=loaded).to_json()
            new = [i for i in session.delivered if i not in before]
            last = session.last_evaluation
            self._stats(lambda: [turn_record(last), delivery_for(session, new, "section", last)])
        elif method == "command":
            result = {"text": session.command(params["text"])}
        elif method == "read_rule":
            result = {"text": session.read_rule(params["args"])}
            self._stats(lambda: [read_record(_read_ids(session, params["args"], result["text"]))])
        elif method == "read_rule_tool":
            result = session.read_rule_tool().to_json()
        elif method == "stream_turn":
            session.stream.turn()
            result = {"watching": list(session.stream.watched)}
        elif method.startswith("stream_"):
            if params["source"] not in SURFACES:
                raise RequestError(INVALID_PARAMS, f"'source' of {method} must be one of {', '.join(SURFACES)}")
            result = getattr(session.stream, method[len("stream_"):])(**params).to_json()
            fired = [f for f in result.get("fired", ()) if isinstance(f, dict)]
            self._stats(lambda: [stream_record([f["id"] for f in fired], [f["id"] for f in fired if f.get("interrupt")])])
        elif method == "trust_status":
            result = self._trust_status()
        elif method == "status":
            result = {
                "status": session.status, "section": session.section, "touched": list(session.touched),
                "mutes": list(session.mutes), "delivered": list(session.delivered),
                "sessionFile": self.store.path if self.store is not None else None,
            }
        else:  # evaluate: the last real cycle, as `pi-rules report --json` prints one
            last = session.last_evaluation
            result = evaluation_json(last) if last is not None else None
        if session.last_fault is not None:  # swallowed by the session: tell the operator
            self._say(f"session fault in {method}: {session.last_fault}")
        return result

    def _trust_status(self) -> dict[str, Any]:
        """Who decided the session's trust, and whether an untrusted project holds rules the
        user may want (existence checks only): what a host tells its user once."""
        from rules_hosts.session.trust import TrustDecision, has_project_rules, project_markers, project_root

        session = self.session
        decision = self.trust
        if decision is None:  # the host decided (--untrusted) or the CLI's trusted default
            decision = TrustDecision(session.trusted, project_root(session.cwd),
                                     "default" if session.trusted else "host")
        result = decision.to_json()
        markers = project_markers(session.engine.hooks.importers())
        result["project_rules"] = has_project_rules(session.cwd, markers)
        return result

    def _stats(self, records: Callable[[], list[dict[str, Any] | None]]) -> None:
        """Statistics records for ``pi-rules stats`` in the session file (none without one);
        losing one costs a count, never the answer."""
        if self.store is None:
            return
        try:
            for record in records():
                if record is not None:
                    self.store.append(record)  # the file's own appender: locked, one line, bounded
        except Exception as exc:  # statistics never cost an answer
            self._say(f"statistics not recorded in {self.store.path}: {type(exc).__name__}: {safe_line(str(exc))}")

    def _persist(self, entry: Any) -> tuple[bool, str | None]:
        """Append ``entry`` to the session file: whether it is durably there, and why not.
        A refused entry (``EntryRefused``) is never written, so ``persisted: true`` always
        names an entry that a restart reads back."""
        if entry is None or self.store is None:
            return False, None
        refusal = entry_refusal(entry)  # a path no file has: not worth a line
        if refusal is not None:
            self._say(f"not appended to {self.store.path}: {refusal}")
            return False, refusal
        try:
            self.store.append(entry)
        except (OSError, ValueError) as exc:
            reason = safe_line(str(exc))[:300] or type(exc).__name__
            self._say(f"cannot append to {self.store.path}: {reason}")
            return False, reason
        return True, None

    def _say(self, message: str) -> None:
        with contextlib.suppress(Exception):
            self.log.write(f"pi-rules serve: {safe_line(message)}\n")
            self.log.flush()


def serve_stream(server: Server, instream: IO[Any], outstream: IO[Any], max_line: int = MAX_LINE) -> int:
    """Answer every line of ``instream`` on ``outstream`` until EOF; returns the exit status (0).

    Works on text (``StringIO``) and binary (``sys.stdin.buffer``) streams alike.
    """
    write = _writer(outstream)
    while True:
        line = instream.readline(max_line + 1)
        if not line:
            return 0  # EOF: the host is done
        if len(line) > max_line and not _ends_line(line):
            _discard_rest(instream, max_line)
            response: dict[str, Any] | None = _error(None, INVALID_REQUEST, f"line longer than {max_line} bytes")
        else:
            response = server.handle(line)
        if response is not None:
            write(_dumps(response))


def run(engine: Engine, args: argparse.Namespace, cwd: str) -> int:
    """``pi-rules [--cwd DIR] [--untrusted] [-p no:NAME] serve [--session FILE] [--host NAME]``."""
    store = SessionFile(args.session) if args.session else None
    host = getattr(args, "host", "pi")
    session = Session(engine, cwd, trusted=not args.untrusted, host=host)
    out = sys.stdout.buffer
    try:
        # Anything a plugin prints must not corrupt the protocol: stdout is ours alone.
        with contextlib.redirect_stdout(sys.stderr):
            server = Server(session, store, trust=getattr(args, "trust_decision", None))
            return serve_stream(server, sys.stdin.buffer, out)
    finally:
        if store is not None:
            store.close()


# -- helpers ---------------------------------------------------------------------------


def _loads(text: str) -> Any:
    try:
        value = json.loads(text)
    except RecursionError:
        raise RequestError(INVALID_REQUEST, f"request nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # JSONDecodeError, and ints with too many digits
        raise RequestError(PARSE_ERROR, f"parse error: {safe_line(str(exc))}") from None
    if _too_deep(value):
        raise RequestError(INVALID_REQUEST, f"request nested deeper than {MAX_DEPTH} levels")
    return value


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def _request_id(request: dict[str, Any]) -> Any:
    request_id = request.get("id")
    if request_id is None or isinstance(request_id, str):
        return request_id
    if isinstance(request_id, (int, float)) and not isinstance(request_id, bool) and request_id == request_id:
        if abs(request_id) != float("inf"):
            return request_id
    raise RequestError(INVALID_REQUEST, "'id' must be a string, a number or null")


def _params(method: str, raw: Any) -> dict[str, Any]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise RequestError(INVALID_PARAMS, "'params' must be an object")
    spec = _PARAMS[method]
    unknown = sorted(set(raw) - set(spec))
    if unknown:
        raise RequestError(INVALID_PARAMS, f"unknown parameter for {method}: {safe_line(unknown[0][:100])}")
    params: dict[str, Any] = {}
    for name, (types, default) in spec.items():
        if name not in raw:
            if default is _ABSENT and name not in _OPTIONAL_LIST:
                raise RequestError(INVALID_PARAMS, f"{method} requires '{name}'")
            if default is not _ABSENT:
                params[name] = default
            continue
        value = raw[name]
        if types is not _ANY and not isinstance(value, types):
            raise RequestError(INVALID_PARAMS, f"'{name}' of {method} must be {_describe(types)}")
        params[name] = value
    return params


def _describe(types: tuple[type, ...]) -> str:
    names = {str: "a string", list: "an array", bool: "a boolean", type(None): "null"}
    return " or ".join(names.get(t, t.__name__) for t in types)


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"id": request_id, "error": {"code": code, "message": message}}


def _dumps(response: dict[str, Any]) -> str:
    try:
        # ASCII only: no raw control or bidi character reaches a terminal, lone surrogates encode.
        return json.dumps(response, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        fallback = _error(response.get("id"), INTERNAL_ERROR, f"unserialisable result: {type(exc).__name__}")
        return json.dumps(fallback, ensure_ascii=True, separators=(",", ":"))


def _ends_line(line: str | bytes) -> bool:
    return line.endswith(b"\n" if isinstance(line, bytes) else "\n")


def _discard_rest(instream: IO[Any], max_line: int) -> None:
    """Read an over-long line away without holding it: the next line is the next request."""
    while True:
        chunk = instream.readline(max_line)
        if not chunk or _ends_line(chunk):
            return


def _writer(outstream: IO[Any]) -> Callable[[str], None]:
    binary = not isinstance(outstream, io.TextIOBase)

    def write(text: str) -> None:
        outstream.write((text + "\n").encode("ascii") if binary else text + "\n")
        outstream.flush()  # the host waits for this answer before its next event

    return write


def _read_ids(session: Session, args: Any, text: str) -> list[str]:
    """The rule a ``read_rule`` call returned (by its exact reference), if it returned one."""
    name = args.get("path") if isinstance(args, dict) else args
    if not isinstance(name, str) or text.startswith("Unknown rule"):
        return []
    last = session.last_evaluation
    rules = last.rules if last is not None else session_rules(session)
    return [r.id for r in rules if r.reference == name][:1]
