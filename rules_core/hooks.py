"""A typed facade over the plugin manager: one method per hook, faults contained.

A plugin that raises must not take the engine (or its host) down. Calls go through
pluggy normally (so tracing works); when one raises, the hook is re-run implementation
by implementation so the faulty plugin can be named in an error and the others still
contribute.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pluggy

from .model import (
    DiscoveryContext,
    Facts,
    ImporterInfo,
    Intent,
    MatchContext,
    ParseResult,
    Rule,
    RuleError,
    RuleFile,
    SchemaKey,
    Verdict,
)
from .select import utf16_token_estimate
from .stream_model import StreamSpec, ToolOutput


class Hooks:
    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self._schema_keys: dict[str, dict[str, SchemaKey]] = {}
        self._importers: list[ImporterInfo] | None = None
        self._specs: dict[int, tuple[Rule, StreamSpec | None]] = {}

    def sources(self, context: DiscoveryContext) -> tuple[list[RuleFile], list[RuleError]]:
        files: list[RuleFile] = []
        errors: list[RuleError] = []
        results = self._call_list(
            "pi_rules_sources",
            {"context": context},
            lambda name, exc: [
                RuleError(
                    "source-unreadable",
                    context.cwd,
                    f"source plugin {name!r} failed ({_exc_text(exc)}); its rules are not "
                    f"loaded — report it to its authors or block it with -p no:{name}",
                    name,
                )
            ],
        )
        for result in results:
            for item in result or ():
                if isinstance(item, RuleFile):
                    files.append(item)
                elif isinstance(item, RuleError):
                    errors.append(item)
        return files, errors

    def importers(self) -> list[ImporterInfo]:
        if self._importers is None:
            results = self._call_list("pi_rules_importers", {}, lambda n, e: [])
            infos: dict[str, ImporterInfo] = {}
            for result in results:
                for info in result or ():
                    infos.setdefault(info.name, info)
            self._importers = sorted(infos.values(), key=lambda info: info.name)
        return self._importers

    def schema_keys(self, schema: str) -> Mapping[str, SchemaKey]:
        cached = self._schema_keys.get(schema)
        if cached is None:
            cached = {}
            results = self._call_list("pi_rules_schema_keys", {"schema": schema}, lambda n, e: [])
            for result in results:
                for key in result or ():
                    cached.setdefault(key.name, key)
            self._schema_keys[schema] = cached
        return cached

    def parse(self, rule_file: RuleFile, text: str) -> ParseResult:
        kwargs = {"rule_file": rule_file, "text": text, "extra_keys": self.schema_keys(rule_file.schema)}
        try:
            result = self.pm.hook.pi_rules_parse(**kwargs)
        except Exception as exc:
            return ParseResult(
                None,
                (
                    RuleError(
                        "read-failure",
                        rule_file.path,
                        f"the schema plugin for {rule_file.schema!r} files crashed on this file "
                        f"({_exc_text(exc)}); report it to the plugin's authors",
                        rule_file.plugin,
                    ),
                ),
            )
        if result is None:
            return ParseResult(
                None,
                (
                    RuleError(
                        "read-failure",
                        rule_file.path,
                        f"no plugin parses {rule_file.schema!r} files (is its schema plugin "
                        "blocked?); unblock it or remove the file",
                        rule_file.plugin,
                    ),
                ),
            )
        return result

    def intents(self, prompt: str, rules: Sequence[Rule]) -> tuple[Intent, ...]:
        results = self._call_list("pi_rules_intent", {"prompt": prompt, "rules": rules}, lambda n, e: [])
        seen: dict[Intent, None] = {}
        for result in results:
            for intent in result or ():
                seen.setdefault(intent, None)
        return tuple(sorted(seen, key=lambda i: (i.kind, i.glob)))

    def exclusion(self, rule: Rule, facts: Facts) -> str | None:
        results = self._call_list(
            "pi_rules_exclude",
            {"rule": rule, "facts": facts},
            lambda name, exc: [f"scope plugin {name!r} failed: {_exc_text(exc)}"],
        )
        reasons = [r for r in results if isinstance(r, str) and r]
        return "; ".join(reasons) if reasons else None

    def match(self, rule: Rule, context: MatchContext) -> list[Verdict]:
        results = self._call_list(
            "pi_rules_match",
            {"rule": rule, "context": context},
            lambda name, exc: [
                Verdict(f"plugin:{name}", False, (f"matcher {name!r} failed: {_exc_text(exc)}",), 99)
            ],
        )
        verdicts = [v for result in results for v in result or ()]
        return sorted(verdicts, key=lambda v: (v.rank, v.condition))

    def stream_spec(self, rule: Rule) -> StreamSpec | None:
        """The rule's stream form; computed once per rule object (specs are pure)."""
        cached = self._specs.get(id(rule))
        if cached is not None and cached[0] is rule:
            return cached[1]
        try:
            spec = self.pm.hook.pi_rules_stream_spec(rule=rule)
        except Exception:
            spec = None  # the rule's values were validated when it was parsed; a crash here
            # leaves it a section rule rather than taking the evaluation down
        if not isinstance(spec, StreamSpec):
            spec = None
        if len(self._specs) > 4096:
            self._specs.clear()
        self._specs[id(rule)] = (rule, spec)
        return spec

    def scan(
        self, root: str, queries: Sequence[tuple[str, ...]], git_root: str | None
    ) -> Mapping[tuple[str, ...], str | None]:
        result = self.pm.hook.pi_rules_scan(root=root, queries=queries, git_root=git_root)
        return result or {}

    def estimate_tokens(self, text: str) -> int:
        try:
            result = self.pm.hook.pi_rules_estimate_tokens(text=text)
        except Exception:
            result = None
        if isinstance(result, int):
            return result
        return utf16_token_estimate(text)  # the tokens plugin is blocked or broken

    def render(self, kind: str, data: Any) -> str | None:
        return self.pm.hook.pi_rules_render(kind=kind, data=data)

    def tool_output(self, host: str, tool: Any, args: Any) -> ToolOutput | None:
        """The text a tool call would write, or ``None`` (no host plugin knows it)."""
        try:
            result = self.pm.hook.pi_rules_tool_output(host=host, tool=tool, args=args)
        except Exception:
            return None  # a host plugin that breaks on hostile args must not break the host
        return result if isinstance(result, ToolOutput) else None

    def capture_paths(self, host: str, tool: str, args: Any) -> list[str]:
        """Raw path strings the host plugins read from one tool call's untrusted args."""
        results = self._call_list(
            "pi_rules_capture_paths", {"host": host, "tool": tool, "args": args}, lambda n, e: []
        )
        paths: list[str] = []
        for result in results:
            if isinstance(result, (list, tuple)):  # a faulty plugin may return anything
                paths.extend(p for p in result if isinstance(p, str))
        return paths

    def _call_list(
        self,
        name: str,
        kwargs: dict[str, Any],
        on_error: Callable[[str, BaseException], list[Any]],
    ) -> list[Any]:
        caller = getattr(self.pm.hook, name)
        try:
            return list(caller(**kwargs))
        except Exception:
            pass
        results: list[Any] = []
        for impl in reversed(caller.get_hookimpls()):
            try:
                results.append(impl.function(*(kwargs[arg] for arg in impl.argnames)))
            except Exception as exc:
                results.append(on_error(impl.plugin_name, exc))
        return results


def _exc_text(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
