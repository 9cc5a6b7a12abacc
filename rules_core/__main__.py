"""``python -m rules_core``: kept working as an alias of ``python -m rules_hosts`` (CONTRACT §3).

A program entry, never imported by the library: ``import rules_core`` does not load it,
and the import-shape test lists it as the one module of ``rules_core`` that may reach
``rules_hosts``.
"""

from __future__ import annotations

import runpy

runpy.run_module("rules_hosts", run_name="__main__", alter_sys=True)
