"""The ``trae`` importer: Trae's project rules, read in place (docs/importers.md, "The trae
importer").

Every Markdown file directly inside ``<cwd>/.trae/rules`` is a rule. Trae writes Cursor's
keys: ``alwaysApply: true`` → always, ``globs`` → touched globs, otherwise a file whose
frontmatter says ``alwaysApply: false`` or gives a ``description`` (Trae's "apply
intelligently" and "manual" modes) → on demand. A file with neither — the
``project_rules.md`` Trae has always applied — is always applied.
"""

from __future__ import annotations

from typing import Any, Mapping

from ._lenient import glob_list
from ._recovery import flag
from .simple import ALWAYS, ON_DEMAND, Activation, SimpleFormat


def activation(data: Mapping[str, Any], problems: list[str]) -> Activation:
    if flag(data, "alwaysApply", problems):
        return ALWAYS
    globs = glob_list(data, "globs", problems)
    if globs:
        return Activation(globs=globs)
    if data.get("alwaysApply") is not None or data.get("description"):
        return ON_DEMAND
    return ALWAYS


FORMAT = SimpleFormat(
    name="trae",
    summary="Trae: .trae/rules/*.md (alwaysApply, globs, description)",
    folders=(".trae/rules",),
    recursive=False,
    dialect="cursor",  # Trae's own examples write unquoted globs: `globs: *.ts,*.tsx`
    activation=activation,
)

pi_rules_importers = FORMAT.pi_rules_importers
pi_rules_sources = FORMAT.pi_rules_sources
pi_rules_parse = FORMAT.pi_rules_parse
