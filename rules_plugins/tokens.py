"""The ``tokens`` plugin: ``ceil(n / 4)`` with ``n`` in UTF-16 code units (CONTRACT §2)."""

from __future__ import annotations

from rules_core import hookimpl
from rules_core.select import utf16_token_estimate


@hookimpl(trylast=True)
def pi_rules_estimate_tokens(text: str) -> int:
    return utf16_token_estimate(text)
