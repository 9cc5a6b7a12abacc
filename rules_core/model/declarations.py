"""What plugins declare: schema keys, importers, hosts and output formats."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from rules_core.model.rules import Rule

if TYPE_CHECKING:  # an annotation only: evaluation imports this module
    from rules_core.model.evaluation import Facts


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
    # Its tool reads invalid UTF-8 as U+FFFD, so pi-rules does too, with a warning.
    lossy_utf8: bool = False


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
    ``delivery``: ``per-turn`` (the section is sent again every turn: RULE-SPEC's attachment
    arithmetic) or ``once`` (each rule once per conversation: an attachment is measured
    against what the conversation holds; docs/hosts.md, "Attachments and the budget").
    """

    name: str
    summary: str
    reads: Callable[[Rule, Facts], str | None] = field(compare=False)
    reference: str = "read_rule"
    delivery: str = "per-turn"


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


