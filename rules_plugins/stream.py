"""The ``stream`` plugin: rules that watch the model's output as it streams (TTSR).

Adds ``condition``, ``astCondition``, ``scope``, ``interruptMode`` and ``repeat`` to the
strict native schema (imported formats also get the legacy ``ttsr_trigger`` and
``ttsrTrigger``), turns a rule with a condition into a ``StreamSpec`` the session's
``StreamWatcher`` runs, and renders the interrupt and reminder blocks. A stream rule
never enters the section. Block the plugin and the keys are ``unknown-key`` errors again.
"""

from __future__ import annotations

from typing import Any, Sequence

from rules_core import SchemaKey, hookimpl
from rules_core.globs.matching import compile_glob
from rules_core.model import Rule
# The values only: the watcher (rules_core.stream.watcher) loads where a stream is watched.
from rules_core.stream.model import Firing, ScopeEntry, StreamPattern, StreamSpec

from . import _ast
from ._stream_grammar import (
    compile_condition,
    is_joinable,
    max_width,
    parse_condition,
    parse_interrupt_mode,
    parse_repeat,
    parse_scope,
    repeat_gap,
    scoped_form,
    split_condition,
    strings,
)

LEGACY_KEYS = ("ttsr_trigger", "ttsrTrigger")
DEFAULT_SCOPE = ("text", "tool")
# Host-neutral: some hosts show the model its stopped output, others (Pi) drop it.
INTERRUPT_FRAME = (
    "Your output was stopped because it matched {a project rule}. Follow {the rule} below "
    "and carry on with the task; do not write the matched text again."
)
REMINDER_FRAME = "Your last output matched {a project rule}. Keep to {the rule} from here on."


def parse_ast_condition(value: Any) -> tuple[str, ...]:
    patterns = strings(value, "astCondition", '"console.log($$$)"')
    if not _ast.available():
        raise ValueError(_ast.INSTALL_HINT)
    return patterns


@hookimpl
def pi_rules_schema_keys(schema: str) -> list[SchemaKey]:
    keys = [
        SchemaKey("condition", parse_condition, is_condition=True, help="regex(es) that fire the rule on streamed output"),
        SchemaKey("astCondition", parse_ast_condition, is_condition=True, help="ast-grep pattern(s) on edit/write output"),
        SchemaKey("scope", parse_scope, help="surfaces to watch: text, thinking, tool, tool:<name>(<glob>)"),
        SchemaKey("interruptMode", parse_interrupt_mode, help="never | prose-only | tool-only | always"),
        SchemaKey("repeat", parse_repeat, help="once | after-gap N"),
    ]
    if schema != "v1":
        # The peers' legacy spellings, accepted from their files only.
        keys += [SchemaKey(k, parse_condition, is_condition=True, help="legacy condition") for k in LEGACY_KEYS]
    return keys


@hookimpl(trylast=True)
def pi_rules_stream_spec(rule: Rule) -> StreamSpec | None:
    extra = rule.extra
    raw = next((extra[k] for k in ("condition", *LEGACY_KEYS) if extra.get(k)), None)
    ast_patterns = tuple(extra.get("astCondition") or ())
    if not raw and not ast_patterns:
        return None
    patterns, inferred = split_condition(parse_condition(raw)) if raw else ((), ())
    scope_tokens = (tuple(parse_scope(extra["scope"])) if extra.get("scope") else ()) + inferred
    if not scope_tokens:
        scope_tokens = DEFAULT_SCOPE
    scope = tuple(_entry(token) for token in dict.fromkeys(scope_tokens))
    compiled = tuple(_pattern(p) for p in patterns)
    interrupt = extra.get("interruptMode") or "always"
    repeat = extra.get("repeat") or "once"
    return StreamSpec(
        rule=rule,
        patterns=compiled,
        scope=scope,
        interrupt=interrupt,
        repeat_gap=repeat_gap(repeat),
        ast_patterns=ast_patterns,
        ast=_ast.matcher(ast_patterns) if ast_patterns else None,
        owns=("condition", "astCondition", *LEGACY_KEYS),
        summary=_summary(compiled, ast_patterns, scope, interrupt, repeat, rule),
    )


def _pattern(source: str) -> StreamPattern:
    regex = compile_condition(source)
    return StreamPattern(source, regex, max_width(regex), is_joinable(source, regex), scoped_form(source))


def _entry(token: str) -> ScopeEntry:
    if token in ("text", "thinking", "tool"):
        return ScopeEntry(token)  # type: ignore[arg-type]
    name, _, rest = token[len("tool:"):].partition("(")
    glob = rest[:-1] if rest else None
    return ScopeEntry("tool", name, glob, compile_glob(glob) if glob else None)


def _summary(
    patterns: Sequence[StreamPattern], ast: Sequence[str], scope: Sequence[ScopeEntry],
    interrupt: str, repeat: str, rule: Rule,
) -> str:
    what = [f"/{p.source}/" for p in patterns] + [f"ast {a!r}" for a in ast]
    extra = " (alwaysApply is ignored: a stream rule never enters the section)" if rule.always_apply else ""
    return (
        f"stream rule: fires when {', '.join(str(s) for s in scope)} output matches {' or '.join(what)}; "
        f"interruptMode {interrupt}, repeat {repeat}{extra}"
    )


@hookimpl(trylast=True)
def pi_rules_render(kind: str, data: Any) -> str | None:
    if kind == "stream-interrupt":
        return _block("# Rule interrupt", INTERRUPT_FRAME, data["firings"])
    if kind == "stream-reminder":
        return _block("# Rule reminder", REMINDER_FRAME, data["firings"])
    if kind == "stream-deny":
        return _deny(data["firings"])
    return None


def _deny(firings: Sequence[Firing]) -> str:
    """The reason a host shows the model when it refuses a tool call (Claude Code's
    ``permissionDecisionReason``): which rule, what matched, and the rule itself."""
    parts = []
    for firing in firings:
        rule = firing.rule
        whose = "global" if rule.source == "global" else "project"  # the user's own, or the repository's
        head = f"Blocked by {whose} rule {rule.id} ({rule.relative_path}): {firing.source} {firing.reason}."
        parts.append(f"{head}\n\n{rule.body}" if rule.body else head)
    parts.append("Change the content so it follows the rule, then try again.")
    return "\n\n".join(parts)


def _block(title: str, frame: str, firings: Sequence[Firing]) -> str:
    entries = []
    seen: set[str] = set()
    for firing in firings:
        if firing.rule.id in seen:
            continue
        seen.add(firing.rule.id)
        heading = f"## {firing.rule.id}\n> Fired by: {firing.source} {firing.reason}"
        entries.append(f"{heading}\n\n{firing.rule.body}" if firing.rule.body else heading)
    many = len(entries) > 1
    frame = frame.replace("{a project rule}", "project rules" if many else "a project rule")
    frame = frame.replace("{the rule}", "the rules" if many else "the rule")
    return f"{title}\n\n{frame}\n\n" + "\n\n---\n\n".join(entries) + "\n"
