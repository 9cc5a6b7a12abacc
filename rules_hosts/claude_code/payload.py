"""The facts a Claude Code hook payload carries (docs/hosts.md, "Which rule conditions
work under Claude Code").

Each value is untrusted: anything that is not a short, printable string names nothing.

- ``tool_name`` is the tool fact of its own event: ``Write`` is ``write`` through the
  tools table, any other tool its lower-cased name (``WebFetch`` → ``webfetch``,
  ``mcp__x__y`` stays).
- ``model`` comes with SessionStart only; the journal keeps it for the later events.
- ``agent_id`` marks an event fired inside a sub-agent; ``agent_type`` (``Explore``,
  ``general-purpose``, a custom agent's name) is then the agent fact, lower-cased, or
  ``sub`` when it is missing. Without ``agent_id`` the event is the main thread's, even
  in a ``claude --agent X`` session whose payloads carry ``agent_type`` alone.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from .tools import SESSION_TOOLS

MAX_NAME = 128  # tool, agent and model names are short; a longer one is not a name
MAX_AGENT_ID = 128  # longer ids are kept as their digest, so a record stays small


def _name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_NAME or not text.isprintable():
        return None
    return text


def tool_fact(tool: Any) -> tuple[str, ...]:
    """The tool fact of one tool event: ``()`` when the payload names no usable tool."""
    name = _name(tool)
    if name is None:
        return ()
    return (SESSION_TOOLS.get(name) or name.lower(),)


def model_fact(value: Any) -> str | None:
    """SessionStart's ``model``: a model id string (an ``{"id": …}`` object is read too)."""
    if isinstance(value, Mapping):
        value = value.get("id")
    return _name(value)


def agent_of(payload: Mapping[str, Any]) -> tuple[str | None, str]:
    """``(agent_id, agent fact)``: ``(None, "main")`` for the main thread."""
    agent_id = payload.get("agent_id")
    if not isinstance(agent_id, str) or not agent_id:
        return None, "main"
    if len(agent_id) > MAX_AGENT_ID or not agent_id.isprintable():
        agent_id = "sha256:" + hashlib.sha256(agent_id.encode("utf-8", "surrogatepass")).hexdigest()
    kind = _name(payload.get("agent_type"))
    # A sub-agent type called "main" must not pass for the top-level session.
    agent = kind.lower() if kind is not None and kind.lower() != "main" else "sub"
    return agent_id, agent
