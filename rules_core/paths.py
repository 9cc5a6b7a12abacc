"""How a session path looks from a rule's base (RULE-SPEC §1).

Session paths are cwd-relative inside the working directory and absolute outside it.
A rule's globs are relative to its base (the directory owning its ``.pi/``). These pure
helpers convert between the two.
"""

from __future__ import annotations

import functools
import os
import posixpath


def ancestors_between(cwd: str, git_root: str) -> list[str]:
    """Directories from cwd's parent up to ``git_root`` (inclusive), nearest first."""
    found: list[str] = []
    if cwd == git_root or not cwd.startswith(git_root.rstrip("/") + "/"):
        return found
    current = cwd
    while current != git_root:
        current = os.path.dirname(current)
        found.append(current)
    return found


def is_as_written(glob: str) -> bool:
    """Absolute and ``..``-escaping globs are evaluated exactly as authored (§1)."""
    text = glob[1:] if glob.startswith("!") else glob
    return text.startswith("/") or text == ".." or text.startswith("../")


@functools.lru_cache(maxsize=4096)
def rebase(path: str, cwd: str, base: str) -> str | None:
    """A session path seen from ``base``: base-relative, or ``None`` when outside it.

    For rules whose base is the working directory the session's own path is used
    unchanged (today's semantics, absolute paths included).
    """
    if base == cwd:
        return path
    absolute = path if path.startswith("/") else posixpath.join(cwd, path)
    prefix = base.rstrip("/") + "/"
    if absolute.startswith(prefix):
        return absolute[len(prefix) :]
    return None


def display_path(base_relative: str, cwd: str, base: str) -> str:
    """How the session would name a file found below ``base``: cwd-relative or absolute."""
    if base == cwd:
        return base_relative
    absolute = posixpath.join(base, base_relative)
    prefix = cwd.rstrip("/") + "/"
    return absolute[len(prefix) :] if absolute.startswith(prefix) else absolute
