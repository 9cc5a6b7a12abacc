"""Golden-file comparison for tests outside test_golden.py (same refresh switch)."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, text: str) -> None:
    """``text`` must equal ``tests/golden/<name>``; ``PI_RULES_UPDATE_GOLDEN=1`` rewrites it."""
    path = GOLDEN / name
    if os.environ.get("PI_RULES_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()
