"""The ``junie`` importer: JetBrains Junie's guidelines, read in place (docs/importers.md,
"The junie importer").

``<cwd>/.junie/guidelines.md`` — where Junie looks when no other guidelines path is set —
is one always-applied rule, its whole text the body (Junie takes "instructions in any
format"). Its id names the project folder: ``acme/junie-guidelines``.
"""

from __future__ import annotations

from .simple import SimpleFormat

FORMAT = SimpleFormat(
    name="junie",
    summary="JetBrains Junie: .junie/guidelines.md",
    files={".junie/guidelines.md": "junie-guidelines"},
    frontmatter=False,
)

pi_rules_importers = FORMAT.pi_rules_importers
pi_rules_sources = FORMAT.pi_rules_sources
pi_rules_parse = FORMAT.pi_rules_parse
