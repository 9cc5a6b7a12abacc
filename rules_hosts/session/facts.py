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
from rules_core.settings.resolved import Resolved

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
    settings: Settings | Resolved | None = None,
    shell_touched: Any = (),
    host_loaded: frozenset[tuple[str, str]] | None = None,
) -> Facts:
    """Facts for one evaluation. Touched paths are normalised against ``cwd``; ``branch``
    is ``LIVE`` (read git now), a name, or ``None``/blank for absent. An untrusted
    project has no live branch: no process runs in it, and git would read its config.
    The budget and overflow come from ``settings`` (the call's ``Resolved`` value, or an
    ``Engine.settings``), else ``env``."""
    if branch is LIVE:
        branch = current_branch(cwd) if trusted else None
    shell = normalize_touched(strings(shell_touched), cwd)
    return Facts(
        cwd=cwd,
        trusted=trusted,
        touched=normalize_touched((*strings(touched), *shell), cwd),
        shell_touched=shell,
        prompt=prompt if isinstance(prompt, str) else "",
        model=model if isinstance(model, str) and model else None,
        branch=branch if isinstance(branch, str) and branch else None,
        tools=strings(tools),
        mutes=frozenset(strings(mutes)),
        agent=agent if isinstance(agent, str) and agent else "main",
        host=host,
        host_loaded=host_loaded,
        **resolved_budget(settings if isinstance(settings, Resolved) else Resolved(settings or Settings(env=env)),
                          host),
    )


def shell_paths(hooks: Any, host: str | None, commands: Any) -> list[str]:
    """The paths shell ``commands`` touch (``--shell``), as a host's bash tool reports them:
    through ``pi_rules_capture_paths``, so blocking the ``shell-paths`` plugin turns it off."""
    paths: list[str] = []
    for text in strings(commands):
        for tool in ("bash", "Bash"):
            found = hooks.capture_paths(host or "cli", tool, {"command": text})
            if found:
                paths += found
                break
    return paths


def max_tokens(env: Mapping[str, str]) -> int:
    return parse_max_tokens(env.get(MAX_TOKENS_ENV))


def budget(settings: Settings, host: str | None) -> dict[str, Any]:
    """The ``Facts`` fields the settings decide: ``max_tokens`` and ``overflow``."""
    return {"max_tokens": settings.value("max_tokens", host).value, "overflow": settings.value("overflow", host).value}


def resolved_budget(resolved: Resolved, host: str | None) -> dict[str, Any]:
    """``budget`` from the call's settings, read once (``Resolved`` keeps what it worked out)."""
    resolved = resolved.for_host(host)
    return {"max_tokens": resolved.max_tokens, "overflow": resolved.overflow}


def strings(values: Any) -> tuple[str, ...]:
    """The string items of an untrusted list, first occurrences (anything else names nothing)."""
    if not isinstance(values, (list, tuple)):
        return ()
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str)))
