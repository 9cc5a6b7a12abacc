"""The data that flows through the engine: frozen values, no behaviour beyond accessors."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping

ErrorKind = Literal[
    "yaml-syntax",
    "missing-frontmatter",
    "unknown-key",
    "invalid-version",
    "missing-description",
    "invalid-value",
    "match-without-globs",
    "no-activation-condition",
    "read-failure",
    "source-unreadable",
]
ERROR_KINDS: tuple[str, ...] = ErrorKind.__args__  # type: ignore[attr-defined]

MatchMode = Literal["touched", "exists", "both"]
Enforcement = Literal["enforce", "recommend", "inform"]
Load = Literal["pinned", "on-demand"]
Status = Literal["active", "on-demand", "dropped", "inactive", "muted"]

# Discovery order groups (RULE-SPEC §1). A source plugin puts its files in one group;
# within a group the rest of the order key decides. Gaps leave room for third parties.
ORDER_CWD = 0
ORDER_ANCESTORS = 10
ORDER_NESTED = 20
ORDER_IMPORTS = 30
ORDER_PACKS = 80  # rule packs of installed distributions (docs/packs.md)
ORDER_GLOBAL = 90

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class RuleFile:
    """One file a source plugin found.

    ``order`` is the pure sort key of discovery order: (group, rank inside the group,
    scope, relative path). ``base`` is the absolute directory the rule's globs are
    relative to; ``rules_root`` the directory ``relative_path`` is relative to.
    """

    path: str
    rules_root: str
    relative_path: str
    base: str
    plugin: str
    schema: str
    source: Literal["project", "global"]
    order: tuple[int, int, str, str]
    # The id stem when the file name's own stem is not it (``x.instructions.md`` → ``x``).
    id_stem: str = ""
    # The folder files this one names (imports, ``#[[file:]]`` references) may be read
    # from: the git root (cwd without one) for project files, $HOME for global ones. Empty:
    # the file names no other file.
    bound: str = ""
    # Files other sources load as rules of their own (a walked-up AGENTS.md): an import of
    # one points to it instead of copying its text, so the model does not get it twice.
    elsewhere: tuple[str, ...] = ()

    @property
    def stem(self) -> str:
        if self.id_stem:
            return self.id_stem
        name = self.relative_path.rsplit("/", 1)[-1]
        return name[: -len(".md")] if name.endswith(".md") else name.rsplit(".", 1)[0] or name


@dataclass(frozen=True)
class RuleError:
    """A problem with one rule file (or a source directory), reported, never raised."""

    kind: str
    path: str
    message: str
    plugin: str = ""


@dataclass(frozen=True)
class RuleWarning:
    """Something a user should know that loads no rule and breaks none (``check`` exits 0):
    ``code`` is stable, lower-case, hyphenated (``cwd-only``)."""

    code: str
    path: str
    message: str
    plugin: str = ""


@dataclass(frozen=True)
class Rule:
    """A parsed rule. ``id`` and ``index`` are assigned by the engine after discovery."""

    file: RuleFile
    description: str
    body: str
    globs: tuple[str, ...] = ()
    match: MatchMode = "both"
    tools: tuple[str, ...] = ()
    branch: str | None = None
    model: str | None = None
    priority: int = 0
    enforcement: Enforcement = "inform"
    load: Load = "pinned"
    keywords: tuple[str, ...] = ()
    always_apply: bool = False
    # Not hashed (a mapping is unhashable); still compared.
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, hash=False)
    # Keys in ``extra`` that are activation conditions a plugin's matcher judges.
    extra_conditions: tuple[str, ...] = ()
    # Set by a schema for a file its own tool deliberately never applies (e.g. Cline's
    # ``paths: []``): the rule is listed, and always inactive with this reason.
    inactive_reason: str | None = None
    id: str = ""
    index: int = -1
    # What the index and ``read_rule`` call this rule: its relative path, or ``rule://<id>``
    # when an earlier rule has the same relative path (that path reaches the earlier one).
    reference: str = ""
    # Compiled matchers, built once when the rule is parsed (see rules_core.globs.matching).
    compiled: Any = field(default=None, compare=False, repr=False)

    @property
    def positive_globs(self) -> tuple[str, ...]:
        return tuple(g for g in self.globs if not g.startswith("!"))

    @property
    def negative_globs(self) -> tuple[str, ...]:
        return tuple(g[1:] for g in self.globs if g.startswith("!"))

    @property
    def declared_conditions(self) -> tuple[str, ...]:
        """Names of the conditions this rule declares; each needs a matcher's verdict."""
        names = []
        if self.globs:
            names.append("globs")
        if self.tools:
            names.append("tools")
        if self.model is not None:
            names.append("model")
        if self.branch is not None:
            names.append("branch")
        names.extend(self.extra_conditions)
        return tuple(names)

    @property
    def unconditional(self) -> bool:
        return self.always_apply or not self.declared_conditions

    @property
    def relative_path(self) -> str:
        return self.file.relative_path

    @property
    def source(self) -> str:
        return self.file.source


