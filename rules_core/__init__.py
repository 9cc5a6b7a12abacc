"""pi-rules core: the engine, its data model and the plugin hooks — the library only.

The public API is what this module exports; everything else may change. Names load on
first use (PEP 562), so ``from rules_core import hookimpl`` in an eleven-line plugin
costs pluggy and the hook specifications, not the engine. ``import rules_core`` never
loads a host, the session runtime, argparse or MCP code: those live in ``rules_hosts``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it
_EXPORTS = {
    "READ_RULE_DESCRIPTION": "lookup",
    "Reading": "lookup",
    "find_by_id": "lookup",
    "find_by_relative_path": "lookup",
    "Engine": "engine.core",
    "hookimpl": "plugins.hookspecs",
    "PluginLoadError": "plugins.manager",
    "list_plugins": "plugins.manager",
    "make_plugin_manager": "plugins.manager",
    "current_branch": "discovery.git",
    "parse_max_tokens": "select",
    "LintContext": "lint_context",
    **dict.fromkeys(
        (
            "Discovery", "DiscoveryContext", "Evaluation", "Explanation", "Facts", "Intent",
            "MatchContext", "OutputFormat", "Outcome", "ParseResult", "Rule", "RuleError",
            "RuleFile", "RuleWarning", "SchemaKey", "Verdict",
        ),
        "model",
    ),
}

__all__ = sorted(_EXPORTS)


# This lazy-export helper is duplicated on purpose in rules_hosts/__init__.py: sharing it would mean
# importing a helper module first, and `import rules_core` is budgeted to load nothing
# but this file (tests/suites/test_import_shape.py; rules_hosts must not be imported by the core).
def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rules_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from .engine.core import Engine
    from .discovery.git import current_branch
    from .plugins.hookspecs import hookimpl
    from .lint_context import LintContext
    from .lookup import READ_RULE_DESCRIPTION, Reading, find_by_id, find_by_relative_path
    from .plugins.manager import PluginLoadError, list_plugins, make_plugin_manager
    from .model import (
        Discovery,
        DiscoveryContext,
        Evaluation,
        Explanation,
        Facts,
        Intent,
        MatchContext,
        OutputFormat,
        Outcome,
        ParseResult,
        Rule,
        RuleError,
        RuleFile,
        RuleWarning,
        SchemaKey,
        Verdict,
    )
    from .select import parse_max_tokens
