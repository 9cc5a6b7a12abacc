"""The pipeline: discover → parse → match → select → render.

``Engine`` holds the caches and the plugin manager; ``evaluate`` is the one function
every front end (CLI, session runtime, host adapters) calls. Public methods never raise:
faults become error entries.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Mapping, Sequence

import pluggy

from rules_core.discovery.aliases import native_copies
from rules_core.discovery.cache import ScanCache, evict_oldest
from rules_core.globs.compiled import MAX_GLOBS
from rules_core.deadline import DeadlineExceeded, budget_ms, deadline, deadline_error, expired
from rules_core.engine.discovery import Discoverer, internal_error, same_inputs
from rules_core.plugins.hooks import Hooks
from rules_core.lookup import RULE_URL, Reading, find_reference, normalize_touched, sharing_path, unknown_rule
from rules_core.plugins.manager import make_plugin_manager
from rules_core.model import (
    Discovery,
    Evaluation,
    Explanation,
    Facts,
    MatchContext,
    Outcome,
    PathExplanation,
    Rule,
    RuleError,
)
from rules_core.paths import is_as_written
from rules_core.select import select
from rules_core.engine.why import describe_condition, independent_reason
from rules_core.settings.load import Settings, SettingsCache
from rules_core.settings.apply import with_settings
from rules_core.settings.resolved import Resolved
from rules_core.stream.model import StreamSpec
from rules_core.engine.verdicts import Judgement, combine_verdicts

MUTED_REASON = "muted for this session"
CUT_REASON = "not judged: the evaluation ran out of time (PI_RULES_DEADLINE_MS)"
MAX_OVERRAN = 256
PATH_CONDITION = "globs"


class Engine:
    """Discovers, matches, selects and renders rules; caches survive between calls."""

    def __init__(
        self,
        pm: pluggy.PluginManager | None = None,
        *,
        home: str | None = None,
        env: Mapping[str, str] | None = None,
        settings: SettingsCache | None = None,
    ) -> None:
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.pm = pm if pm is not None else make_plugin_manager(env=self.env)
        self.hooks = Hooks(self.pm)
        self.home = home if home is not None else self.env.get("HOME") or None
        self.discovery = Discoverer(self.hooks, self.env, self.home)
        self._scans = ScanCache()
        self._last: tuple[tuple[object, ...], Evaluation] | None = None
        self._tokens: dict[str, int] = {}
        self.deadline_ms = budget_ms(self.env)
        self._overran: dict[str, None] = {}  # scan roots that overran a deadline: not scanned again
        # The settings files (rules_core.settings.load); ``options`` are the command line's values.
        self.settings_cache = settings if settings is not None else SettingsCache(
            self.env, self.home, self.discovery.git_root)
        self.options: dict[str, Any] = {}

    def overran(self) -> tuple[str, ...]:
        """Scan roots whose exists scan overran a deadline (never scanned again here)."""
        return tuple(self._overran)

    def forget_overran(self) -> None:
        """A resident process's next session starts with none (rules_hosts.hook_server.server)."""
        self._overran.clear()

    def remember_overran(self, roots: Sequence[str]) -> None:
        """Roots an earlier process of the same session found too slow to scan."""
        for root in roots:
            self._overran[root] = None
        evict_oldest(self._overran, MAX_OVERRAN)

    def settings(self, cwd: str, trusted: bool = True) -> Settings:
        """The effective settings for ``cwd``; files are re-read when they change."""
        return self.settings_cache.settings(os.path.abspath(cwd), trusted, self.options)

    def resolve(self, cwd: str, trusted: bool = True, host: str | None = None) -> Resolved:
        """The settings of one call, read once (at its entry; pass it to the calls below)."""
        return Resolved(self.settings(cwd, trusted), host, os.path.abspath(cwd), trusted)

    def _resolved(self, cwd: str, trusted: bool, host: str | None, given: Resolved | None) -> Resolved:
        if given is None or not given.serves(os.path.abspath(cwd), trusted):  # none, or not this call's
            return self.resolve(cwd, trusted, host)
        return given.for_host(host)

    def discover(self, cwd: str, trusted: bool = True, host: str | None = None,
                 resolved: Resolved | None = None) -> Discovery:
        """Every rule and error the sources and schemas yield, ids and indexes assigned;
        ``host`` picks the ``[hosts.<name>]`` settings (the importers it enables)."""
        with deadline(self.deadline_ms):
            resolved = self._resolved(cwd, trusted, host, resolved)
            importers, users_own = resolved.importers(self.hooks.importers())
            found = self.discovery.discover(cwd, trusted, importers, users_own)
            return with_settings(found, resolved.settings, host, self.pm, self.hooks.hosts(), os.path.abspath(cwd),
                                 resolved.lint_ignore)

    # -- evaluation ------------------------------------------------------------------

    def evaluate(self, facts: Facts, discovery: Discovery | None = None,
                 resolved: Resolved | None = None) -> Evaluation:
        """Run one evaluation for ``facts`` (settings: ``resolved``) within the deadline. Never raises."""
        try:
            with deadline(self.deadline_ms):
                return self._evaluate(facts, discovery, self._resolved(facts.cwd, facts.trusted, facts.host, resolved))
        except Exception as exc:
            return Evaluation(facts, (), (internal_error(facts.cwd, exc),), (), (), "", 0, 0)

    def _evaluate(self, facts: Facts, discovery: Discovery | None, resolved: Resolved) -> Evaluation:
        cwd = os.path.abspath(facts.cwd)
        if discovery is None:
            discovery = self.discover(cwd, facts.trusted, facts.host, resolved)
        errors = list(discovery.errors)
        excluded = self._exclusions(discovery.rules, facts, resolved)
        # Stream rules fire on the model's output, never through the section.
        streams = {r.id: s.summary for r in discovery.rules if (s := self.hooks.stream_spec(r)) is not None}
        excluded_or_stream = {**streams, **excluded}  # a scope exclusion's reason wins
        live = [r for r in discovery.rules if r.id not in facts.mutes and r.id not in excluded_or_stream]
        touched = normalize_touched(facts.touched, cwd)
        git_root = self.discovery.git_root(cwd) if facts.trusted else None
        # An untrusted project's tree is not read at all, not even to scan for exists.
        existing = self._exists_pool(cwd, git_root, live, errors) if facts.trusted else {}
        # Evaluation is a pure function of these inputs: nothing changed, nothing to redo.
        inputs = (facts, discovery.rules, tuple(errors), existing, excluded)  # excluded: `disable` edits
        if self._last is not None and same_inputs(self._last[0], inputs):
            return self._last[1]
        evaluation = self._evaluate_inputs(
            facts, cwd, discovery, errors, live, excluded_or_stream, touched, existing
        )
        self._last = (inputs, evaluation)
        return evaluation

    def _evaluate_inputs(
        self,
        facts: Facts,
        cwd: str,
        discovery: Discovery,
        errors: list[RuleError],
        live: list[Rule],
        excluded: Mapping[str, str],
        touched: tuple[str, ...],
        existing: Mapping[str, Mapping[tuple[str, ...], str | None]],
    ) -> Evaluation:
        context = MatchContext(
            facts=facts,
            touched=touched,
            existing=existing,
            intents=self.hooks.intents(facts.prompt, live),
            cwd=cwd,
        )
        verdicts: dict[str, Judgement] = {}
        unjudged = 0
        # The user's own (global) rules are always judged: their cost is the user's to set,
        # and a repository that spends the deadline must not switch them off.
        for rule in live:
            if expired() and rule.source != "global":  # the rest cannot activate: inactive, and said so once below
                verdicts[rule.id] = (False, (CUT_REASON,), ())
                unjudged += 1
            else:
                verdicts[rule.id] = self._judge(rule, context)
        if unjudged:
            errors.append(deadline_error(cwd, f"{unjudged} rule{'s' if unjudged != 1 else ''} not judged"))
        matched = [r for r in live if verdicts[r.id][0]]
        # What the host's agent reads itself is delivered too, as far as a pointer to it goes.
        native = frozenset(r.file.path for r in discovery.rules if facts.host and r.id in excluded
                           and excluded[r.id] == self.hooks.host_reads(r, facts))
        selection = select(matched, facts.max_tokens, self._rule_tokens, facts.overflow, native)
        active_ids = {r.id for r in selection.active}
        outcomes = []
        inlined = {r.id: r for r in selection.inlined}  # pointers to text not sent: inlined
        for rule in discovery.rules:
            rule = inlined.get(rule.id, rule)
            tokens = self._rule_tokens(rule)
            if rule.id in facts.mutes:
                outcomes.append(Outcome(rule, "muted", (MUTED_REASON,), None, tokens))
                continue
            if rule.id in excluded:
                outcomes.append(Outcome(rule, "inactive", (excluded[rule.id],), None, tokens))
                continue
            ok, reasons, failed = verdicts[rule.id]
            if not ok:
                status, cause = "inactive", None
            elif rule.load == "on-demand" and rule.id not in selection.dropped:
                status, cause = "on-demand", None
            elif rule.id in active_ids:
                status, cause = "active", None
            else:
                status, cause = "dropped", selection.dropped.get(rule.id, "budget")
            outcomes.append(Outcome(rule, status, reasons, cause, tokens, failed))  # type: ignore[arg-type]
        by_id = {o.rule.id: o for o in outcomes}
        active = tuple(by_id[r.id] for r in selection.active)
        on_demand = tuple(by_id[r.id] for r in selection.on_demand)
        # Pinned rules a budget left out that the index names (a pool's; all with overflow = "index").
        overflow = tuple(by_id[r.id] for r in selection.listed(facts.overflow))
        section = ""
        if active or on_demand or overflow:
            # The host says how its agent fetches an index line's rule (HostInfo.reference).
            host = self.hooks.hosts().get(facts.host) if facts.host else None
            data = {"active": active, "on_demand": on_demand + overflow, "reference": host.reference if host else ""}
            section = self.hooks.render("section", data) or ""
        return Evaluation(
            facts=facts, outcomes=tuple(outcomes), errors=tuple(errors), active=active, on_demand=on_demand,
            section=section, section_tokens=self.hooks.estimate_tokens(section) if section else 0,
            budget_used=selection.budget_used, warnings=discovery.warnings, pools=selection.pools,
        )

    def _exclusions(self, rules: Sequence[Rule], facts: Facts, resolved: Resolved) -> dict[str, str]:
        """Rules left out of this evaluation, with the reason."""
        left_out = self._left_out(facts, rules, resolved)
        return {r.id: why for r in rules if r.id not in facts.mutes and (why := left_out(r)) is not None}

    def _left_out(self, facts: Facts, rules: Sequence[Rule], resolved: Resolved) -> Callable[[Rule], str | None]:
        """Why a rule of ``rules`` is not for ``facts``: a settings file disables it, a scope
        plugin excludes it (``pi_rules_exclude``), or the host's agent reads its file — or a
        byte-identical copy of it (rules_core.discovery.aliases) — itself, unless the ``import``
        setting (``PI_RULES_IMPORT``, a file, ``--import``) chose."""
        disabled = resolved.disabled
        native: dict[str, str] = {}
        if facts.host is not None and not resolved.import_chosen:
            native = {r.id: why for r in rules if (why := self.hooks.host_reads(r, facts)) is not None}
            native.update(native_copies(rules, native, facts.host, facts.cwd))

        def reason(rule: Rule) -> str | None:
            return disabled(rule) or self.hooks.exclusion(rule, facts) or native.get(rule.id)

        return reason

    def reachable(self, rules: Sequence[Rule], facts: Facts, resolved: Resolved | None = None) -> list[Rule]:
        """The rules ``read_rule`` may return for ``facts`` (none left out for them)."""
        left_out = self._left_out(facts, rules, self._resolved(facts.cwd, facts.trusted, facts.host, resolved))
        return [r for r in rules if left_out(r) is None]

    def stream_specs(self, facts: Facts, discovery: Discovery | None = None,
                     resolved: Resolved | None = None) -> tuple[StreamSpec, ...]:
        """The stream rules armed for ``facts``: not muted, not scoped out, and every
        condition besides the spec's own and the ``globs`` path gate satisfied (model,
        branch, tools). Never raises."""
        try:
            resolved = self._resolved(facts.cwd, facts.trusted, facts.host, resolved)
            if discovery is None:
                discovery = self.discover(facts.cwd, facts.trusted, facts.host, resolved)
            cwd = os.path.abspath(facts.cwd)
            context = MatchContext(facts=facts, touched=(), existing={}, intents=(), cwd=cwd)
            armed = []
            left_out = self._left_out(facts, discovery.rules, resolved)
            for rule in discovery.rules:
                spec = self.hooks.stream_spec(rule)
                if spec is None or rule.id in facts.mutes or left_out(rule) is not None:
                    continue
                skip = {*spec.owns, PATH_CONDITION}
                verdicts = [v for v in self.hooks.match(rule, context) if v.condition not in skip]
                judged = rule.declared_conditions
                if all(v.ok is not False for v in verdicts) and all(
                    c in skip or any(v.condition == c for v in verdicts) for c in judged
                ):
                    armed.append(spec)
            return tuple(armed)
        except Exception:
            return ()

    def _judge(self, rule: Rule, context: MatchContext) -> Judgement:
        if rule.inactive_reason is not None:
            return False, (rule.inactive_reason,), ()
        if rule.always_apply:
            return True, (), ()
        verdicts = self.hooks.match(rule, context)
        return combine_verdicts(rule, verdicts)

    def _exists_pool(
        self, cwd: str, git_root: str | None, rules: Sequence[Rule], errors: list[RuleError]
    ) -> dict[str, Mapping[tuple[str, ...], str | None]]:
        """One scan per distinct glob root (a rule's base), each cached per query set."""
        queries: dict[str, dict[tuple[str, ...], None]] = {}
        for rule in rules:
            if rule.always_apply or rule.inactive_reason is not None or rule.match not in ("exists", "both"):
                continue
            query = tuple(g for g in rule.globs[:MAX_GLOBS] if not is_as_written(g))  # as scan_query
            if any(not g.startswith("!") for g in query):
                queries.setdefault(rule.file.base, {}).setdefault(query, None)
        pool: dict[str, Mapping[tuple[str, ...], str | None]] = {}
        scan = self.discovery.persistent.cached_scan(cwd, git_root, True, self.hooks.scan)
        for root, root_queries in queries.items():
            if root in self._overran:
                errors.append(deadline_error(root, "its exists scan overran the deadline earlier, so it is not "
                                             "scanned again in this session"))
                continue
            try:
                pool[root] = self._scans.get(root, tuple(root_queries), git_root, scan)
            except DeadlineExceeded:
                self._overran[root] = None
                evict_oldest(self._overran, MAX_OVERRAN)
                errors.append(deadline_error(root, "the exists scan was cut; exists matching sees no files "
                                             "there for the rest of this session"))
            except Exception as exc:
                errors.append(
                    RuleError(
                        "source-unreadable",
                        root,
                        f"the exists scan failed ({type(exc).__name__}: {exc}); "
                        "exists matching saw no files there this time",
                        "scanner",
                    )
                )
        self.discovery.persistent.flush()  # what the scans learnt, for the next process
        return pool

    def _rule_tokens(self, rule: Rule) -> int:
        tokens = self._tokens.get(rule.body)
        if tokens is None:
            if len(self._tokens) > 4096:
                self._tokens.clear()  # bodies of long-gone rules
            tokens = self._tokens[rule.body] = self.hooks.estimate_tokens(rule.body)
        return tokens

    def invalidate_scans(self) -> None:
        """The project tree may have changed (a completed write/edit/bash result).

        Drops the exists scans and the sources' cached tree enumerations (the nested
        ``.pi/rules`` search); parsed rule files stay cached by mtime.
        """
        self._scans.invalidate()
        self.discovery.tree_changed()

    # -- read-only views -------------------------------------------------------------

    def explain(self, facts: Facts, path: str, resolved: Resolved | None = None) -> Explanation:
        """The ``why <path>`` report: what touching ``path`` would activate, and why."""
        try:
            with deadline(self.deadline_ms):
                return self._explain(facts, path, self._resolved(facts.cwd, facts.trusted, facts.host, resolved))
        except Exception as exc:
            return Explanation(path, (), (internal_error(facts.cwd, exc),))

    def _explain(self, facts: Facts, path: str, resolved: Resolved) -> Explanation:
        cwd = os.path.abspath(facts.cwd)
        discovery = self.discover(cwd, facts.trusted, facts.host, resolved)
        touched = normalize_touched((path,), cwd)
        probe = dataclasses.replace(facts, touched=touched, prompt="")
        context = MatchContext(facts=probe, touched=touched, existing={}, intents=(), cwd=cwd)
        entries = []
        left_out = self._left_out(facts, discovery.rules, resolved)
        for rule in discovery.rules:
            caveats = tuple(describe_condition(rule, c) for c in rule.declared_conditions if c != PATH_CONDITION)
            if rule.id in facts.mutes:
                entries.append(PathExplanation(rule, "muted", (MUTED_REASON,)))
            elif rule.inactive_reason is not None:
                entries.append(PathExplanation(rule, "no-match", (rule.inactive_reason,)))
            elif (scoped_out := left_out(rule)) is not None:
                entries.append(PathExplanation(rule, "no-match", (scoped_out,)))
            elif (spec := self.hooks.stream_spec(rule)) is not None:
                entries.append(PathExplanation(rule, "no-match", (spec.summary,)))
            elif rule.always_apply:
                entries.append(PathExplanation(rule, "path-independent", ("alwaysApply",)))
            elif PATH_CONDITION not in rule.declared_conditions:
                entries.append(PathExplanation(rule, "path-independent", (independent_reason(rule),), caveats))
            else:
                verdicts = [v for v in self.hooks.match(rule, context) if v.condition == PATH_CONDITION]
                ok = bool(verdicts) and all(v.ok for v in verdicts)
                reasons = tuple(r for v in verdicts for r in v.reasons) or ("no matcher judges globs",)
                entries.append(PathExplanation(rule, "matches" if ok else "no-match", reasons, caveats))
        shown = touched[0] if touched else path
        return Explanation(shown, tuple(entries), discovery.errors)

    def read_rule(self, facts: Facts, name: object, rules: Sequence[Rule] | None = None,
                  resolved: Resolved | None = None) -> Reading:
        """The ``read_rule`` tool for every host: the rule ``name`` reaches (its exact
        rules-relative path or ``rule://<id>``) among the rules the agent of ``facts`` may
        see, or the refusal. ``rules`` defaults to a fresh discovery. Never raises."""
        try:
            resolved = self._resolved(facts.cwd, facts.trusted, facts.host, resolved)
            if rules is None:
                rules = self.discover(facts.cwd, facts.trusted, facts.host, resolved).rules
            reachable = self.reachable(rules, facts, resolved)
            found = find_reference(reachable, name)
            if found is not None:
                by_path = not (isinstance(name, str) and name.startswith(RULE_URL))
                return Reading(found, None, sharing_path(reachable, found) if by_path else ())
            return Reading(None, unknown_rule(reachable, name if isinstance(name, str) else ""))
        except Exception as exc:
            return Reading(None, f"Unknown rule: {internal_error(facts.cwd, exc).message}")
