"""pi-rules core: the engine, its data model and the plugin hooks.

The public API is what this module exports; everything else may change.
"""

from __future__ import annotations

from .engine import READ_RULE_DESCRIPTION, Engine, find_by_id, find_by_relative_path
from .hookspecs import hookimpl
from .manager import PluginLoadError, list_plugins, make_plugin_manager
from .model import (
    Discovery,
    DiscoveryContext,
    Evaluation,
    Explanation,
    Facts,
    Intent,
    MatchContext,
    Outcome,
    ParseResult,
    Rule,
    RuleError,
    RuleFile,
    SchemaKey,
    Verdict,
)
from .git import current_branch
from .session import (
    Capture,
    Session,
    SessionState,
    ToolDefinition,
    ToolResultEffect,
    Turn,
    touched_entry,
    touched_from_entries,
)
from .select import parse_max_tokens

__all__ = [
    "READ_RULE_DESCRIPTION",
    "Capture",
    "Discovery",
    "DiscoveryContext",
    "Engine",
    "Evaluation",
    "Explanation",
    "Facts",
    "Intent",
    "MatchContext",
    "Outcome",
    "ParseResult",
    "PluginLoadError",
    "Rule",
    "RuleError",
    "RuleFile",
    "SchemaKey",
    "Session",
    "SessionState",
    "ToolDefinition",
    "ToolResultEffect",
    "Turn",
    "Verdict",
    "current_branch",
    "find_by_id",
    "find_by_relative_path",
    "hookimpl",
    "list_plugins",
    "make_plugin_manager",
    "parse_max_tokens",
    "touched_entry",
    "touched_from_entries",
]
