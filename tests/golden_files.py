"""The suite's one golden-file helper and its one refresh switch.

Goldens are rewritten only on purpose: ``python -m pytest --update-goldens ...`` or
``PI_RULES_UPDATE_GOLDEN=1`` (exactly ``1``). Any other value — ``0``, ``no``, empty —
compares, so a changed golden fails (a switch that ``=0`` turned on made every golden test
pass unconditionally).
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
SWITCH = "PI_RULES_UPDATE_GOLDEN"

def updating() -> bool:
    """True only when this run was asked to rewrite goldens."""
    # tests/conftest.py turns ``--update-goldens`` into this variable, so the module is
    # read the same way whether imported as ``golden_files`` or ``tests.golden_files``.
    return os.environ.get(SWITCH) == "1"


def check_golden(name: str, text: str, folder: Path | None = None) -> None:
    """``text`` must equal ``<folder or tests/golden>/<name>``; the switch rewrites it."""
    path = (folder or GOLDEN) / name
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with --update-goldens or {SWITCH}=1"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs (refresh on purpose: --update-goldens)"
