"""The strict native schema (RULE-SPEC v1.2 §2–§4): every key, type, default and error.

Owns files whose ``RuleFile.schema`` is ``"v1"``. Plugins may add keys through
``pi_rules_schema_keys("v1")``; any other key is an ``unknown-key`` error.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from rules_core import hookimpl
from rules_core.globs.compiled import compile_rule
from rules_core.model import ParseResult, Rule, RuleError, RuleFile, SchemaKey

from .frontmatter import FrontmatterError, frontmatter_error, load_yaml, split_frontmatter
from .native_fixes import closest, fix_line, quote_fix, yaml_string

SCHEMA = "v1"
MATCH_MODES = ("touched", "exists", "both")
ENFORCEMENTS = ("enforce", "recommend", "inform")
LOADS = ("pinned", "on-demand")
KNOWN_KEYS = (
    "description",
    "version",
    "globs",
    "match",
    "tools",
    "branch",
    "model",
    "priority",
    "enforcement",
    "load",
    "keywords",
    "alwaysApply",
)
LIST_KEYS = ("globs", "tools", "keywords")


@hookimpl(trylast=True)
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    if rule_file.schema != SCHEMA:
        return None
    return parse_v1(rule_file, text, extra_keys)


def parse_v1(rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult:
    """Parse and validate one native rule file; every problem becomes an error value."""
    path = rule_file.path
    errors: list[RuleError] = []

    def fail(kind: str, message: str) -> None:
        errors.append(RuleError(kind, path, message, rule_file.plugin))

    try:
        split = split_frontmatter(text)
    except FrontmatterError as exc:
        return ParseResult(None, (frontmatter_error(rule_file, exc),))
    if split.yaml_text is None:
        fail(
            "missing-frontmatter",
            "a rule file must start with a '---' line opening YAML frontmatter "
            "(description, version: 1 and an activation key such as globs)",
        )
        return ParseResult(None, tuple(errors))
    try:
        data = load_yaml(split.yaml_text)
    except FrontmatterError as exc:
        return ParseResult(None, (frontmatter_error(rule_file, exc, quote_fix(str(exc), split.yaml_text, LIST_KEYS)),))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fail("yaml-syntax", "frontmatter must be a mapping of 'key: value' lines, not a list or scalar")
        return ParseResult(None, tuple(errors))

    allowed = set(KNOWN_KEYS) | set(extra_keys)
    for key in data:
        if not isinstance(key, str) or key not in allowed:
            fail("unknown-key", _unknown_key_message(key, data, sorted(allowed)))

    fields = _Fields(data, fail)
    version = data.get("version")
    if type(version) is not int or version != 1:
        shown = "missing" if "version" not in data else repr(version)
        fail("invalid-version", f"version is {shown}; write 'version: 1' (the integer one)")
    description = data.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        fail("missing-description", "add 'description: <one line saying what the rule enforces>'")
    elif not isinstance(description, str):
        fix = fix_line("description", "string", description)
        fail("invalid-value", f"description must be a string, got {_kind(description)}; "
                              f"{f'write {fix}' if fix else 'write one line of text in quotes'}")

    globs = fields.string_list("globs")
    tools = fields.string_list("tools")
    keywords = tuple(k.strip() for k in fields.string_list("keywords") if k.strip())
    match = fields.choice("match", MATCH_MODES, "both")
    enforcement = fields.choice("enforcement", ENFORCEMENTS, "inform")
    load = fields.choice("load", LOADS, "pinned")
    branch = fields.string("branch")
    model = fields.string("model")
    priority = fields.integer("priority")
    always_apply = fields.boolean("alwaysApply")
    extra, extra_conditions = validate_extra(data, extra_keys, fail)

    if "match" in data and not globs:
        fail(
            "match-without-globs",
            "'match' only applies to globs; add globs such as 'globs: [\"src/**\"]' or remove 'match'",
        )
    has_trigger = bool(globs or tools or branch is not None or model is not None or always_apply)
    # A misspelt or mistyped key usually IS the missing trigger; its own error says so.
    masked = any(e.kind in ("unknown-key", "invalid-value") for e in errors)
    if not has_trigger and not extra_conditions and not masked:
        fail(
            "no-activation-condition",
            "the rule can never activate; add non-empty 'globs', 'tools', 'branch', "
            "'model', or 'alwaysApply: true'",
        )
    if errors:
        return ParseResult(None, tuple(errors))

    compiled, problems = compile_rule(globs, model, branch)
    soft = tuple(RuleError("invalid-value", path, p, rule_file.plugin) for p in problems)
    rule = Rule(
        file=rule_file,
        description=str(description).strip(),
        body=trim_blank_edges(split.body),
        globs=globs,
        match=match,  # type: ignore[arg-type]
        tools=tools,
        branch=branch,
        model=model,
        priority=priority,
        enforcement=enforcement,  # type: ignore[arg-type]
        load=load,  # type: ignore[arg-type]
        keywords=keywords,
        always_apply=always_apply,
        extra=MappingProxyType(extra),
        extra_conditions=extra_conditions,
        compiled=compiled,
    )
    return ParseResult(rule, soft)


@dataclass
class _Fields:
    """Typed accessors that record an ``invalid-value`` error instead of raising; each
    message ends with the line to write where one is evident (``native_fixes``)."""

    data: Mapping[str, Any]
    fail: Callable[[str, str], None]

    def string_list(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None and key not in self.data:
            return ()
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        fix = fix_line(key, "list", value)
        if isinstance(value, str):
            self.fail("invalid-value", f"{key} must be a list of strings; write {fix}")
        else:
            self.fail("invalid-value", f"{key} must be a list of strings, got {_kind(value)}{_write(fix)}")
        return ()

    def choice(self, key: str, allowed: tuple[str, ...], default: str) -> str:
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, str) and value in allowed:
            return value
        close = closest(value, allowed) if isinstance(value, str) else None
        meant = f" — did you mean {close!r}?" if close else ""
        self.fail("invalid-value", f"{key} is {value!r}; use one of {', '.join(allowed)}{meant}")
        return default

    def string(self, key: str) -> str | None:
        if key not in self.data:
            return None
        value = self.data[key]
        if isinstance(value, str):
            return value
        fix = fix_line(key, "string", value) or f"one quoted pattern, such as {key}: {_EXAMPLES.get(key, _SOME_TEXT)}"
        self.fail("invalid-value", f"{key} must be a string, got {_kind(value)}; write {fix}")
        return None

    def integer(self, key: str) -> int:
        if key not in self.data:
            return 0
        value = self.data[key]
        if type(value) is int:
            return value
        fix = fix_line(key, "int", value) or f"a whole number, such as {key}: 10"
        self.fail("invalid-value", f"{key} must be an integer, got {_kind(value)} {value!r}; write {fix}")
        return 0

    def boolean(self, key: str) -> bool:
        if key not in self.data:
            return False
        value = self.data[key]
        if type(value) is bool:
            return value
        fix = fix_line(key, "bool", value) or f"{key}: true or {key}: false"
        self.fail("invalid-value", f"{key} must be true or false, got {value!r}; write {fix}")
        return False


# A pattern to show when a value has no evident text form (a mapping, say).
_EXAMPLES = {"model": yaml_string("*sonnet*"), "branch": yaml_string("feature/*")}
_SOME_TEXT = yaml_string("…")


def _write(fix: str | None) -> str:
    return f"; write {fix}" if fix else ""


def trim_blank_edges(body: str) -> str:
    """Drop leading and trailing blank lines; every other byte is kept."""
    lines = body.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def validate_extra(
    data: Mapping[str, Any], keys: Mapping[str, SchemaKey], fail: Callable[[str, str], None]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Plugin-added keys present in ``data``: their validated values and the names that are
    activation conditions; each bad value is reported through ``fail`` as ``invalid-value``.
    Importers use it too, so a plugin key is as strict in a peer's file as in a native one."""
    extra: dict[str, Any] = {}
    conditions: list[str] = []
    for name, spec in keys.items():
        if name not in data:
            continue
        try:
            extra[name] = spec.validate(data[name])
        except ValueError as exc:
            fail("invalid-value", f"{name}: {exc}")
            continue
        if spec.is_condition:
            conditions.append(name)
    return extra, tuple(conditions)


