"""VS Code's ``applyTo`` matcher (``computeAutomaticInstructions.ts``, ``_matches``):
patterns split on commas outside braces; ``**``, ``**/*`` and ``*`` apply always; a
pattern not starting with ``/`` or ``**/`` gets ``**/`` in front; each attached file's
whole path is matched without case. The engine's own ``copilot`` importer keeps RULE-SPEC's
reading instead (docs/importers.md); this matcher serves only ``--host copilot``."""

from __future__ import annotations

from typing import Sequence

from rules_core.globs.matching import GlobError, compile_glob
from rules_importers._lenient import split_globs

ALWAYS = ("**", "**/*", "*")


def apply_to_matches(apply_to: str, paths: Sequence[str]) -> tuple[str, str | None] | None:
    """(pattern, matched path) for the first pattern that applies — path None for an
    always pattern — or None."""
    for raw in split_globs(apply_to):
        pattern = raw.strip()
        if not pattern:
            continue
        if pattern in ALWAYS:
            return pattern, None
        if not pattern.startswith("/") and not pattern.startswith("**/"):
            pattern = "**/" + pattern
        try:
            glob = compile_glob(pattern.lower().lstrip("/"))
        except GlobError:
            continue
        for path in paths:
            if glob.match(path.lower().lstrip("/")):
                return pattern, path
    return None
