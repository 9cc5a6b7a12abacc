"""One stream the watcher follows (a message part, a tool call's arguments): its search
tail, the text kept for the end-of-stream search, the rules that fired on it, and its
key. Split out of ``rules_core.stream.watcher``, which feeds it.

The kept text is bounded by bytes, not characters or deltas (issue 14, attack 14): a
host that sends 2-character deltas of non-Latin-1 text used to leave one ``str`` per
delta, about 40 bytes per character — 44 MB for one 1 Mi-character stream, 2.8 GB for
64 streams. It is now UTF-8 in one ``bytearray`` of at most ``STORE_BYTES`` per stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rules_core.stream.model import SURFACES, StreamSpec
from rules_core.stream.plan import Plan

# Per stream, the text kept for the end-of-stream search and ast conditions (1 MiB of
# UTF-8: 1 Mi ASCII characters, about 350 Ki CJK ones).
STORE_BYTES = 1024 * 1024


@dataclass
class StreamBuffer:
    surface: str
    tool: str | None
    path: str | None
    eligible: list[StreamSpec]
    tail: str = ""
    length: int = 0  # characters fed so far, for offsets
    stored: bytearray = field(default_factory=bytearray)
    full: bool = False  # the cap was reached: nothing more is kept
    fired: set[str] = field(default_factory=set)
    # (watcher epoch and meter version, candidates, their search plan): recomputed only
    # when rules fire or are switched off, the turn changes or the watcher is re-armed.
    cache: tuple[tuple[int, int], list[StreamSpec], Plan | None] | None = None

    def keep(self, delta: str) -> bool:
        """Store the delta up to the cap; True when this delta reached it (so the caller
        reports it once: past the cap, text is only searched as it streams)."""
        if self.full:
            return False
        room = STORE_BYTES - len(self.stored)
        data = delta.encode("utf-8", "surrogatepass")  # a host may send lone surrogates
        if len(data) < room:
            self.stored += data
            return False
        self.stored += _utf8_prefix(data, room)  # a character cut in two would leave room unfilled
        self.full = True
        return True

    def whole(self) -> str:
        return self.stored.decode("utf-8", "surrogatepass")


def _utf8_prefix(data: bytes, size: int) -> bytes:
    """At most ``size`` bytes of ``data``, cut on a character boundary."""
    if size >= len(data):
        return data
    end = size
    while end > 0 and data[end] & 0xC0 == 0x80:  # a continuation byte: its character began earlier
        end -= 1
    return data[:end]


def cap_note(stream: StreamBuffer) -> str:
    """The one line that says a stream reached the cap (never a silent truncation)."""
    return (
        f"stream {source(stream)} passed {STORE_BYTES // 1024} KiB: the rest is searched as it streams, "
        "but the end-of-stream search and ast conditions see only the first part"
    )


def key(source: Any, tool: Any, call_id: Any) -> tuple[str, str, str] | None:
    """The stream a delta belongs to: the surface, and for tools the tool and call id."""
    if source not in SURFACES:
        return None
    if source != "tool":
        return (source, "", "")
    name = tool if isinstance(tool, str) else ""
    call = call_id if isinstance(call_id, (str, int)) and not isinstance(call_id, bool) else ""
    return (source, name, str(call))


def source(stream: StreamBuffer) -> str:
    """How a firing names its stream: ``text``, ``tool:edit`` or ``tool:edit(<path>)``."""
    if stream.surface != "tool":
        return stream.surface
    name = f"tool:{stream.tool or '?'}"
    return f"{name}({stream.path})" if stream.path else name
