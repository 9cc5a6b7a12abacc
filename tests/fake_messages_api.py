"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real ``claude`` binary.

The server records every request it receives (method, path, headers, JSON body) and
answers ``POST /v1/messages`` from a script: a list of turns, each a list of content
blocks (text or tool_use). Which turn answers is decided by how many tool results the
conversation already holds, so the answer is the same however many side requests
(title generation, quota checks, topic detection) the client sends in between. A side
request is one that offers no tools: it gets a short plain-text answer. Streaming
(server-sent events) and non-streaming bodies are both served.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Iterator

MAX_BODY = 64 * 1024 * 1024  # a whole conversation with file contents fits easily
SIDE_TEXT = "ok"


@dataclass(frozen=True)
class Request:
    """One request as it arrived."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None for an empty or non-JSON body

    @property
    def is_main(self) -> bool:
        """A turn of the agent loop: the client offers its tools."""
        return (
            self.method == "POST" and self.path.split("?")[0] == "/v1/messages"
            and isinstance(self.body, dict) and bool(self.body.get("tools"))
        )


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def tool_results(messages: list[Any]) -> list[dict[str, Any]]:
    """Every tool_result block of a conversation, in order."""
    return blocks_of(messages, "tool_result")


def blocks_of(messages: list[Any], kind: str) -> list[dict[str, Any]]:
    """Every content block of type ``kind`` in a conversation, in order."""
    found = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            found.extend(b for b in content if isinstance(b, dict) and b.get("type") == kind)
    return found


def block_text(block: Any) -> str:
    """All text inside a content block (a tool_result's content may be a string or parts)."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    if isinstance(block.get("text"), str):
        return block["text"]
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(block_text(part) for part in content)
    return content if isinstance(content, str) else ""


@dataclass
class FakeMessagesAPI:
    """The server. ``with FakeMessagesAPI(script) as api:`` starts it; ``api.url`` is its base."""

    script: list[list[dict[str, Any]]]
    final_text: str = "Done."
    requests: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    def __enter__(self) -> FakeMessagesAPI:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # A short poll keeps shutdown quick (serve_forever checks for it between polls).
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def main_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """The content blocks and stop reason for one main request."""
        done = len(tool_results(body.get("messages") or []))
        # One turn per tool call answered so far: turn i follows the i-th tool result.
        if done < len(self.script):
            blocks = self.script[done]
        else:
            blocks = [text(self.final_text)]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return blocks, stop


def _message(model: str, blocks: list[dict[str, Any]], stop: str, serial: int) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{serial:04d}", "type": "message", "role": "assistant", "model": model,
        "content": blocks, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Messages API's event sequence for one message."""
    start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    serial = iter(range(1, 1 << 30))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the recorded requests are the log

        def _read(self) -> Request:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(length, MAX_BODY)) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            api.record(request)
            return request

        def _json(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._read()
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

        def do_HEAD(self) -> None:
            self._read()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            request = self._read()
            path = request.path.split("?")[0]
            body = request.body if isinstance(request.body, dict) else {}
            if path == "/v1/messages/count_tokens":
                self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
                return
            if path != "/v1/messages":
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})
                return
            if request.is_main:
                blocks, stop = api.answer(body)
            else:
                blocks, stop = [text(SIDE_TEXT)], "end_turn"
            message = _message(str(body.get("model", "fake")), blocks, stop, next(serial))
            if body.get("stream"):
                self._stream(message)
            else:
                self._json(200, message)

        def _stream(self, message: dict[str, Any]) -> None:
            chunks = [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in _events(message)]
            payload = b"".join(chunks)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


# -- a model that obeys a rule exactly when the rule reached it ----------------------------

_WORKDIR = re.compile(r"Primary working directory: (\S+)")
_INDEX_LINE = re.compile(r"^- (/\S+) — .*\(read it with the Read tool\)$", re.M)


@dataclass(frozen=True)
class Obligation:
    """A task and the rule it falls under: when ``prompt`` is in the conversation the model
    writes ``path`` (relative to the working directory), ``obeying`` if ``rule_text`` has
    reached it by then and ``ignoring`` otherwise; a rule that arrives after the write (an
    attachment, a fetched body) makes it write the file again, obeying."""

    prompt: str
    rule_text: str
    path: str
    obeying: str
    ignoring: str


def conversation_text(body: dict[str, Any]) -> str:
    """Everything the model sees in one request: system prompt and every message."""
    system = body.get("system")
    parts = [system if isinstance(system, str) else "\n".join(block_text(b) for b in system or [])]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        parts.append(content if isinstance(content, str) else "\n".join(block_text(b) for b in content or []))
    return "\n".join(parts)


def tool_uses(messages: list[Any]) -> list[dict[str, Any]]:
    """Every tool_use block the model already sent in a conversation, in order."""
    return blocks_of(messages, "tool_use")


@dataclass
class RuleFollowingAPI(FakeMessagesAPI):
    """The scripted server as a model that obeys rules only when their text reached it:
    it reads every on-demand rule whose index line (Claude Code's "read it with the Read
    tool" line) it sees, then carries out each obligation whose prompt it was given."""

    script: list[list[dict[str, Any]]] = field(default_factory=list)
    obligations: list[Obligation] = field(default_factory=list)

    # The agent's vocabulary (Claude Code's here; a subclass gives another agent's): the
    # index line naming a rule to fetch, the tool and argument that fetch it, and the
    # tool and arguments that write a file.
    index_line: ClassVar[re.Pattern[str]] = _INDEX_LINE
    fetch_tool: ClassVar[tuple[str, str]] = ("Read", "file_path")
    write_tool: ClassVar[tuple[str, str, str]] = ("Write", "file_path", "content")
    call_suffix: ClassVar[str] = "rulefollower"

    def target(self, seen: str, task: Obligation) -> str | None:
        """Where the agent writes ``task``'s file: absolute, under the working directory
        Claude Code names in its prompt (None before it has named one)."""
        workdir = _WORKDIR.search(seen)
        return None if workdir is None else f"{workdir.group(1)}/{task.path}"

    def answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        seen = conversation_text(body)
        used = tool_uses(body.get("messages") or [])
        call_id = f"toolu_{len(used) + 1:03d}_{self.call_suffix}"
        fetch, fetch_arg = self.fetch_tool
        fetched = {u["input"].get(fetch_arg) for u in used if u.get("name") == fetch}
        for ref in self.index_line.findall(seen):
            if ref not in fetched:
                return [tool_use(call_id, fetch, {fetch_arg: ref})], "tool_use"
        write, path_arg, content_arg = self.write_tool
        for task in self.obligations:
            target = self.target(seen, task)
            if task.prompt not in seen or target is None:
                continue
            written = [u["input"].get(content_arg) for u in used
                       if u.get("name") == write and u["input"].get(path_arg) == target]
            obeys = task.rule_text in seen
            if not written or (obeys and written[-1] != task.obeying):
                content = task.obeying if obeys else task.ignoring
                return [tool_use(call_id, write, {path_arg: target, content_arg: content})], "tool_use"
        return [text(self.final_text)], "end_turn"
