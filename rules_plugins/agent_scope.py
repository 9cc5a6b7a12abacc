"""The ``agent-scope`` plugin: ``agents:`` scopes a rule to particular agents.

Adds the key ``agents`` to the strict native schema (list, string or comma string of
case-insensitive flat globs; ``main`` is the top-level session, ``sub`` any sub-agent,
named or not — both reserved names). A rule whose agents do not match ``Facts.agent`` is
left out of the evaluation entirely — no bucket, not even ``alwaysApply``, and
``read_rule`` cannot reach it. Imported rules keep the peers' ``agents`` key in
``Rule.extra`` and are scoped the same way. Block the plugin and ``agents`` is an
``unknown-key`` error again.
"""

from __future__ import annotations

from typing import Any

from rules_core import SchemaKey, hookimpl
from rules_core.globs.matching import GlobError, compile_flat
from rules_core.model import Facts, Rule

KEY = "agents"


def parse_agents(value: Any) -> tuple[str, ...]:
    """Normalised, lower-cased agent globs; ``ValueError`` says how to write them."""
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = [part for v in value for part in v.split(",")]
    else:
        raise ValueError("must be a list of agent names or globs, e.g. agents: [main, reviewer]")
    agents = tuple(dict.fromkeys(i.strip().lower() for i in items if i.strip()))
    if not agents:
        raise ValueError("names no agent; write e.g. agents: [main] or remove the key")
    for agent in agents:
        try:
            compile_flat(agent)
        except GlobError as exc:
            raise ValueError(f"agent pattern {agent!r} cannot be used: {exc}") from None
    return agents


@hookimpl
def pi_rules_schema_keys(schema: str) -> list[SchemaKey]:
    # Every format: the peers' files carry ``agents`` too.
    return [SchemaKey(KEY, parse_agents, help="agents the rule is for (main, sub, or names)")]


@hookimpl
def pi_rules_exclude(rule: Rule, facts: Facts) -> str | None:
    if KEY not in rule.extra:
        return None
    try:
        agents = parse_agents(rule.extra[KEY])
    except ValueError:
        # An imported file's unusable value: its importer kept it verbatim; scope it to
        # nobody rather than to everybody, and say why.
        return f"agents value {rule.extra[KEY]!r} is unusable, so no agent gets this rule"
    agent = (facts.agent or "main").lower()
    if any(compile_flat(pattern).match(agent) for pattern in agents):
        return None
    if agent != "main" and "sub" in agents:  # a named sub-agent is still a sub-agent
        return None
    return f"agent mismatch: session agent {agent} is not one of the rule's agents {', '.join(agents)}"
