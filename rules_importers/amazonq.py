"""The ``amazonq`` importer: Amazon Q Developer's project rules, read in place
(docs/importers.md, "The amazonq importer").

Every Markdown file below ``<cwd>/.amazonq/rules`` (subfolders too, as the Q CLI's
``.amazonq/rules/**/*.md`` resource reads them) is one always-applied rule. Amazon Q
defines no frontmatter and sends a file whole, so the whole text is the body.
"""

from __future__ import annotations

from .simple import SimpleFormat

FORMAT = SimpleFormat(
    name="amazonq",
    summary="Amazon Q Developer: .amazonq/rules/**/*.md",
    folders=(".amazonq/rules",),
    frontmatter=False,
)

pi_rules_importers = FORMAT.pi_rules_importers
pi_rules_sources = FORMAT.pi_rules_sources
pi_rules_parse = FORMAT.pi_rules_parse
