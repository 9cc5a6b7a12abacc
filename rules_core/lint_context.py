"""``LintContext``: what a ``pi_rules_lint`` plugin may know besides the discovery.

A module of its own so the hook specifications can name it without importing the
linter (and through it the engine): data only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from .model import Rule
from .model.places import locate, position  # where a lint plugin places a warning

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


__all__ = ["LintContext", "Scan", "locate", "position"]