def _unknown_key_message(key: object, data: Mapping[Any, Any], allowed: list[str]) -> str:
    text = str(key)
    close = closest(text, allowed) if isinstance(key, str) else None
    if close is None:
        return f"unknown key {text!r}; allowed keys: {', '.join(allowed)}"
    if close in data:  # renaming would make a duplicate key
        return f"unknown key {text!r} — did you mean {close!r}? It is already set: remove {text!r}"
    # Renamed, the value must still be right for the key meant: check it the same way.
    problems: list[str] = []
    _check_one(close, data[key], lambda _kind, message: problems.append(message))
    if not problems:
        return f"unknown key {text!r} — did you mean {close!r}?"
    fix = fix_line(close, _KEY_KINDS.get(close, ""), data[key], _CHOICES.get(close, ()))
    if fix is not None:
        return f"unknown key {text!r} — did you mean {close!r}? write {fix}"
    return f"unknown key {text!r} — did you mean {close!r}? Its value is wrong for {close!r} too: {problems[0]}"


_KEY_KINDS = {
    "globs": "list", "tools": "list", "keywords": "list", "match": "choice", "enforcement": "choice",
    "load": "choice", "branch": "string", "model": "string", "description": "string", "priority": "int",
    "alwaysApply": "bool", "version": "version",
}
_CHOICES = {"match": MATCH_MODES, "enforcement": ENFORCEMENTS, "load": LOADS}


def _check_one(key: str, value: Any, fail: Callable[[str, str], None]) -> None:
    """Validate ``value`` as key ``key`` would be (a plugin's key is not checked here)."""
    fields = _Fields({key: value}, fail)
    kind = _KEY_KINDS.get(key)
    if kind == "list":
        fields.string_list(key)
    elif kind == "choice":
        fields.choice(key, _CHOICES[key], "")
    elif kind == "string" and key != "description":
        fields.string(key)
    elif kind == "int":
        fields.integer(key)
    elif kind == "bool":
        fields.boolean(key)
    elif kind == "version" and (type(value) is not int or value != 1):
        fail("invalid-version", "write version: 1")
    elif key == "description" and not isinstance(value, str):
        fail("invalid-value", "description must be a string")


def _kind(value: object) -> str:
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
        type(None): "nothing (null)",
    }.get(type(value), type(value).__name__)
