"""Parse results kept across processes in the persistent cache (issue 30).

Parsing every rule file (YAML frontmatter, schema checks, glob compiling) is most of a
fresh process's discovery on a large repository, and its answer depends only on the file's
text, the ``RuleFile`` a source made for it, the files its imports read, and the plugins
(the store's file is per plugin fingerprint). So the answer is kept in the project's store
(``rules_core.discovery.persistent``) under the file and a hash of its text — the text is
read anyway, and a hash is never fooled by a stat that did not move — with the stat
signature of every imported file it was built from.

What is kept is plain JSON — the frontmatter values, the body, the errors, the glob,
model and branch sources — never an object. The store is the user's own folder, so a
value read back is held to what a rule file may hold, no more: every field is
type-checked, every pattern goes through the size and expansion checks a rule file's
pattern meets (``rules_core.globs.matching``) before the entry is used, and the matchers compile
lazily (``LazyCompiledRule``), each through the same bounded compiler, only when an
evaluation asks for it. Anything that fails is a miss: the file is parsed afresh.
A result whose plugin values do not survive JSON unchanged is simply not kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from types import MappingProxyType
from typing import Any, Callable

from rules_core.discovery.observe import Observation, signature
from rules_core.discovery.persistent import Store
from rules_core.globs.compiled import MAX_GLOBS, LazyCompiledRule
from rules_core.globs.matching import MAX_PATTERN_LENGTH, expansion_problem
from rules_core.model import BudgetPool, ParseResult, Rule, RuleError, RuleFile

KIND = "parse"
# What the parses may take of a project's store (its file is capped at MAX_FILE_BYTES and
# holds the tree walk and the scans too): entries, and encoded characters each.
MAX_KEPT = 400
MAX_KEPT_CHARS = 16 * 1024
Parser = Callable[[RuleFile, str], ParseResult]

# Rule fields kept, with what a value read back must be. ``file`` is the key's own;
# ``id``, ``index``, ``reference`` are the engine's (a parse leaves them at their defaults);
# ``compiled`` is rebuilt lazily; ``extra`` and ``pool`` are checked on their own.
_TEXT, _OPTIONAL_TEXT, _TEXTS, _INT, _BOOL = "text", "text?", "texts", "int", "bool"
_FIELDS: dict[str, str] = {
    "description": _TEXT, "body": _TEXT, "globs": _TEXTS, "match": _TEXT, "tools": _TEXTS,
    "branch": _OPTIONAL_TEXT, "model": _OPTIONAL_TEXT, "priority": _INT, "enforcement": _TEXT, "load": _TEXT,
    "keywords": _TEXTS, "always_apply": _BOOL, "extra_conditions": _TEXTS, "inactive_reason": _OPTIONAL_TEXT,
    "points_to": _TEXTS, "inlined": _OPTIONAL_TEXT, "overflow": _OPTIONAL_TEXT,
}
_ENGINE_FIELDS = ("id", "index", "reference")
_ERROR_FIELDS = ("kind", "path", "message", "plugin", "line", "column")  # four texts, two places


def kept_parser(store: Store | None, parse: Parser) -> Parser:
    """``parse``, answered from ``store`` while the text and imported files are unchanged."""
    if store is None:
        return parse
    room = [MAX_KEPT - store.count(KIND)]

    def run(rule_file: RuleFile, text: str) -> ParseResult:
        key = [list(dataclasses.astuple(rule_file)),
               hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()]
        found = store.get(KIND, key, lambda value: decode(value, rule_file))
        if found is not None:
            return found
        result = parse(rule_file, text)
        value = encode(result, rule_file) if room[0] > 0 else None
        if value is not None and len(json.dumps(value)) <= MAX_KEPT_CHARS:
            room[0] -= 1
            seen = Observation()
            for path in result.depends:  # imported files: stat-keyed, as the store's other paths
                seen.paths[path] = signature(path)
            store.put(KIND, key, value, seen)
        return result

    return run


def encode(result: ParseResult, rule_file: RuleFile) -> dict[str, Any] | None:
    """The result as plain JSON values; ``None`` when it cannot be kept exactly."""
    rule = result.rule
    value: dict[str, Any] = {"errors": [[getattr(e, f) for f in _ERROR_FIELDS] for e in result.errors],
                             "depends": list(result.depends), "rule": None}
    if rule is not None:
        defaults = Rule(file=rule_file, description="", body="")
        if rule.file != rule_file or any(getattr(rule, f) != getattr(defaults, f) for f in _ENGINE_FIELDS):
            return None
        kept = {name: list(getattr(rule, name)) if kind == _TEXTS else getattr(rule, name)
                for name, kind in _FIELDS.items()}
        kept["extra"] = dict(rule.extra)
        kept["pool"] = None if rule.pool is None else [rule.pool.name, rule.pool.max_tokens, rule.pool.summary]
        value["rule"] = kept
    try:
        same = json.loads(json.dumps(value, allow_nan=False)) == value
    except (TypeError, ValueError, RecursionError):
        return None
    # A plugin's tuple or mapping proxy does not come back as itself: such a result is not kept.
    if not same or (rule is not None and decode(value, rule_file, check_patterns=False) != result):
        return None
    return value


def decode(value: Any, rule_file: RuleFile, check_patterns: bool = True) -> ParseResult | None:
    """A kept value as the ``ParseResult`` it was, or ``None`` when anything is off.
    ``check_patterns=False`` only for the round-trip check of a result just parsed (its
    patterns were checked by the compiler already; counting a bomb's expansion twice
    costs what the cap is there to prevent)."""
    if not isinstance(value, dict) or set(value) != {"errors", "depends", "rule"}:
        return None
    errors, depends, kept = value["errors"], value["depends"], value["rule"]
    if not (isinstance(errors, list) and _texts(depends)):
        return None
    if not all(isinstance(e, list) and len(e) == len(_ERROR_FIELDS) and _texts(e[:4]) and _places(e[4:])
               for e in errors):
        return None
    rule = None
    if kept is not None:
        rule = _rule(kept, rule_file, check_patterns)
        if rule is None:
            return None
    return ParseResult(rule, tuple(RuleError(*e) for e in errors), tuple(depends))


def _places(values: list[Any]) -> bool:
    """An error's line and column: each a positive whole number or null."""
    return all(v is None or (type(v) is int and v > 0) for v in values)