@dataclass(frozen=True)
class ParseResult:
    """What a schema returns for one file: a rule, errors, or both (soft errors)."""

    rule: Rule | None
    errors: tuple[RuleError, ...] = ()
    # Other files the result was built from (expanded imports): the parse is redone when
    # any of them changes, as when the rule file itself does.
    depends: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchemaKey:
    """A frontmatter key a plugin adds to a strict schema.

    ``validate`` returns the normalised value or raises ``ValueError`` whose message
    says what is wrong and what to write instead. A key with ``is_condition`` counts as
    an activation trigger (RULE-SPEC §4) and must be judged by a matcher.
    """

    name: str
    validate: Callable[[Any], Any]
    is_condition: bool = False
    help: str = ""


@dataclass(frozen=True)
class ImporterInfo:
    """An importer of another tool's rule format, selectable with ``PI_RULES_IMPORT``.

    ``default`` says whether it is on when ``PI_RULES_IMPORT`` is absent, empty or
    ``all``. Its source must return nothing unless its name is in
    ``DiscoveryContext.importers``.
    """

    name: str
    default: bool = True
    summary: str = ""
    # cwd-relative paths the importer reads only in the working directory (RULE-SPEC §1):
    # found only in an ancestor, they earn a ``cwd-only`` warning instead of silence.
    cwd_only: tuple[str, ...] = ()
    # cwd-relative files and folders whose presence says a project has rules in this
    # format: the untrusted-project notice checks them with lstat alone (docs/trust.md).
    # Empty: ``cwd_only`` stands in.
    markers: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostInfo:
    """A host pi-rules can evaluate for (``--host NAME``), declared by ``pi_rules_hosts``.

    ``reads(rule, facts)`` says why the host's agent already reads ``rule``'s file itself
    (Claude Code's ``CLAUDE.md``, Pi's ``AGENTS.md``), or returns None. Such a rule is left
    out for that host — reported inactive with that reason — unless ``PI_RULES_IMPORT``
    chooses the importers explicitly.

    ``reference`` says how the host's agent fetches a rule listed by reference (on-demand
    index lines, degraded attachments): ``read_rule`` (the spec's tool, relative path) or
    ``read-tool`` (the agent's own file-reading tool, absolute path; CONTRACT §6).
    """

    name: str
    summary: str
    reads: Callable[[Rule, Facts], str | None] = field(compare=False)
    reference: str = "read_rule"


@dataclass(frozen=True)
class OutputFormat:
    """A ``--format`` a plugin adds to a command (``pi_rules_output_formats``).

    ``render`` takes the command's data (for ``check``: ``{"discovery", "cwd"}``) and
    returns the complete output text; the command keeps its exit code.
    """

    name: str
    command: str
    summary: str
    render: Callable[[Mapping[str, Any]], str] = field(compare=False)


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
    first. ``tree_cache`` is an engine-owned
    dict where a source may keep an expensive enumeration of the project tree; the
    engine empties it whenever the tree may have changed (``Engine.invalidate_scans``).
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
