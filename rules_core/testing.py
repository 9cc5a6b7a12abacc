"""The old import path of a module that moved into a wing, kept for third parties.

It is the same module object (not a copy), so every name, private ones included, stays
reachable. Code inside pi-rules imports the real module.
"""

from __future__ import annotations

import importlib
import sys

sys.modules[__name__] = importlib.import_module("rules_core.rule_tests.pytest_plugin")