def _rule(kept: Any, rule_file: RuleFile, check_patterns: bool) -> Rule | None:
    if not isinstance(kept, dict) or set(kept) != {*_FIELDS, "extra", "pool"}:
        return None
    fields: dict[str, Any] = {}
    for name, kind in _FIELDS.items():
        item = kept[name]
        if not _is(kind, item):
            return None
        fields[name] = tuple(item) if kind == _TEXTS else item
    extra, pool = kept["extra"], kept["pool"]
    if not isinstance(extra, dict) or not _texts(list(extra)):
        return None
    if pool is not None and not (isinstance(pool, list) and len(pool) == 3 and _is(_TEXT, pool[0])
                                 and _is(_INT, pool[1]) and _is(_TEXT, pool[2])):
        return None
    if check_patterns and _pattern_problem(fields["globs"], fields["model"], fields["branch"]):
        return None
    return Rule(file=rule_file, extra=MappingProxyType(extra), pool=None if pool is None else BudgetPool(*pool),
                compiled=LazyCompiledRule(fields["globs"], fields["model"], fields["branch"]), **fields)


def _pattern_problem(globs: tuple[str, ...], model: str | None, branch: str | None) -> bool:
    """Whether a pattern read back is beyond what a rule file may hold: more globs than a
    rule may have, a pattern over the length limit, or a brace expansion over the cap."""
    if len(globs) > MAX_GLOBS:
        return True
    patterns = [*globs, *(p for p in (model, branch) if p is not None)]
    # Without a `{` a pattern expands to itself, within the budget once under the length
    # limit: only a pattern with braces needs the (bracex) count here. The compiler checks
    # the rewritten pattern again when the matcher is first used.
    return any(len(p) > MAX_PATTERN_LENGTH or ("{" in p and expansion_problem([p]) is not None) for p in patterns)


def _is(kind: str, item: Any) -> bool:
    if kind == _TEXT:
        return isinstance(item, str)
    if kind == _OPTIONAL_TEXT:
        return item is None or isinstance(item, str)
    if kind == _TEXTS:
        return _texts(item)
    if kind == _INT:
        return type(item) is int
    return type(item) is bool


def _texts(items: Any) -> bool:
    return isinstance(items, list) and all(isinstance(i, str) for i in items)
