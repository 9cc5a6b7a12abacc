"""Reading an imported file's frontmatter: strict YAML first, then — for the tools whose
users write YAML that strict parsing refuses — that tool's own recovery.

``read_document(..., dialect=...)`` is the one reader and ``recover`` the one recovery.
There are two dialects, not one, because the tools really read their files differently
and each importer's tests pin its tool (the differences are the fields of ``_Dialect``):

- ``"cursor"`` (Cursor, Windsurf; docs/importers.md (the cursor importer)): only when strict parsing
  raises; every value stays text (``true`` included: their boolean keys accept the
  text), quotes are removed and ``[a, b]`` is split like a comma string — so the unquoted
  ``globs: [*.sh, "**/*.js"]`` both tools accept is read; a bare ``-`` is an empty entry.
- ``"oh-my-pi"`` (the ``agents`` importer; docs/importers.md (the agents importer)): oh-my-pi's repairs
  first (tabs read as spaces, a value holding ``': '`` quoted); each value is YAML on its
  own (``true`` is a boolean, as in oh-my-pi), and a broken list or quote (``globs: [a,
  b``) is damage, not text; also tried when YAML reads the block as a scalar (``a:b``).

Both read the block line by line and only when that accounts for every line: top-level
``key: value`` lines, and ``- item`` lines under a key with no value. Anything else, or
a repeated key, leaves the strict parser's ``yaml-syntax`` error standing.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from rules_core.model import ParseResult, RuleError, RuleFile
from rules_plugins.frontmatter import FrontmatterError, frontmatter_error, load_yaml, split_frontmatter

from ._lenient import kind_of, split_globs

_NOT_MAPPING = "frontmatter must be a mapping of 'key: value' lines, not a list or scalar"


@dataclass(frozen=True)
class Document:
    """A leniently read file: its frontmatter mapping (empty when absent) and raw body."""

    data: Mapping[str, Any]
    body: str
    has_frontmatter: bool


def read_document(rule_file: RuleFile, text: str, *, dialect: str | None = None) -> Document | RuleError:
    """Split and load frontmatter; no frontmatter is fine. An unterminated block, YAML
    that neither strict parsing nor the ``dialect`` (when given) can read, or a
    non-mapping root is a ``yaml-syntax`` error naming the file."""
    try:
        split = split_frontmatter(text)
    except FrontmatterError as exc:
        return frontmatter_error(rule_file, exc)
    if split.yaml_text is None:
        return Document(MappingProxyType({}), text, False)
    try:
        data = load_yaml(split.yaml_text)
    except FrontmatterError as exc:
        data = recover(split.yaml_text, dialect) if dialect is not None else None
        if data is None:
            return frontmatter_error(rule_file, exc)
    if data is None:
        data = {}
    if not isinstance(data, dict) and dialect is not None and _DIALECTS[dialect].non_mapping:
        data = recover(split.yaml_text, dialect)
    if not isinstance(data, dict):
        return RuleError("yaml-syntax", rule_file.path, _NOT_MAPPING, rule_file.plugin)
    return Document(MappingProxyType(data), split.body, True)


def read_markdown(rule_file: RuleFile, text: str) -> Document | ParseResult:
    """``read_document`` as Copilot and Claude read: their files need no frontmatter, so
    a binary file that happens to be valid UTF-8 (NUL bytes) is a ``read-failure`` — it
    would otherwise be an always-on rule injecting NULs into the prompt — and a YAML
    error names the exact quoted line that fixes an unquoted glob."""
    if "\x00" in text:
        message = "the file contains NUL bytes, so it is binary, not markdown; delete it or save it as text"
        return ParseResult(None, (RuleError("read-failure", rule_file.path, message, rule_file.plugin),))
    document = read_document(rule_file, text)
    if isinstance(document, RuleError):
        return ParseResult(None, (with_quote_hint(document, text),))
    return document


class _Lost(Exception):
    """A line or value the recovery cannot account for."""


@dataclass(frozen=True)
class _Dialect:
    """How one tool reads a frontmatter block strict YAML refused (see the module doc)."""

    key_line: re.Pattern[str]  # a top-level ``key: value`` line (matched whole, right-trimmed)
    value: Callable[[str], Any]  # a key's value, read on its own
    item: Callable[[str], Any]  # a ``- item``: the text after the dash
    repaired: Callable[[str], dict[str, Any] | None] | None = None  # whole-block repairs, tried first
    non_mapping: bool = False  # recover too when YAML reads the block as a scalar or list


def recover(yaml_text: str, dialect: str) -> dict[str, Any] | None:
    """The mapping a block strict YAML refused still says plainly, read the way the
    ``dialect``'s tool reads it (see the module doc), or None."""
    how = _DIALECTS[dialect]
    data = how.repaired(yaml_text) if how.repaired is not None else None
    if data is not None:
        return data
    data = {}
    list_key: str | None = None  # a key with no value, whose '- item' lines follow
    try:
        for line in yaml_text.split("\n"):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            match = how.key_line.fullmatch(line.rstrip())
            if match and match.group(1) not in data:
                data[match.group(1)] = value = how.value(match.group(2))
                list_key = match.group(1) if value is None else None
            elif list_key is not None and (stripped == "-" or stripped.startswith("- ")):
                # Appended in place: rebuilding the list per item made a 262,000-item
                # file quadratic (23 s; issue 14, attack 15).
                items = data[list_key]
                if items is None:
                    items = data[list_key] = []
                items.append(how.item(stripped[1:]))
            else:
                return None  # an indented, repeated or stray line would be lost
    except _Lost:
        return None
    return data


