"""One evaluation: facts in, outcomes, the section and explanations out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from rules_core.model.rules import Status, _EMPTY, RuleError, RuleWarning, BudgetPool, Rule


@dataclass(frozen=True)
class DiscoveryContext:
    """What a source plugin may know: where to look and whether the project is trusted.

    ``git_root`` is the enclosing repository's top level (an ancestor-or-self of ``cwd``
    in the same spelling), or ``None`` outside a repository and for untrusted projects.
    Nothing above it may be read. Pass the whole context to
    ``rules_core.discovery.listing.list_rule_files``: its ``listing_cache`` remembers unlistable
    directories and its ``containment`` (a ``rules_core.discovery.containment.Containment``, ``None``
    for untrusted projects) keeps project files inside the git root, or cwd without one.
    A source that reads files itself must resolve project paths through ``containment``
    first. ``tree_cache`` is an engine-owned dict where a source may keep an expensive
    enumeration of the project tree; the engine empties it whenever the tree may have
    changed (``Engine.invalidate_scans``).
    """

    cwd: str
    home: str | None
    trusted: bool
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    git_root: str | None = None
    listing_cache: Any = field(default=None, compare=False)
    containment: Any = field(default=None, compare=False)
    tree_cache: dict[Any, Any] | None = field(default=None, compare=False)
    # Names of the importers PI_RULES_IMPORT enables (see ImporterInfo).
    importers: frozenset[str] = frozenset()
    # Importers of user-level files when a project narrowed its own (None: ``importers``).
    global_importers: frozenset[str] | None = None


@dataclass(frozen=True)
class Facts:
    """Everything one evaluation depends on besides the files on disk.

    ``touched`` paths are cwd-relative (or absolute when outside cwd); ``branch`` and
    ``model`` are ``None`` when absent. ``max_tokens`` is the pinned-body budget.
    """

    cwd: str
    trusted: bool = True
    touched: tuple[str, ...] = ()
    prompt: str = ""
    model: str | None = None
    branch: str | None = None
    tools: tuple[str, ...] = ()
    mutes: frozenset[str] = frozenset()
    max_tokens: int = 2000
    # Which agent asks: ``main`` for the top-level session, ``sub`` for an unnamed
    # sub-agent, else the sub-agent's name (rules may be scoped with ``agents:``, where
    # the pattern ``sub`` takes named sub-agents too).
    agent: str = "main"
    # What happens to a pinned rule the budget leaves out: ``drop`` (RULE-SPEC, the default)
    # or ``index`` (also listed in the on-demand index, so the model can fetch it).
    overflow: str = "drop"
    # The host the rules are for (``pi``, ``claude-code``, a third party's name), or None.
    # Files a host's agent reads itself are left out for it (``pi_rules_host_reads``).
    host: str | None = None
    # The touched paths that came from shell commands (``--shell``; docs/shell.md). Each is
    # also in ``touched``; a matcher plugin that must tell them apart reads this.
    shell_touched: tuple[str, ...] = ()
    host_loaded: frozenset[tuple[str, str]] | None = None  # what it already sent (protocols.loaded)


@dataclass(frozen=True)
class Intent:
    """A glob the turn prompt donated: a language trigger (``*.py``) or a rule's keyword."""

    glob: str
    kind: Literal["language", "keyword"]


@dataclass(frozen=True)
class MatchContext:
    """Inputs shared by every matcher in one evaluation.

    ``cwd`` is absolute; ``touched`` paths are normalised (cwd-relative, or absolute when
    outside cwd). ``existing`` maps a scan root (a rule's base) and a rule's scannable
    globs to the first existing root-relative file they claim, or ``None``.
    """

    facts: Facts
    touched: tuple[str, ...]
    existing: Mapping[str, Mapping[tuple[str, ...], str | None]]
    intents: tuple[Intent, ...]
    cwd: str = ""


@dataclass(frozen=True)
class Verdict:
    """One matcher's judgement of one condition of one rule.

    ``ok`` is True (satisfied), False (not) or None (the condition does not apply).
    ``reasons`` explain a success (``touched src/a.ts``) or a failure (mismatch text).
    ``rank`` orders reasons across matchers (paths 10, tools 20, model 30, branch 40).
    """

    condition: str
    ok: bool | None
    reasons: tuple[str, ...] = ()
    rank: int = 50


@dataclass(frozen=True)
class Outcome:
    """What evaluation decided about one rule."""

    rule: Rule
    status: Status
    reasons: tuple[str, ...] = ()
    cause: str | None = None
    tokens: int = 0
    # The conditions (``globs``, ``tools``, ``model``, …) an inactive rule failed; empty
    # when something else made it inactive (a mute, a setting, the deadline).
    failed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Discovery:
    rules: tuple[Rule, ...]
    errors: tuple[RuleError, ...]
    warnings: tuple[RuleWarning, ...] = ()


@dataclass(frozen=True)
class Evaluation:
    """The result of one evaluation: per-rule outcomes, errors and the rendered section."""

    facts: Facts
    outcomes: tuple[Outcome, ...]
    errors: tuple[RuleError, ...]
    active: tuple[Outcome, ...]
    on_demand: tuple[Outcome, ...]
    section: str
    section_tokens: int
    budget_used: int
    warnings: tuple[RuleWarning, ...] = ()
    pools: tuple[tuple[BudgetPool, int], ...] = ()  # each pool a matched rule met, tokens admitted

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(o.rule for o in self.outcomes)


@dataclass(frozen=True)
class PathExplanation:
    """The ``why <path>`` report for one rule."""

    rule: Rule
    verdict: Literal["matches", "no-match", "path-independent", "muted"]
    reasons: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()


@dataclass(frozen=True)
class Explanation:
    path: str
    entries: tuple[PathExplanation, ...]
    errors: tuple[RuleError, ...]
