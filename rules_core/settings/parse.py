"""Parsing and validating one settings file (docs/configuration.md): pure, text in,
``SettingsFile`` out, never an exception. ``rules_core.settings.load`` reads and merges."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from rules_core.globs.matching import GlobError, compile_glob
from rules_core.model import RuleError

PLUGIN = "settings"  # the ``plugin`` of the errors reported here
SCALAR_KEYS = ("max_tokens", "overflow", "import", "attach", "trust")
LIST_KEYS = ("disable", "plugins.block", "plugins.required", "lint.ignore", "export.to")
KEYS = ("max_tokens", "overflow", "import", "disable", "attach", "trust", "plugins.block", "plugins.required",
        "lint.ignore", "export.to")
OVERFLOWS = ("drop", "index")
TRUST_MODES = ("ask", "always", "never")  # docs/trust.md; the user's file only
_TABLES = {"plugins": ("block", "required"), "lint": ("ignore",), "export": ("to",)}
_TOP = (*SCALAR_KEYS, "disable", *_TABLES)
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class SettingsFile:
    """One settings file: its valid values (dotted keys), per-host values, the line of
    each key (for later diagnostics) and what was wrong with it."""

    path: str
    shown: str
    level: str
    values: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    hosts: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: _EMPTY)
    lines: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    errors: tuple[RuleError, ...] = ()

    def lookup(self, key: str, host: str | None) -> tuple[Any, str] | None:
        """(value, table) for a scalar key: the host's table first, then the top level."""
        if host is not None and key in self.hosts.get(host, _EMPTY):
            return self.hosts[host][key], f"hosts.{host}"
        return (self.values[key], "") if key in self.values else None

    def items(self, key: str, host: str | None) -> list[tuple[Any, str]]:
        """(item, table) for a list key: the host's items, then the top level's."""
        own = self.hosts.get(host, _EMPTY) if host is not None else _EMPTY
        found = [(item, f"hosts.{host}") for item in own.get(key, ())]
        return found + [(item, "") for item in self.values.get(key, ())]

    def line(self, *path: str) -> int | None:
        """The line of the dotted key ``path`` or, failing that, of its nearest parent."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(".".join(path[:end]))
            if line is not None:
                return line
        return None


def _toml_place(exc: Exception) -> tuple[int | None, int | None]:
    """Where tomllib stopped: its ``lineno``/``colno`` (Python 3.14), else the ``(at line
    N, column M)`` its message ends with."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    if isinstance(line, int) and line > 0:
        return line, column if isinstance(column, int) and column > 0 else None
    found = re.search(r"\(at line (\d{1,9}), column (\d{1,9})\)", str(exc))
    return (int(found.group(1)), int(found.group(2))) if found else (None, None)


def parse_settings(text: str, path: str, shown: str = "", level: str = "project") -> SettingsFile:
    """Validate one file's text. Never raises: what is wrong becomes errors, and only the
    valid values are kept."""
    import tomllib  # only when a settings file exists: most projects have none

    try:
        data = tomllib.loads(text)
    except Exception as exc:  # TOMLDecodeError, and RecursionError on absurd nesting
        message = f"not valid TOML ({exc}); fix it, or see docs/configuration.md for the keys"
        return SettingsFile(path, shown or path, level,
                            errors=(RuleError("read-failure", path, message, PLUGIN, *_toml_place(exc)),))
    lines = key_lines(text)
    errors: list[RuleError] = []
    partial = SettingsFile(path, shown or path, level, lines=lines)

    def report(kind: str, where: tuple[str, ...], message: str) -> None:
        line = partial.line(*where)
        errors.append(RuleError(kind, path, f"line {line}: {message}" if line else message, PLUGIN, line or None))

    values = _table(data, (), report)
    if "trust" in values and level != "user":
        # A project deciding its own trust would defeat the point of asking (docs/trust.md).
        del values["trust"]
        report("invalid-value", ("trust",), "trust may be set only in your own config file "
                                            "(~/.config/pi-rules/config.toml), never by a project; remove it here")
    hosts: dict[str, Mapping[str, Any]] = {}
    raw_hosts = data.get("hosts", {})
    if not isinstance(raw_hosts, dict):
        report("invalid-value", ("hosts",), "hosts must hold tables: write [hosts.claude-code] and its keys below")
    else:
        for name, table in raw_hosts.items():
            if isinstance(table, dict):
                host_values = _table(table, ("hosts", name), report)
                if host_values.pop("trust", None) is not None:
                    report("invalid-value", ("hosts", name, "trust"),
                           "trust is set once, at the top of your own config file; move it out of [hosts." + name + "]")
                hosts[name] = MappingProxyType(host_values)
            else:
                report("invalid-value", ("hosts", name), f"hosts.{name} must be a table: write [hosts.{name}]")
    return SettingsFile(path, shown or path, level, MappingProxyType(values), MappingProxyType(hosts), lines,
                        tuple(errors))


def _table(data: Mapping[str, Any], prefix: tuple[str, ...], report: Callable[..., None]) -> dict[str, Any]:
    """The valid values of one table (the top level or a host's), by dotted key."""
    values: dict[str, Any] = {}
    for key, raw in data.items():
        where = (*prefix, key)
        if key == "hosts" and not prefix:
            continue  # read by the caller
        if key in _TABLES:
            if not isinstance(raw, dict):
                report("invalid-value", where, f"{_dotted(where)} must be a table: write [{_dotted(where)}]")
                continue
            for sub, sub_raw in raw.items():
                if sub not in _TABLES[key]:
                    report("unknown-key", (*where, sub), _unknown(_dotted((*where, sub)), sub, _TABLES[key]))
                else:
                    _check(f"{key}.{sub}", sub_raw, (*where, sub), values, report)
        elif key in _TOP:
            _check(key, raw, where, values, report)
        else:
            report("unknown-key", where, _unknown(_dotted(where), key, _TOP))
    return values


