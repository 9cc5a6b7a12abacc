"""Reading and writing the JSON files the Claude Code install merges into.

A settings file may come with the repository, so it is read under a size cap and its JSON
is judged strictly (no ``NaN``, no nesting deep enough to blow the stack). Writes go to a
temporary file in the same directory and are renamed over the old one, so Claude Code
never reads half a file; the old content is copied to a backup first, with the file's own
permissions (``~/.claude.json`` holds account data and is often ``0600``). A
symbolic link (dotfiles managers) is written through, not replaced.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Mapping

from rules_core.discovery.cache_files import write_atomically

MAX_BYTES = 64 * 1024 * 1024  # ~/.claude.json grows with history; a project file never gets near


class FileProblem(Exception):
    """A file we must not merge into; the message says what is wrong with it."""


def backup_path(path: str, env: Mapping[str, str]) -> str:
    """Where the backup of ``path`` goes: pi-rules' state directory, never beside the file,
    so a project file's backup is no untracked file in the repository (docs/hosts.md). The
    file's real path names the backup, ``/`` spelt ``%`` as Vim's undo files do."""
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid, use the default
        base = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    name = os.path.realpath(path).replace("%", "%%").replace(os.sep, "%")
    if len(name) > 200:  # a file name's limit is 255 bytes: keep the tail, tell apart by hash
        name = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:16] + name[-180:]
    return os.path.join(base, "pi-rules", "backups", name + ".bak")


def read_json(path: str) -> Any:
    """The parsed file, ``None`` when it does not exist; an empty file is an empty object."""
    if not os.path.lexists(path):
        return None
    if os.path.isdir(path):
        raise FileProblem("it is a directory")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FileProblem(f"cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise FileProblem(f"it is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileProblem(f"it is not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        return {}
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise FileProblem(f"it is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise FileProblem(f"it is not valid JSON ({type(exc).__name__}: {exc})"[:300]) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def write_json(path: str, data: Any, backup: str | None) -> None:
    """Replace the file with ``data`` (2-space indent, trailing newline) or, for ``None``,
    remove it; with ``backup``, copy the old bytes to that path first."""
    real = os.path.realpath(path)
    directory = os.path.dirname(real)
    os.makedirs(directory, exist_ok=True)
    mode = _mode(real)
    if backup:
        os.makedirs(os.path.dirname(backup), mode=0o700, exist_ok=True)
        with open(real, "rb") as handle:
            _atomic_write(backup, handle.read(), mode)
    if data is None:
        os.remove(real)
        return
    try:
        payload = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escape in the old file: keep it escaped
        payload = (json.dumps(data, indent=2) + "\n").encode("utf-8")
    _atomic_write(real, payload, mode)


def _mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _atomic_write(path: str, payload: bytes, mode: int) -> None:
    directory, name = os.path.split(path)
    write_atomically(directory, name, payload, sync=True, mode=mode, prefix=f".{name}.")


def json_kind(value: Any) -> str:
    """What JSON calls ``value``'s type, for messages about a file's shape."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")
