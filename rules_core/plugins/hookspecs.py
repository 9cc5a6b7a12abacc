"""Every hook pi-rules calls. Implement them with ``rules_core.hookimpl``.

Hook names carry the ``pi_rules_`` prefix; pluggy's ``check_pending()`` rejects a
misspelled one. Built-in implementations of firstresult hooks are ``trylast`` so a
third-party implementation always wins. No hook result depends on call order: the
engine sorts what list hooks return by explicit keys. An implementation that raises is
called once, treated as having returned nothing, and reported (docs/plugins.md, "Fault
policy").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pluggy

if TYPE_CHECKING:  # annotations only: a plugin importing ``hookimpl`` loads no engine
    from rules_core.lint_context import LintContext
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
    from rules_core.stream.model import StreamSpec, ToolOutput

PROJECT_NAME = "pi_rules"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def pi_rules_sources(context: DiscoveryContext) -> Sequence[RuleFile | RuleError]:
    """Return the rule files this source can see, and errors for what it could not list.

    List hook: every source contributes. Never raise: an unlistable directory is a
    ``source-unreadable`` error entry. Project sources must return nothing when
    ``context.trusted`` is false. The engine sorts the merged result by
    ``RuleFile.order``, so call order never matters.
    """


@hookspec
def pi_rules_importers() -> Sequence[ImporterInfo]:
    """Declare the importers this plugin provides (other tools' rule formats).

    List hook. ``PI_RULES_IMPORT`` selects among every declared name: ``none`` turns all
    off, absent/empty/``all`` turns on the defaults, a comma list turns on exactly those
    (a name nobody declares is reported as an error). The selection reaches sources as
    ``DiscoveryContext.importers``.
    """


@hookspec
def pi_rules_hosts() -> Sequence[HostInfo]:
    """Declare the hosts this plugin knows (``pi``, ``claude-code``) and which rule files
    each host's agent reads natively.

    List hook; the first declaration of a name wins. ``Facts.host`` (``--host NAME``, the
    Claude Code hook, a ``serve`` client) picks one: rules it ``reads`` itself are left out
    of that host's evaluation — reported inactive with the reason — so nothing reaches
    the model twice. ``PI_RULES_IMPORT`` set to anything turns this off (the user chose).
    """


@hookspec(firstresult=True)
def pi_rules_parse(
    rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]
) -> ParseResult | None:
    """Parse ``text`` of a file whose ``rule_file.schema`` this plugin owns.

    firstresult: return ``None`` for files of another schema. ``extra_keys`` are the
    keys plugins added to this schema through ``pi_rules_schema_keys``. Errors are values
    in the returned ``ParseResult``; an uncompilable glob loads the rule (that pattern
    never matches) and still reports an ``invalid-value`` error.
    """


@hookspec
def pi_rules_schema_keys(schema: str) -> Sequence[SchemaKey]:
    """Extra frontmatter keys this plugin adds to the strict ``schema`` (e.g. ``"v1"``).

    List hook. The schema accepts these keys instead of reporting ``unknown-key``; their
    validated values land in ``Rule.extra``. Block the plugin and the keys are unknown
    again.
    """


@hookspec
def pi_rules_intent(prompt: str, rules: Sequence[Rule]) -> Sequence[Intent]:
    """Intent globs the turn ``prompt`` donates (language triggers, rule keywords).

    List hook. Intent globs never enter the touched or existing path pools.
    """


@hookspec
def pi_rules_exclude(rule: Rule, facts: Facts) -> str | None:
    """A reason to leave ``rule`` out of this evaluation entirely, or ``None``.

    List hook; any reason excludes. For scoping that is not activation — e.g. a rule
    meant for other agents (``agents:``). An excluded rule is reported ``inactive`` with
    the reason, is never matched (not even ``alwaysApply``), joins no bucket, and
    ``read_rule`` cannot reach it. Must be a pure function of its arguments.
    """


@hookspec
def pi_rules_match(rule: Rule, context: MatchContext) -> Sequence[Verdict]:
    """Judge the conditions of ``rule`` this matcher owns, one ``Verdict`` each.

    List hook: verdicts are AND-ed; a declared condition no matcher judges fails.
    Return an empty sequence for conditions you do not own. ``alwaysApply`` and muted
    rules never reach this hook.
    """


@hookspec(firstresult=True)
def pi_rules_stream_spec(rule: Rule) -> StreamSpec | None:
    """The stream-rule form of ``rule``, or ``None`` for a rule the section delivers.

    firstresult. A rule with a spec watches the model's output instead: it never enters
    the section or the on-demand index (it is reported ``inactive`` with
    ``StreamSpec.summary``), ``read_rule`` still reaches it, and the session's
    ``StreamWatcher`` fires it. Must be a pure function of the rule.
    """


@hookspec(firstresult=True)
def pi_rules_scan(
    root: str, queries: Sequence[tuple[str, ...]], git_root: str | None
) -> Mapping[tuple[str, ...], str | None] | None:
    """The exists scanner: which files exist below ``root`` for ``exists``/``both`` rules.

    firstresult. Each query is one rule's root-relative globs (positives and
    ``!``-negations). Return, for every query, the first file (root-relative, in sorted
    code-point order) that matches a positive glob and no negation, or ``None``. Files
    only. ``git_root`` bounds ignore handling (``.gitignore`` files between it and
    ``root`` apply; nothing above it is read); ``None`` outside a repository. The engine
    calls this at most once per ``(root, queries)`` and caches the answer until a tool
    result that can write invalidates it.
    """


@hookspec(firstresult=True)
def pi_rules_estimate_tokens(text: str) -> int | None:
    """Estimated token count of ``text``; built-in: ``ceil(utf16_units / 4)``."""


@hookspec(firstresult=True)
def pi_rules_render(kind: str, data: Any) -> str | None:
    """Render ``data`` as ``kind`` text.

    Kinds: ``section``, ``entry``, ``index-line``, ``attachment``, ``report``, ``explain``, ``show``,
    ``check``, ``list``, ``stream-interrupt``, ``stream-reminder``, ``stream-deny``. firstresult: return ``None`` for kinds you do not render.
    """


@hookspec(firstresult=True)
def pi_rules_tool_output(host: str, tool: str, args: Any) -> ToolOutput | None:
    """What a tool call would write, before it runs: the host's tool mapped to the stream
    scope's tool name (``write``, ``edit``), its file path and the text it writes.

    firstresult; host plugins answer for their own ``host`` and return ``None`` for other
    hosts, other tools and malformed ``args`` (untrusted JSON: never raise). Hosts that can
    refuse a call (Claude Code's ``PreToolUse``) check this text against tool-scoped
    stream rules before the file changes.
    """


@hookspec
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> Sequence[str] | None:
    """The paths a tool call names before it runs (RULE-SPEC §5 pre-execution capture).

    List hook: every host plugin contributes. ``host`` names the agent (``"pi"``,
    ``"claude-code"``, …); return ``None`` or ``[]`` for another host's calls and for
    tools you do not know. ``tool`` and ``args`` are untrusted (any JSON shape): ignore
    missing, non-mapping and non-string values, never raise. Return the raw path strings
    in argument order; the session normalises, deduplicates and keeps first occurrences.
    """


@hookspec
def pi_rules_output_formats() -> Sequence[OutputFormat]:
    """Extra ``--format`` values for a command (``check``: ``github``, ``sarif``, …).

    List hook. ``text`` and ``json`` belong to the command itself. When two plugins
    declare one name for a command, the one registered last wins (pluggy calls later
    registrations first; entry points register after built-ins, sorted by name), so an
    installed plugin can replace a built-in format.
    """


@hookspec
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    """Warnings ``pi-rules check`` prints after its errors: what loads fine but will not
    do what its author expects (a dead glob, a rule the budget always drops, a key the
    file's own tool ignores).

    List hook: every linter contributes; the engine sorts the merged result by path, code
    and message. ``context`` is a ``rules_core.LintContext`` (``cwd``, ``trusted``,
    ``env``, ``max_tokens``, ``git_root``, ``home``, ``always_on``, ``tokens``, ``scan``,
    ``read_text``). A warning's ``code`` is stable, lower-case and hyphenated: users
    silence it by code (``[lint] ignore``). Read nothing but through ``context``; never
    raise (a linter that raises becomes one ``lint-failed`` warning naming it).
    """


@hookspec
def pi_rules_cli_commands(commands: Any) -> None:
    """Add subcommands to the ``pi-rules`` command line (how hosts plug in).

    List hook, called once per CLI run. ``commands`` offers
    ``commands.command(name, help, run)`` for ``pi-rules NAME`` and
    ``commands.hook(host, help, run)`` for ``pi-rules hook HOST``; each returns the
    ``argparse`` parser to add arguments to. ``run(command)`` is called with an object
    carrying ``engine``, ``args``, ``cwd`` and ``print_json(value)``, and returns the exit
    code. Import heavy modules inside ``run``, so other commands start fast.
    """


@hookspec
def pi_rules_agent_runners() -> Sequence[Any]:
    """Declare agent runners for ``pi-rules eval`` (docs/eval.md).

    List hook. Return ``rules_hosts.eval.runners.AgentRunner(name, run, missing)`` objects:
    ``run(request)`` drives one agent through one run in ``request.workspace.project``
    (a throw-away copy) and returns a ``RunOutcome``; ``missing()`` says why the agent
    cannot run on this machine, or ``None``. A case's ``runner`` key (or ``--runner``)
    picks one by name; a later plugin's runner of the same name replaces an earlier one.
    Never raise: an error belongs in the outcome.
    """
