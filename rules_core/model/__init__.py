"""The data that flows through the engine: frozen values, no behaviour beyond accessors.

A package of three modules, re-exported here, so ``rules_core.model`` stays the one name
plugins import: ``rules`` (rule files, rules, errors), ``declarations`` (what plugins
declare) and ``evaluation`` (facts in, outcomes out).
"""

from __future__ import annotations

from rules_core.model.rules import (
    ErrorKind,
    ERROR_KINDS,
    MatchMode,
    Enforcement,
    Load,
    Status,
    ORDER_CWD,
    ORDER_ANCESTORS,
    ORDER_NESTED,
    ORDER_IMPORTS,
    ORDER_PACKS,
    ORDER_GLOBAL,
    RuleFile,
    RuleError,
    RuleWarning,
    BudgetPool,
    Rule,
    ParseResult,
)
from rules_core.model.declarations import (
    SchemaKey,
    ImporterInfo,
    HostInfo,
    OutputFormat,
)
from rules_core.model.evaluation import (
    DiscoveryContext,
    Facts,
    Intent,
    MatchContext,
    Verdict,
    Outcome,
    Discovery,
    Evaluation,
    PathExplanation,
    Explanation,
)

__all__ = [
    "ErrorKind",
    "ERROR_KINDS",
    "MatchMode",
    "Enforcement",
    "Load",
    "Status",
    "ORDER_CWD",
    "ORDER_ANCESTORS",
    "ORDER_NESTED",
    "ORDER_IMPORTS",
    "ORDER_PACKS",
    "ORDER_GLOBAL",
    "RuleFile",
    "RuleError",
    "RuleWarning",
    "BudgetPool",
    "Rule",
    "ParseResult",
    "SchemaKey",
    "ImporterInfo",
    "HostInfo",
    "OutputFormat",
    "DiscoveryContext",
    "Facts",
    "Intent",
    "MatchContext",
    "Verdict",
    "Outcome",
    "Discovery",
    "Evaluation",
    "PathExplanation",
    "Explanation",
]
