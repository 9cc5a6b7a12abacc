"""What a host says its agent already holds in its prompt (``Facts.host_loaded``).

Pi hands its extensions the exact list (``systemPromptOptions.contextFiles``: path and
content; ``skills``: a path each); the extension passes it to ``serve`` with
``before_agent_start`` (docs/protocol.md). It arrives here as untrusted JSON and leaves as
("text", digest) pairs for the context files and ("path", real path) pairs for the
skills: a rule whose text Pi already shows is left out whatever its path (a link, a
copy), and a skill file Pi lists is Pi's.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

MAX_LOADED = 256  # entries taken from one request; a prompt holds far fewer files


def text_key(text: str) -> str:
    """The digest two copies of one text share: line ends and surrounding blank space
    are not the text (Pi trims nothing, pi-rules' renderer normalises the edges)."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    return hashlib.sha256(normalised.encode("utf-8", "surrogatepass")).hexdigest()


def real_path(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path) if "\x00" not in path else path


def host_loaded(context_files: Any = None, skills: Any = None) -> frozenset[tuple[str, str]] | None:
    """The pairs of a host's report, or None when it sent neither list (no report: the
    host's static profile decides). Malformed entries name nothing."""
    if not isinstance(context_files, list) and not isinstance(skills, list):
        return None
    pairs: set[tuple[str, str]] = set()
    for entry in (context_files if isinstance(context_files, list) else [])[:MAX_LOADED]:
        if not isinstance(entry, dict):
            continue
        # Judged by text alone: Pi shows a file's @imports as literal lines, so its path
        # says nothing about whether pi-rules' (expanded) rule for it is already there.
        content = entry.get("content")
        if isinstance(content, str) and content.strip():
            pairs.add(("text", text_key(content)))
    for entry in (skills if isinstance(skills, list) else [])[:MAX_LOADED]:
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and path:
            pairs.add(("path", real_path(path)))
    return frozenset(pairs)
