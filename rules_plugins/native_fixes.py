"""The fixes native-rule errors name: exact lines that, written into the file, work.

A fix that leads straight to a second error teaches nothing, so each fix here is the
final form: an unquoted glob under a list key becomes a quoted list (``globs: *.ts`` →
``globs: ["*.ts"]``, not ``globs: "*.ts"``, which is the next error), a comma string is
split outside ``{…}`` the way importers split ``applyTo``, and values are written as
JSON strings, which YAML reads back byte for byte (a single-quoted Python ``repr`` does
not: it doubles backslashes YAML keeps). tests/hosts/test_suggested_fixes.py applies
every fix to a file and runs ``check``.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any, Collection, Sequence

# What the frontmatter reader's messages say in place of a concrete line.
_VAGUE_HINTS = ("quote the value: ", "check indentation and quote values", "quote values that start with")
_KEY_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<key>[A-Za-z_][\w-]*)[ \t]*:[ \t]+(?P<value>\S.*?)[ \t]*$")
_ITEM_LINE = re.compile(r"^(?P<indent>[ \t]*)-[ \t]+(?P<value>\S.*?)[ \t]*$")
_COMMENT = re.compile(r"[ \t]+#")
_LINE_NUMBER = re.compile(r"\bline (\d+)\b")
# A plain YAML scalar cannot start with these (indicators, tags, aliases, anchors, and
# the reserved '@' and '`').
_CANNOT_START = tuple("*&!%@`{[|>'\"")
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHOLE_NUMBER = re.compile(r"[-+]?([0-9]{1,18})(?:\.0*)?")  # 18 digits: any sane priority


def yaml_string(value: str) -> str:
    """``value`` as a double-quoted YAML scalar (JSON is valid YAML 1.2); a lone
    surrogate, which no file can hold as text, is written as its escape."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def yaml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(yaml_string(v) for v in values) + "]"


def split_commas(text: str) -> list[str]:
    """``a, {b,c}/**`` → ``["a", "{b,c}/**"]``: commas inside ``{…}`` or ``[…]`` belong to
    the pattern; entries are trimmed and empty ones dropped."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "{[":
            depth += 1
        elif char in "}]" and depth:
            depth -= 1
        elif char == "," and not depth:
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def list_fix(key: str, value: str) -> str:
    """The line that gives list key ``key`` the string ``value`` as its entries."""
    return f"{key}: {yaml_list(split_commas(value) or [value])}"


def quote_fix(message: str, yaml_text: str, list_keys: Collection[str]) -> str:
    """A frontmatter YAML error with its vague hint replaced by the exact line to write,
    when an unquoted value explains the error; otherwise ``message`` unchanged."""
    if not any(hint in message for hint in _VAGUE_HINTS):
        return message  # a duplicate key or an unclosed block already says what to do
    lines = yaml_text.split("\n")
    reported = _LINE_NUMBER.search(message)
    # The leading '---' is file line 1, so the block's line i is file line i + 2.
    first = int(reported.group(1)) - 2 if reported else -1
    order = ([first] if 0 <= first < len(lines) else []) + [i for i in range(len(lines)) if i != first]
    for index in order:
        fixed = _quoted_line(lines[index], list_keys)
        if fixed is not None:
            cuts = [message.find(hint) for hint in _VAGUE_HINTS if hint in message]
            head = message[: min(cuts)].rstrip("; ") if cuts else message
            return f"{head}; quote the value: {fixed}"
    return message


def _quoted_line(line: str, list_keys: Collection[str]) -> str | None:
    """``line`` rewritten with its unreadable values quoted, or None when it has none."""
    key_match = _KEY_LINE.match(line)
    match = key_match or _ITEM_LINE.match(line)
    if match is None:
        return None
    value, comment = _split_comment(match.group("value"))
    lead = f"{key_match.group('key')}:" if key_match else "-"
    # A bracketed value is a flow list only where a list belongs: ``model: [x, ]`` means the
    # text, and a list there would be the next error (a model is one string).
    scalar_key = key_match is not None and not key_match.group("indent") and key_match.group("key") not in list_keys
    if value.startswith("[") and value.endswith("]") and not scalar_key:
        items = split_commas(value[1:-1])
        if not any(_needs_quotes(item, flow=True) for item in items):
            return None
        fixed = "[" + ", ".join(item if _is_quoted(item) else yaml_string(item) for item in items) + "]"
    elif _needs_quotes(value, flow=False):
        top_level_list = key_match is not None and not key_match.group("indent") and key_match.group("key") in list_keys
        fixed = yaml_list(split_commas(value) or [value]) if top_level_list else yaml_string(value)
    else:
        return None
    return f"{match.group('indent')}{lead} {fixed}{comment}".strip()


def _split_comment(value: str) -> tuple[str, str]:
    """``*.ts  # ts files`` → (``*.ts``, ``  # ts files``); a quoted value keeps its '#'."""
    if _is_quoted(value):
        return value, ""
    found = _COMMENT.search(value)
    return (value[: found.start()], value[found.start() :]) if found else (value, "")


def _is_quoted(item: str) -> bool:
    return len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'"


def _needs_quotes(item: str, flow: bool) -> bool:
    if _is_quoted(item) or item.startswith(("|", ">")) and not flow:
        return False
    return item.startswith(_CANNOT_START) or ": " in item or (flow and any(c in item for c in "{}[]"))


def closest(word: str, choices: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


_TRUE = frozenset({"true", "yes", "on", "y", "1"})
_FALSE = frozenset({"false", "no", "off", "n", "0"})


def fix_line(key: str, kind: str, value: Any, choices: Sequence[str] = ()) -> str | None:
    """The line that gives ``key`` (of ``kind``: list, string, int, bool, choice,
    version) the value its author evidently meant, or None when nothing is evident."""
    value = _brace_text(value)
    if kind == "list":
        if isinstance(value, str):
            return list_fix(key, value)
        if isinstance(value, list) and value and all(_is_plain_scalar(v) for v in value):
            return f"{key}: {yaml_list([str(v) for v in value])}"
        return f"{key}: {yaml_list([str(value)])}" if _is_plain_scalar(value) else None
    if kind == "string":
        if isinstance(value, str):
            return f"{key}: {yaml_string(value)}"
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            return f"{key}: {yaml_string(value[0])}"
        if isinstance(value, bool):
            return f"{key}: {yaml_string(str(value).lower())}"
        return f"{key}: {yaml_string(str(value))}" if isinstance(value, (int, float)) else None
    if kind == "int":
        whole = None if isinstance(value, bool) else _WHOLE_NUMBER.fullmatch(str(value).strip())
        if whole is None:
            return None
        sign = "-" if str(value).strip().startswith("-") and int(whole.group(1)) else ""
        return f"{key}: {sign}{int(whole.group(1))}"
    if kind == "bool":
        text = str(value).strip().lower()
        return f"{key}: true" if text in _TRUE else f"{key}: false" if text in _FALSE else None
    if kind == "choice":
        close = closest(value, choices) if isinstance(value, str) else None
        return f"{key}: {close}" if close else None
    if kind == "version":
        return "version: 1"
    return None


def _brace_text(value: Any) -> Any:
    """An unquoted brace set (``model: {sonnet,opus}``) reads as a mapping of keys to
    null: give back the text that was written; any other value as it is."""
    if isinstance(value, dict) and value and all(isinstance(k, str) and v is None for k, v in value.items()):
        return "{" + ",".join(value) + "}"
    return value


def _is_plain_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)
