"""One ``Facts`` builder for every host: untrusted host input in, clean facts out.

The CLI's options, ``serve`` requests, MCP arguments, Claude Code payloads and stream
commands all describe the same facts in their own words; they all come through here so
that a value means the same whichever host sent it (a blank model is absent, a
non-string tool is dropped, the budget comes from ``PI_RULES_MAX_TOKENS``).
"""

from __future__ import annotations

from typing import Any, Mapping

from rules_core.discovery.git import current_branch
from rules_core.lookup import normalize_touched
from rules_core.model import Facts
from rules_core.select import parse_max_tokens
from rules_core.settings.load import Settings

MAX_TOKENS_ENV = "PI_RULES_MAX_TOKENS"
LIVE = object()  # the branch default: ask git in cwd, now (trusted projects only)


def host_facts(
    cwd: str,
    *,
    env: Mapping[str, str],
    trusted: bool = True,
    touched: Any = (),
    prompt: Any = "",
    model: Any = None,
    branch: Any = LIVE,
    tools: Any = (),
    mutes: Any = (),
    agent: Any = "main",
    host: str | None = None,
    settings: Settings | None = None,
    host_loaded: frozenset[tuple[str, str]] | None = None,
) -> Facts:
    """Facts for one evaluation. Touched paths are normalised against ``cwd``; ``branch``
    is ``LIVE`` (read git now), a name, or ``None``/blank for absent. An untrusted
    project has no live branch: no process runs in it, and git would read its config.
    The budget and overflow come from ``settings`` (``Engine.settings``), else ``env``."""
    if branch is LIVE:
        branch = current_branch(cwd) if trusted else None
    return Facts(
        cwd=cwd,
        trusted=trusted,
        touched=normalize_touched(strings(touched), cwd),
        prompt=prompt if isinstance(prompt, str) else "",
        model=model if isinstance(model, str) and model else None,
        branch=branch if isinstance(branch, str) and branch else None,
        tools=strings(tools),
        mutes=frozenset(strings(mutes)),
        agent=agent if isinstance(agent, str) and agent else "main",
        host=host,
        host_loaded=host_loaded,
        **budget(settings if settings is not None else Settings(env=env), host),
    )


def max_tokens(env: Mapping[str, str]) -> int:
    return parse_max_tokens(env.get(MAX_TOKENS_ENV))


def budget(settings: Settings, host: str | None) -> dict[str, Any]:
    """The ``Facts`` fields the settings decide: ``max_tokens`` and ``overflow``."""
    return {"max_tokens": settings.value("max_tokens", host).value, "overflow": settings.value("overflow", host).value}


def strings(values: Any) -> tuple[str, ...]:
    """The string items of an untrusted list, first occurrences (anything else names nothing)."""
    if not isinstance(values, (list, tuple)):
        return ()
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str)))
