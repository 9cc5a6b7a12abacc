"""``LintContext``: what a ``pi_rules_lint`` plugin may know besides the discovery.

A module of its own so the hook specifications can name it without importing the
linter (and through it the engine): data only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from .model import Rule

Scan = Callable[[str, Sequence[tuple[str, ...]]], "Mapping[tuple[str, ...], str | None] | None"]
_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class LintContext:
    """What a ``pi_rules_lint`` plugin may know besides the discovery.

    ``max_tokens`` is the pinned-body budget ``check`` evaluates with; ``always_on`` the
    pinned rules every evaluation of the main agent activates whatever it touches (no
    condition, not scoped out, not stream rules, not turned off), in discovery order;
    ``tokens(rule)`` the engine's own estimate of a rule's body. ``git_root`` is ``None``
    outside a repository and for an untrusted project.

    ``scan(root, queries)`` is the exists scan (``pi_rules_scan``) below ``root`` with
    git's ignore rules up to ``git_root``: for each query (a tuple of root-relative globs,
    ``!``-negations included) the first matching file, or ``None``. It returns ``None``
    when the project is untrusted or the scan failed or ran out of time: then nothing is
    known, and a plugin must not report a glob as dead. ``read_text(rule)`` is the rule
    file's text (BOM dropped, CRLF folded) or ``None`` when it cannot be read now; a
    project file is read only inside the git root (cwd without one), as discovery reads it.
    """

    cwd: str
    trusted: bool
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    max_tokens: int = 2000
    git_root: str | None = None
    home: str | None = None
    always_on: tuple[Rule, ...] = ()
    tokens: Callable[[Rule], int] = field(default=lambda rule: 0, compare=False)
    scan: Scan = field(default=lambda root, queries: None, compare=False)
    read_text: Callable[[Rule], str | None] = field(default=lambda rule: None, compare=False)


def position(text: str, index: int) -> tuple[int, int]:
    """The 1-based (line, column) of ``text[index]``, columns counted in characters."""
    start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - start + 1


def locate(text: str, needle: str) -> tuple[int | None, int | None]:
    """Where ``needle`` is written in a rule file: first in its leading ``---`` block (a
    key's value, a glob's entry), else anywhere; ``(None, None)`` when it is not there."""
    if not needle:
        return None, None
    end = text.find("\n---", 3) if text.startswith("---") else -1
    index = text.find(needle, 0, end) if end > 0 else -1
    if index < 0:
        index = text.find(needle)
    return position(text, index) if index >= 0 else (None, None)
