"""The ``zed`` importer: Zed's ``.rules`` file, read in place (docs/importers.md, "The zed
importer").

``<cwd>/.rules`` is one always-applied rule, its whole text the body (Zed passes it to the
model as written). Zed also falls back to ``.cursorrules``, ``.windsurfrules``,
``.clinerules``, ``.github/copilot-instructions.md``, ``AGENT.md``, ``AGENTS.md``,
``CLAUDE.md`` and ``GEMINI.md``; each of those belongs to its own importer, so reading them
here would load one file twice. The id names the project folder: ``acme/rules``.
"""

from __future__ import annotations

from .simple import SimpleFormat

FORMAT = SimpleFormat(
    name="zed",
    summary="Zed: .rules",
    files={".rules": "rules"},
    frontmatter=False,
)

pi_rules_importers = FORMAT.pi_rules_importers
pi_rules_sources = FORMAT.pi_rules_sources
pi_rules_parse = FORMAT.pi_rules_parse
