"""Keeping hostile strings from reaching a terminal raw (rule files are untrusted input)."""

from __future__ import annotations

import json
import re
from typing import Any

# Invisible characters a reader cannot see but a model reads: zero-width spaces and
# joiners, direction marks, word joiners and invisible operators, the BOM, the Arabic
# letter mark, and the Unicode TAG block (U+E0000–E007F, "ASCII smuggling": a body that
# shows `Use tabs.` can carry a whole hidden sentence), and the bidi embeddings, overrides
# and isolates (U+202A–E, U+2066–9: "Trojan Source" — a reviewer reads `rm -rf #.cache ~`
# while the model reads the characters in stored order). Shown as escapes everywhere.
INVISIBLE = "\u200b-\u200f\u2060-\u2064\ufeff\u061c\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
# C0 controls, DEL, C1 controls, and Unicode line/paragraph separators and bidi overrides;
# and lone surrogates (a non-UTF-8 file name decodes to them), which no UTF-8 stream can
# encode: escaped, they print everywhere and a JSON reader gets the exact name back.
_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff{INVISIBLE}]")
_CONTROLS_KEEP_LAYOUT = re.compile(
    f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff{INVISIBLE}]"
)
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff{INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(match: re.Match[str]) -> str:
    """A JSON escape: astral characters as their UTF-16 surrogate pair, as JSON requires."""
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def reveal_invisible(text: str) -> str:
    """``text`` with every invisible character shown as its escape (``\\u200b``,
    ``\\U000e0041``); everything else, layout included, unchanged. For model-facing text."""
    return _INVISIBLE.sub(_escape, text)


def invisible_in(text: str) -> set[str]:
    """The distinct invisible characters in ``text``."""
    return set(_INVISIBLE.findall(text))


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
    return _JSON_UNSAFE.sub(_json_escape, text)
