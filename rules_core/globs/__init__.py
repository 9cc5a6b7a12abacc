"""Glob patterns: parsing, the guard and budget that bound hostile patterns, and the
compiled per-rule matchers.

Modules and their public names:

- ``compiled``: MAX_GLOBS, RULE_REGEX_BUDGET, GlobSet, CompiledRule, EMPTY_GLOBSET, compile_rule
- ``matching``: MAX_SUBJECT, MAX_SEGMENT, GlobError, Glob, compile_glob, compile_flat,
  normalize_path, last_segment, literal_prefix
"""
