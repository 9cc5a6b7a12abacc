"""Rule files, rules and the errors a file can have: what discovery and parsing make."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Mapping

ErrorKind = Literal[
    "yaml-syntax", "missing-frontmatter", "unknown-key", "invalid-version", "missing-description", "invalid-value",
    "match-without-globs", "no-activation-condition", "read-failure", "source-unreadable",
]
ERROR_KINDS: tuple[str, ...] = ErrorKind.__args__  # type: ignore[attr-defined]

MatchMode = Literal["touched", "exists", "both"]
Enforcement = Literal["enforce", "recommend", "inform"]
Load = Literal["pinned", "on-demand"]
Status = Literal["active", "on-demand", "dropped", "inactive", "muted"]

# Discovery order groups (RULE-SPEC §1), then the rest of the order key; gaps for third parties.
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
    """A problem with one rule file (or a source directory), reported, never raised;
    ``line``/``column`` its 1-based place in ``path`` (the key or value at fault, where a
    YAML error stopped), ``None``: the whole file (docs/lint.md, "Where an annotation lands")."""

    kind: str
    path: str
    message: str
    plugin: str = ""
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class RuleWarning:
    """Something a user should know that loads no rule and breaks none (``check`` exits 0):
    ``code`` is stable, lower-case, hyphenated (``cwd-only``); ``line``/``column`` its 1-based
    place in ``path``, ``None``: the whole file."""

    code: str
    path: str
    message: str
    plugin: str = ""
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class BudgetPool:
    """A budget of its own for the rules naming it (``Rule.pool``; docs/format.md, "Budget pools")."""

    name: str
    max_tokens: int
    summary: str = ""


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
    # The budget the rule competes in; None: the section's (RULE-SPEC §6).
    pool: BudgetPool | None = None
    # "index": the index names the rule whenever a budget leaves it out, whatever the
    # ``overflow`` setting says. Set by importers of formats RULE-SPEC does not govern,
    # whose own tools deliver every applying rule (docs/format.md, "Overflow").
    overflow: str | None = None
    # Rule files (absolute paths) the body points to instead of copying their text, and the
    # body with that text inlined: sent when one of them is not in the same delivery.
    points_to: tuple[str, ...] = ()
    inlined: str | None = None
    # The file's other names: in-project symbolic links to it that another source listed
    # (``CLAUDE.md -> AGENTS.md``). Set by discovery; the rule is one rule with every name.
    aliases: tuple[RuleFile, ...] = ()

    @property
    def positive_globs(self) -> tuple[str, ...]:
        return tuple(g for g in self.globs if not g.startswith("!"))

    @property
    def negative_globs(self) -> tuple[str, ...]:
        return tuple(g[1:] for g in self.globs if g.startswith("!"))

    @property
    def declared_conditions(self) -> tuple[str, ...]:
        """Names of the conditions this rule declares; each needs a matcher's verdict."""
        declared = (("globs", bool(self.globs)), ("tools", bool(self.tools)),
                    ("model", self.model is not None), ("branch", self.branch is not None))
        return tuple(name for name, on in declared if on) + self.extra_conditions

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
    """What a schema returns for one file: a rule, errors, or both (soft errors); warnings."""

    rule: Rule | None
    errors: tuple[RuleError, ...] = ()
    # Other files the result was built from (expanded imports): the parse is redone when
    # any of them changes, as when the rule file itself does.
    depends: tuple[str, ...] = ()
    warnings: tuple[RuleWarning, ...] = ()


