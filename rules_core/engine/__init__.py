"""The engine: the discovery pass, evaluation, verdicts and their explanations. ``Engine``
is re-exported here: third parties import it from this wing's old module path, which stays.

Modules and their public names:

- ``core``: MUTED_REASON, CUT_REASON, MAX_OVERRAN, PATH_CONDITION, Engine
- ``discovery``: MAX_CWDS, MAX_RULE_FILES, MAX_RULE_BYTES_TOTAL, MAX_TREES, Discoverer,
  cwd_only_warnings, same_objects, internal_error
- ``verdicts``: combine_verdicts
- ``why``: ALWAYS_APPLY, describe_condition, independent_reason
"""

from __future__ import annotations

from .core import CUT_REASON, MUTED_REASON, Engine

__all__ = ["CUT_REASON", "MUTED_REASON", "Engine"]