# -- the "cursor" dialect: values stay text ---------------------------------------------------

_COMMENT = re.compile(r"(?:^|[ \t])#.*$")


def _text_value(raw: str) -> Any:
    """Quotes removed, ``[a, b]`` a list, ``# comments`` dropped; text stays text."""
    value = raw.strip()
    if not _quoted(value):
        value = _COMMENT.sub("", value).strip()
    if _quoted(value):
        return value[1:-1]
    if value.startswith("[") and value.endswith("]"):
        return [_text_value(item) for item in split_globs(value[1:-1])]
    return value or None


def _text_item(raw: str) -> Any:
    return _text_value(raw) or ""  # a bare '-' is an empty entry


def _quoted(value: str) -> bool:
    return len(value) > 1 and value[0] in ("'", '"') and value.endswith(value[0])


def flag(data: Mapping[str, Any], key: str, problems: list[str]) -> bool:
    """A boolean key as Cursor and Windsurf read it: since their line reading yields
    text, the text ``"true"``/``"false"`` counts whichever way it was read; null is false."""
    value = data.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    problems.append(f"{key} must be true or false, got {kind_of(value, 'scalar')}; write {key}: true or {key}: false")
    return False


# -- the "oh-my-pi" dialect: each value is YAML on its own ------------------------------------

_PLAIN_VALUE = re.compile(r"^(\s*[A-Za-z_][\w-]*:\s+)(\S.*?)(\s*)$")
_EXPLICIT_START = tuple("\"'[{|>!&*#")
_FLOW_START = tuple("\"'[{")


def _yaml_value(text: str) -> Any:
    """YAML when the value parses on its own, else the raw text (oh-my-pi's reading)."""
    raw = text.strip()
    if raw and not raw.startswith(("'", '"')):
        raw = re.sub(r"[ \t]+#.*$", "", raw)  # a trailing comment, as YAML would drop it
    if not raw:
        return None
    try:
        value = load_yaml(raw)
    except FrontmatterError:
        if raw.startswith(_FLOW_START):
            raise _Lost from None  # a broken list or quote is damage, not an unquoted glob
        return raw
    return raw if isinstance(value, dict) else value


def _yaml_item(raw: str) -> Any:
    if not raw.strip():
        raise _Lost  # oh-my-pi has no empty list entry
    return _yaml_value(raw)


def _repaired(yaml_text: str) -> dict[str, Any] | None:
    """oh-my-pi's repairs: tab indents read as spaces, then ambiguous ``': '`` values quoted."""
    tabs = yaml_text.replace("\t", "  ")
    for candidate in (tabs, _quote_ambiguous(tabs)):
        if candidate is None or candidate == yaml_text:
            continue
        try:
            loaded = load_yaml(candidate)
        except FrontmatterError:
            continue
        if isinstance(loaded, dict):
            return loaded
    return None


def _quote_ambiguous(yaml_text: str) -> str | None:
    """``description: Use when: editing`` → its value double-quoted (oh-my-pi's repair)."""
    lines, changed = [], False
    for line in yaml_text.split("\n"):
        match = _PLAIN_VALUE.match(line)
        if match and ": " in match.group(2) and not match.group(2).startswith(_EXPLICIT_START):
            line = f"{match.group(1)}{json.dumps(match.group(2), ensure_ascii=False)}{match.group(3)}"
            changed = True
        lines.append(line)
    return "\n".join(lines) if changed else None


_DIALECTS = {
    "cursor": _Dialect(re.compile(r"([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)"), _text_value, _text_item),
    "oh-my-pi": _Dialect(re.compile(r"([\w-]+):\s*(.*)"), _yaml_value, _yaml_item, _repaired, non_mapping=True),
}


# -- naming the fix ------------------------------------------------------------------------------

# A plain YAML scalar cannot start with these; unquoted globs (``**/*.ts``,
# ``{src,lib}/**``) are the usual way a real-world rule file breaks its frontmatter.
_UNQUOTED = re.compile(
    r"^(?P<lead>[ \t]*(?:[A-Za-z_][\w-]*[ \t]*:|-)[ \t]+)(?P<value>[*&!{%@`][^\n]*?)[ \t]*$"
)
_GENERIC_HINT = "check indentation and quote values containing ': ', '#', '*', '&', '[' or '{'"


def with_quote_hint(error: RuleError, text: str) -> RuleError:
    """Name the exact quoted line that fixes an unquoted glob, when the YAML error
    message does not already say it."""
    if not error.message.startswith("invalid YAML") or "quote the value" in error.message:
        return error
    for line in text.split("\n")[1:]:
        if line.rstrip(" \t") == "---":
            break
        match = _UNQUOTED.match(line)
        if match:
            fixed = match.group("value").replace("\\", "\\\\").replace('"', '\\"')
            hint = f'quote the value: {match.group("lead").strip()} "{fixed}"'
            if _GENERIC_HINT in error.message:
                message = error.message.replace(_GENERIC_HINT, hint)
            else:
                message = f"{error.message}; {hint}"
            return dataclasses.replace(error, message=message)
    return error
