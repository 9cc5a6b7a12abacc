"""``python -m rules_core.plugins.make_table``: rewrite the built-in plugins' table (lazy.py).

Run it after adding, removing or changing a built-in plugin's hook implementations;
``tests/suites/test_lazy_plugins.py`` fails until the table matches the code.
"""

from __future__ import annotations

import sys

from rules_core.plugins.lazy import TABLE_FILE, generate
from rules_core.plugins.manager import BUILTIN_PLUGINS


def main() -> int:
    text = generate(BUILTIN_PLUGINS)
    with open(TABLE_FILE, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {TABLE_FILE} ({len(BUILTIN_PLUGINS)} plugins)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
