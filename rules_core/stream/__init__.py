"""Stream rules: the watcher, its budget, buffer, model and plan.

Modules and their public names:

- ``budget``: BUDGET_ENV, DEFAULT_BUDGET_MS, SEARCH_SECONDS, ALLOWANCE_SECONDS,
  ALLOWANCE_PER_CHAR, RULE_DEBT_SECONDS, TIER_DEBT_SECONDS, BLAME_SECONDS, SUSPECT_SECONDS,
  MAX_FAULTS, MAX_OFF, MAX_DEBTS, FIX_ONE, FIX_MANY, StreamBudget, budget_from_env, tier_of,
  Meter
- ``buffer``: STORE_BYTES, StreamBuffer, cap_note, key, source
- ``model``: ScopeEntry, StreamPattern, StreamSpec, Firing, StreamResult, ToolOutput, NOTHING
- ``plan``: WINDOW, TierPlan, Plan, make_plan, lookback
- ``watcher``: CONTEXT, MAX_STREAMS, SNIPPET, StreamWatcher, quote_snippet, globs_gate
"""
