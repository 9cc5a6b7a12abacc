"""Which project instructions Claude Code loads: its ``agents-md`` built-in's mode
(docs/hosts.md, "Claude Code's project-instructions mode").

Claude Code 2.1.332 reads the mode from the plugin options of its built-in ``agents-md``
plugin, ``pluginConfigs["agents-md@builtin"].options.instructionFiles`` (the
``/config`` item "Project instructions"), in the user's settings
(``~/.claude/settings.json``, ``$CLAUDE_CONFIG_DIR/settings.json``) and in the managed
ones (``/etc/claude-code/managed-settings.json`` and ``managed-settings.d/*.json``, or the
folder ``$CLAUDE_CODE_MANAGED_SETTINGS_PATH`` names); a later source wins key by key, so
the organization's value beats the user's. Project settings are not read for plugin
options. The older option ``projectInstructions`` (``none``, ``claude``,
``agents-fallback``, ``both``) still counts where ``instructionFiles`` is not set.

Settings files are the user's, but still bounded: at most ``MAX_BYTES`` read, any JSON
shape accepted, anything unreadable or odd counts as "not set".
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any, Mapping

CLAUDE_ONLY = "claude-md"
FALLBACK = "claude-md-or-agents-md"  # Claude Code's default
BOTH = "claude-md-and-agents-md"
MANAGED_ONLY = "managed-only"
MODES = (CLAUDE_ONLY, FALLBACK, BOTH, MANAGED_ONLY)
LEGACY = {"none": MANAGED_ONLY, "claude": CLAUDE_ONLY, "agents-fallback": FALLBACK, "both": BOTH}
# The plugin's names in pluginConfigs: its public name first, then its internal one.
PLUGIN_KEYS = ("agents-md@builtin", "cc-plugin-agents-md@builtin")
MAX_BYTES = 1024 * 1024
MAX_DROP_INS = 64
MAX_LISTED = 4096  # entries of managed-settings.d looked at
_MAX_CACHED = 32
# path -> (signature, options found there): each file parsed once per version.
_parsed: dict[str, tuple[object, Mapping[str, Any]]] = {}
# (user file, managed file, drop-in folder) -> (signatures, the drop-ins then, the mode)
_modes: dict[tuple[str, str, str], tuple[tuple[object, ...], tuple[str, ...], str]] = {}


def instruction_mode(env: Mapping[str, str]) -> str:
    """The mode Claude Code runs in for the user of ``env`` (``FALLBACK`` when unset).
    Asked once per rule of an evaluation, so the answer is kept while the stat signatures
    of the files it came from and of the drop-in folder (which changes when a file is
    added or removed there) are unchanged: a warm call costs a few stats, no listing."""
    places = _places(env)
    cached = _modes.get(places)
    if cached is not None and cached[0] == _stamp(places, cached[1]):
        return cached[2]
    user, managed, folder = places
    drop_ins = _drop_ins(folder)
    mode = _mode_of([user, managed, *drop_ins])
    if len(_modes) >= _MAX_CACHED:
        _modes.pop(next(iter(_modes)))
    _modes[places] = (_stamp(places, drop_ins), drop_ins, mode)
    return mode


def _drop_ins(folder: str) -> tuple[str, ...]:
    """The folder's ``*.json`` files in name order, at most ``MAX_DROP_INS`` of the first
    ``MAX_LISTED`` entries: a folder of a million files costs a bounded listing."""
    names: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LISTED:
                    break
                if entry.name.endswith(".json"):
                    names.append(entry.name)
    except (OSError, ValueError):
        return ()
    return tuple(os.path.join(folder, name) for name in sorted(names)[:MAX_DROP_INS])


def _stamp(places: tuple[str, str, str], drop_ins: tuple[str, ...]) -> tuple[object, ...]:
    return tuple(_signature(p) for p in (*places, *drop_ins))


def _mode_of(files: list[str]) -> str:
    options: dict[str, Any] = {}
    for path in files:
        options.update(_options_in(path))
    chosen = options.get("instructionFiles")
    mode = chosen if chosen in MODES else FALLBACK
    if "projectInstructions" in options and mode == FALLBACK:
        legacy = options["projectInstructions"]
        # As Claude Code reads it: an unknown or non-text value means CLAUDE.md only.
        mode = LEGACY.get(legacy, CLAUDE_ONLY) if isinstance(legacy, str) else CLAUDE_ONLY
    return mode


def _places(env: Mapping[str, str]) -> tuple[str, str, str]:
    """The user's settings file, the managed settings file and the managed drop-in folder."""
    config_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
    managed = env.get("CLAUDE_CODE_MANAGED_SETTINGS_PATH") or "/etc/claude-code"
    return (os.path.join(config_dir, "settings.json"), os.path.join(managed, "managed-settings.json"),
            os.path.join(managed, "managed-settings.d"))


def _signature(path: str) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _options_in(path: str) -> Mapping[str, Any]:
    signature = _signature(path)
    if signature is None:
        return {}
    cached = _parsed.get(path)
    if cached is not None and cached[0] == signature:
        return cached[1]
    found = _plugin_options(_load(path))
    if len(_parsed) >= _MAX_CACHED:
        _parsed.pop(next(iter(_parsed)))
    _parsed[path] = (signature, found)
    return found


def _plugin_options(document: object) -> dict[str, Any]:
    configs = document.get("pluginConfigs") if isinstance(document, dict) else None
    options: dict[str, Any] = {}
    for key in PLUGIN_KEYS:
        entry = configs.get(key) if isinstance(configs, dict) else None
        found = entry.get("options") if isinstance(entry, dict) else None
        if isinstance(found, dict):
            options.update({k: v for k, v in found.items() if k in ("instructionFiles", "projectInstructions")})
    return options


def _load(path: str) -> object:
    """The JSON document at ``path``, or None: never blocks (a FIFO), never reads more
    than ``MAX_BYTES``, never raises."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size <= MAX_BYTES and (chunk := os.read(fd, MAX_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:
            return None
        return json.loads(b"".join(chunks).decode("utf-8").removeprefix("\ufeff"))
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
