"""The scripted Messages API the real-client test relies on: its two answer forms agree."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from hypothesis import given, settings, strategies as st

from fake_messages_api import FakeMessagesAPI, text, tool_use

_TOOLS = [{"name": "Write", "input_schema": {"type": "object"}}]
_blocks = st.lists(
    st.one_of(
        st.text(min_size=1, max_size=40).map(text),
        st.builds(lambda i, v: tool_use(f"toolu_{i}", "Write", {"file_path": f"/p/{i}", "content": v}),
                  st.integers(0, 99), st.text(max_size=40)),
    ),
    min_size=1, max_size=4,
)


def _post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(f"{url}/v1/messages?beta=true", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers["content-type"], response.read()


def _assemble(stream: bytes) -> dict[str, Any]:
    """A message rebuilt from its server-sent events, as an SDK client does."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for chunk in stream.decode().split("\n\n"):
        if not chunk:
            continue
        event, data = chunk.split("\n")
        kind, payload = event.removeprefix("event: "), json.loads(data.removeprefix("data: "))
        assert payload["type"] == kind
        if kind == "message_start":
            message = payload["message"]
        elif kind == "content_block_start":
            message["content"].append(payload["content_block"])
        elif kind == "content_block_delta":
            delta = payload["delta"]
            if delta["type"] == "text_delta":
                message["content"][payload["index"]]["text"] += delta["text"]
            else:
                partial[payload["index"]] = partial.get(payload["index"], "") + delta["partial_json"]
        elif kind == "message_delta":
            message["stop_reason"] = payload["delta"]["stop_reason"]
    for index, raw in partial.items():
        message["content"][index]["input"] = json.loads(raw)
    return message


def _conversation(results: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(results):
        messages.append({"role": "assistant", "content": [tool_use(f"t{i}", "Write", {})]})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}
        messages.append({"role": "user", "content": [result]})
    return messages


@settings(max_examples=25, deadline=None)
@given(script=st.lists(_blocks, min_size=1, max_size=3), results=st.integers(0, 4))
def test_streamed_and_plain_answers_are_the_same_message(script: list[list[dict[str, Any]]], results: int) -> None:
    with FakeMessagesAPI(script) as api:
        body = {"model": "m", "max_tokens": 100, "tools": _TOOLS, "messages": _conversation(results)}
        plain_type, plain = _post(api.url, body)
        stream_type, stream = _post(api.url, {**body, "stream": True})
    assert plain_type == "application/json" and stream_type == "text/event-stream"
    message = json.loads(plain)
    assert _assemble(stream)["content"] == message["content"]
    # The turn is chosen by the tool results the conversation holds; past the script's end
    # the model says it is done.
    expected = script[results] if results < len(script) else [text("Done.")]
    assert message["content"] == expected
    assert message["stop_reason"] == ("tool_use" if any(b["type"] == "tool_use" for b in expected) else "end_turn")


def test_side_requests_get_plain_text_and_are_recorded() -> None:
    with FakeMessagesAPI([[tool_use("t0", "Write", {})]]) as api:
        _, answer = _post(api.url, {"model": "m", "max_tokens": 1, "messages": _conversation(0)})
    assert json.loads(answer)["content"] == [text("ok")]
    assert len(api.requests) == 1 and api.main_requests() == []