def _check(key: str, raw: Any, where: tuple[str, ...], values: dict[str, Any], report: Callable[..., None]) -> None:
    try:
        values[key] = VALIDATORS[key](raw)
    except ValueError as exc:
        report("invalid-value", where, f"{_dotted(where)} {exc}")


def _positive_int(raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
        raise ValueError(f"must be a positive whole number of tokens, got {_show(raw)}; write max_tokens = 4000")
    return raw


def _overflow(raw: Any) -> str:
    if raw not in OVERFLOWS:
        raise ValueError(f'must be "drop" or "index", got {_show(raw)}{hint(raw, OVERFLOWS)}')
    return str(raw)


def _import(raw: Any) -> str | tuple[str, ...]:
    if isinstance(raw, str) and raw.strip().lower() in ("all", "none"):
        return raw.strip().lower()
    if isinstance(raw, str):
        raise ValueError(f'takes a list of importer names, "all" or "none", got {_show(raw)}; '
                         f"write import = {json.dumps([n.strip() for n in raw.split(',') if n.strip()])}")
    names = _strings(raw, "import = [\"copilot\", \"claude\"]")
    return tuple(dict.fromkeys(n.strip().lower() for n in names)) if names else "none"


def _trust(raw: Any) -> str:
    if raw not in TRUST_MODES:
        raise ValueError(f'must be "ask", "always" or "never", got {_show(raw)}{hint(raw, TRUST_MODES)}')
    return str(raw)


def _bool(raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise ValueError(f"must be true or false, got {_show(raw)}")
    return raw


def _list_of(example: str) -> Callable[[Any], tuple[str, ...]]:
    return lambda raw: _strings(raw, example)


def _disable(raw: Any) -> tuple[str, ...]:
    entries = _strings(raw, 'disable = ["legacy-style", "drafts/**"]')
    for entry in entries:
        if not entry.startswith("rule://"):
            try:
                compile_glob(entry)
            except GlobError as exc:
                why = f"entry {_show(entry)} is neither a rule id nor a glob that compiles ({exc})"
                raise ValueError(why) from None
    return entries


def _strings(raw: Any, example: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, str) and item.strip() for item in raw):
        raise ValueError(f"must be a list of non-empty strings, got {_show(raw)}; write {example}")
    return tuple(dict.fromkeys(item.strip() for item in raw))


VALIDATORS: Mapping[str, Callable[[Any], Any]] = MappingProxyType({
    "max_tokens": _positive_int, "overflow": _overflow, "import": _import, "attach": _bool, "disable": _disable,
    "trust": _trust,
    "plugins.block": _list_of('block = ["copilot"] under [plugins]'),
    "plugins.required": _list_of('required = ["pi-rules-rulebook"] under [plugins]'),
    "lint.ignore": _list_of('ignore = ["dead-glob"] under [lint]'),
    # The target names belong to the export command (rules_hosts); it says which it knows.
    "export.to": _list_of('to = ["cursor", "copilot"] under [export]'),
})

_KEY_PART = r'(?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\')'
_KEY_LINE = re.compile(rf"\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*=")
_HEADER = re.compile(rf"\s*\[\[?\s*({_KEY_PART}(?:\s*\.\s*{_KEY_PART})*)\s*\]\]?\s*(?:#.*)?$")


def key_lines(text: str) -> dict[str, int]:
    """The first line of each dotted key (tomllib keeps no positions). A heuristic good
    enough for messages: lines inside multi-line strings are skipped, nothing else is."""
    lines: dict[str, int] = {}
    table: list[str] = []
    in_string = ""
    for number, line in enumerate(text.split("\n"), 1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = ""
            continue
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            lines.setdefault(".".join(table), number)
            continue
        key = _KEY_LINE.match(line)
        if key:
            lines.setdefault(".".join([*table, *_parts(key.group(1))]), number)
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
    return lines


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(_KEY_PART, dotted)]


def _unknown(dotted: str, key: str, known: Iterable[str]) -> str:
    # Leaf names of a table also count, so a top-level ``block`` points at [plugins].
    choices = {k: k for k in known}
    choices.update({sub: f"{table}.{sub}" for table, subs in _TABLES.items() for sub in subs if table in choices})
    normal = key.lower().replace("-", "_")
    exact = [v for k, v in choices.items() if k.replace("-", "_") == normal]
    close = exact or [choices[m] for m in difflib.get_close_matches(normal, list(choices), n=1, cutoff=0.6)]
    if close:
        return f"unknown key {dotted!r} — did you mean {close[0]!r}?"
    return f"unknown key {dotted!r}; known keys: {', '.join(sorted(choices.values()))}"


def hint(value: Any, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(value).lower(), list(choices), n=1, cutoff=0.5)
    return f" — did you mean {close[0]!r}?" if close else ""


def _dotted(where: tuple[str, ...]) -> str:
    return ".".join(where)


def _show(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, dict) else "a table"
    return text if len(text) <= 60 else text[:57] + "..."
