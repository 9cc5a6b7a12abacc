"""A typed facade over the plugin manager: one method per hook, faults contained.

The fault policy (docs/plugins.md): every implementation is called at most once per
hook call. One that raises is recorded with its plugin's name; a list hook keeps every
other implementation's result, a firstresult hook stops there (the fault is its
answer, as with pluggy's own exceptions). What the fault then becomes is decided per
hook below — an error entry, a failing verdict, a fallback — never an exception in the
host.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import pluggy

from rules_core.discovery.aliases import every_name
from rules_core.model.places import placed
from rules_core.plugins.manager import FAULT, FAULTS
from rules_core.model import (
    Discovery,
    DiscoveryContext,
    Facts,
    HostInfo,
    ImporterInfo,
    Intent,
    MatchContext,
    OutputFormat,
    ParseResult,
    Rule,
    RuleError,
    RuleFile,
    RuleWarning,
    SchemaKey,
    Verdict,
)
from rules_core.select import utf16_token_estimate
from rules_core.stream.model import StreamSpec, ToolOutput

Faults = list[tuple[str, Exception]]


class Hooks:
    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm
        self._schema_keys: dict[str, dict[str, SchemaKey]] = {}
        self._importers: list[ImporterInfo] | None = None
        # Why a plugin's importer declarations were left out (``importers``): discovery
        # reports each as an error instead of letting one bad declaration stop it.
        self._importer_problems: list[tuple[str, str]] = []
        self._hosts: dict[str, HostInfo] | None = None
        self._specs: dict[int, tuple[Rule, StreamSpec | None]] = {}

    def call(self, name: str, **kwargs: Any) -> tuple[Any, Faults]:
        """Call hook ``name`` once under the fault policy: its result (a list for list
        hooks, ``None`` for a firstresult hook whose answer was a fault) and the ``(plugin
        name, exception)`` of every implementation that raised."""
        faults: Faults = []
        token = FAULTS.set(faults)
        try:
            result = getattr(self.pm.hook, name)(**kwargs)
        finally:
            FAULTS.reset(token)
        if result is FAULT:
            return None, faults
        if isinstance(result, list):
            result = [item for item in result if item is not FAULT]
        return result, faults

    def sources(self, context: DiscoveryContext) -> tuple[list[RuleFile], list[RuleError]]:
        results, faults = self.call("pi_rules_sources", context=context)
        files: list[RuleFile] = []
        errors = [
            RuleError(
                "source-unreadable",
                context.cwd,
                f"source plugin {name!r} failed ({_exc_text(exc)}); its rules are not "
                f"loaded — report it to its authors or block it with -p no:{name}",
                name,
            )
            for name, exc in faults
        ]
        for result in results:
            for item in result or ():
                if isinstance(item, RuleFile):
                    files.append(item)
                elif isinstance(item, RuleError):
                    errors.append(item)
        return files, errors

    def importers(self) -> list[ImporterInfo]:
        if self._importers is None:
            results, faults = self.call("pi_rules_importers")
            infos: dict[str, ImporterInfo] = {}
            problems = [(name, f"its pi_rules_importers hook failed ({_exc_text(exc)})") for name, exc in faults]
            for result in results:
                for info in result if isinstance(result, (list, tuple)) else [result]:
                    problem = _importer_problem(info)
                    if problem is None:
                        infos.setdefault(info.name, info)
                    else:
                        name = getattr(info, "name", None)
                        problems.append((name if isinstance(name, str) and name else "?", problem))
            self._importers = sorted(infos.values(), key=lambda info: info.name)
            self._importer_problems = problems
        return self._importers

    def importer_problems(self) -> list[tuple[str, str]]:
        """The importer declarations ``importers`` left out: (importer or plugin name, why)."""
        self.importers()
        return self._importer_problems

    def schema_keys(self, schema: str) -> Mapping[str, SchemaKey]:
        cached = self._schema_keys.get(schema)
        if cached is None:
            cached = {}
            results, _ = self.call("pi_rules_schema_keys", schema=schema)
            for result in results:
                for key in result or ():
                    cached.setdefault(key.name, key)
            self._schema_keys[schema] = cached
        return cached

    def parse(self, rule_file: RuleFile, text: str) -> ParseResult:
        result, faults = self.call(
            "pi_rules_parse", rule_file=rule_file, text=text, extra_keys=self.schema_keys(rule_file.schema)
        )
        if isinstance(result, ParseResult):
            if not result.errors:
                return result
            # An error a plugin gave no place gets the one its message names (issue 34).
            return dataclasses.replace(result, errors=placed(result.errors, rule_file.path, text))
        if faults:
            name, exc = faults[0]
            message = (
                f"the schema plugin {name!r} for {rule_file.schema!r} files crashed on this file "
                f"({_exc_text(exc)}); report it to the plugin's authors"
            )
        else:
            message = (
                f"no plugin parses {rule_file.schema!r} files (is its schema plugin blocked?); "
                "unblock it or remove the file"
            )
        return ParseResult(None, (RuleError("read-failure", rule_file.path, message, rule_file.plugin),))

    def intents(self, prompt: str, rules: Sequence[Rule]) -> tuple[Intent, ...]:
        results, _ = self.call("pi_rules_intent", prompt=prompt, rules=rules)
        seen: dict[Intent, None] = {}
        for result in results:
            for intent in result or ():
                seen.setdefault(intent, None)
        return tuple(sorted(seen, key=lambda i: (i.kind, i.glob)))

    def hosts(self) -> dict[str, HostInfo]:
        """Every declared host by name, the first declaration of a name winning."""
        if self._hosts is None:
            results, _ = self.call("pi_rules_hosts")
            hosts: dict[str, HostInfo] = {}
            for result in results:
                for info in result or ():
                    hosts.setdefault(info.name, info)
            self._hosts = dict(sorted(hosts.items()))
        return self._hosts

    def host_reads(self, rule: Rule, facts: Facts) -> str | None:
        """Why ``facts.host``'s agent reads ``rule`` itself, or None (also for an unknown
        host, and when the host's check fails: a rule sent twice beats a rule lost)."""
        info = self.hosts().get(facts.host) if facts.host else None
        if info is None:
            return None
        # A file with two names (rules_core.discovery.aliases) is read when either name is.
        for name in every_name(rule):
            try:
                reason = info.reads(name, facts)
            except Exception:
                return None
            if isinstance(reason, str) and reason:
                return reason if name is rule else f"{reason} (as {name.relative_path}, a link to this file)"
        return None

    def exclusion(self, rule: Rule, facts: Facts) -> str | None:
        results, faults = self.call("pi_rules_exclude", rule=rule, facts=facts)
        reasons = [r for r in results if isinstance(r, str) and r]
        reasons += [f"scope plugin {name!r} failed: {_exc_text(exc)}" for name, exc in faults]
        return "; ".join(reasons) if reasons else None

    def match(self, rule: Rule, context: MatchContext) -> list[Verdict]:
        results, faults = self.call("pi_rules_match", rule=rule, context=context)
        verdicts = [v for result in results for v in result or ()]
        verdicts += [
            Verdict(f"plugin:{name}", False, (f"matcher {name!r} failed: {_exc_text(exc)}",), 99)
            for name, exc in faults
        ]
        return sorted(verdicts, key=lambda v: (v.rank, v.condition))

    def stream_spec(self, rule: Rule) -> StreamSpec | None:
        """The rule's stream form; computed once per rule object (specs are pure). A
        faulty plugin leaves the rule a section rule: its values were validated when it
        was parsed, so the evaluation goes on."""
        cached = self._specs.get(id(rule))
        if cached is not None and cached[0] is rule:
            return cached[1]
        spec, _ = self.call("pi_rules_stream_spec", rule=rule)
        if not isinstance(spec, StreamSpec):
            spec = None
        if len(self._specs) > 4096:
            self._specs.clear()
        self._specs[id(rule)] = (rule, spec)
        return spec

    def scan(
        self, root: str, queries: Sequence[tuple[str, ...]], git_root: str | None
    ) -> Mapping[tuple[str, ...], str | None]:
        """Raises when the scanner failed, so the engine reports it and caches nothing."""
        result, faults = self.call("pi_rules_scan", root=root, queries=queries, git_root=git_root)
        if result is None and faults:
            name, exc = faults[0]
            raise RuntimeError(f"scanner plugin {name!r}: {_exc_text(exc)}") from exc
        return result or {}

    def estimate_tokens(self, text: str) -> int:
        result, _ = self.call("pi_rules_estimate_tokens", text=text)
        if isinstance(result, int):
            return result
        return utf16_token_estimate(text)  # the tokens plugin is blocked or broken

    def render(self, kind: str, data: Any) -> str | None:
        """The text, or ``None`` when no plugin renders ``kind``; a renderer's fault is
        raised (callers turn it into an internal-error line or entry)."""
        result, faults = self.call("pi_rules_render", kind=kind, data=data)
        if result is None and faults:
            raise faults[0][1]
        return result

    def tool_output(self, host: str, tool: Any, args: Any) -> ToolOutput | None:
        """The text a tool call would write, or ``None`` (no host plugin knows it, or
        the one that does broke on hostile args)."""
        result, _ = self.call("pi_rules_tool_output", host=host, tool=tool, args=args)
        return result if isinstance(result, ToolOutput) else None

    def capture_paths(self, host: str, tool: str, args: Any) -> list[str]:
        """Raw path strings the host plugins read from one tool call's untrusted args."""
        results, _ = self.call("pi_rules_capture_paths", host=host, tool=tool, args=args)
        paths: list[str] = []
        for result in results:
            if isinstance(result, (list, tuple)):  # a faulty plugin may return anything
                paths.extend(p for p in result if isinstance(p, str))
        return paths

    def lint(self, discovery: Discovery, context: Any) -> list[RuleWarning]:
        """Every linter's warnings (``context`` is a ``rules_core.lint.check.LintContext``); a
        linter that raised is one ``lint-failed`` warning naming it, the others stand."""
        results, faults = self.call("pi_rules_lint", discovery=discovery, context=context)
        found = [w for result in results if isinstance(result, (list, tuple)) for w in result
                 if isinstance(w, RuleWarning)]
        found += [
            RuleWarning("lint-failed", context.cwd, f"lint plugin {name!r} failed ({_exc_text(exc)}); its "
                        f"warnings are missing — report it to its authors or block it with -p no:{name}", name)
            for name, exc in faults
        ]
        return found

    def output_formats(self, command: str) -> dict[str, OutputFormat]:
        """The ``--format`` values plugins add to ``command``, by name."""
        results, _ = self.call("pi_rules_output_formats")
        found: dict[str, OutputFormat] = {}
        for result in results:
            for item in result or ():
                if isinstance(item, OutputFormat) and item.command == command:
                    found.setdefault(item.name, item)
        return dict(sorted(found.items()))


def _exc_text(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _importer_problem(info: Any) -> str | None:
    """What is wrong with a plugin's importer declaration, or None. A third party's bad
    value (a ``cwd_only`` of None) would otherwise fail every discovery that reads it."""
    if not isinstance(info, ImporterInfo):
        return f"it declared {type(info).__name__}, not an ImporterInfo"
    if not isinstance(info.name, str) or not info.name:
        return "its name is not a non-empty string"
    for field in ("cwd_only", "markers"):
        value = getattr(info, field)
        if not isinstance(value, (tuple, list)) or not all(isinstance(item, str) for item in value):
            return f"its {field} is not a sequence of strings"
    if not all(isinstance(getattr(info, f), bool) for f in ("default", "lossy_utf8")) or not isinstance(info.summary, str):
        return "its default, lossy_utf8 or summary has the wrong type"
    return None
