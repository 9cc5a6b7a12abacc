from __future__ import annotations

pytest_plugins = ["rules_core.testing"]
