"""Keeping hostile strings from reaching a terminal raw (rule files are untrusted input)."""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls, DEL, C1 controls, and Unicode line/paragraph separators and bidi overrides;
# and lone surrogates (a non-UTF-8 file name decodes to them), which no UTF-8 stream can
# encode: escaped, they print everywhere and a JSON reader gets the exact name back.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_CONTROLS_KEEP_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_line(text: str) -> str:
    """One-line text (ids, paths, messages): every control character escaped."""
    return _CONTROLS.sub(_escape, text)


def safe_lines(text: str) -> str:
    """Text whose own line breaks are kept and every other control character escaped."""
    return "\n".join(safe_line(line) for line in text.split("\n"))


def safe_block(text: str) -> str:
    """Multi-line text (rule bodies): newlines and tabs kept, other controls escaped."""
    return _CONTROLS_KEEP_LAYOUT.sub(_escape, text)


def safe_json(value: Any) -> str:
    """Valid JSON whose string contents cannot drive a terminal."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
