"""The ``augment`` importer: Augment's rules, read in place (docs/importers.md, "The augment
importer").

Every Markdown file below ``<cwd>/.augment/rules`` (subfolders too) is a rule whose
frontmatter ``type`` decides: ``always_apply`` (also the default) → always,
``agent_requested`` → on demand, described by ``description``, ``manual`` → on demand.
Files below ``~/.augment/rules`` are global rules, always applied whatever their
frontmatter says, as Augment applies user rules.
"""

from __future__ import annotations

from typing import Any, Mapping

from ._lenient import kind_of, unknown_choice
from .simple import ALWAYS, ON_DEMAND, Activation, SimpleFormat

NAME = "augment"
# manual rules are attached by an @-mention in Augment; pi-rules has none, and one index
# line the model can act on is the nearest equivalent that never injects them unasked.
TYPES = {"always_apply": ALWAYS, "agent_requested": ON_DEMAND, "manual": ON_DEMAND}
# The names Augment's settings panel shows the types under ("Always", "Auto"); real rule
# files write them as the type.
ALIASES = {"always": "always_apply", "auto": "agent_requested"}


def activation(data: Mapping[str, Any], problems: list[str]) -> Activation:
    value = data.get("type")
    if value is None:
        return ALWAYS  # Augment's documented default
    if not isinstance(value, str):
        problems.append(f"type must be one of {', '.join(TYPES)}, got {kind_of(value, 'scalar')}; "
                        "write type: always_apply")
        return ALWAYS
    name = value.strip().lower()
    name = ALIASES.get(name, name)
    if name not in TYPES:
        problems.append(unknown_choice("type", value, TYPES))
        return ALWAYS
    return TYPES[name]


FORMAT = SimpleFormat(
    name=NAME,
    summary="Augment: .augment/rules/**/*.md (type: always_apply, agent_requested, manual), ~/.augment/rules (global)",
    folders=(".augment/rules",),
    home_folders=(".augment/rules",),
    dialect="cursor",  # unquoted values such as `description: Use when: editing` stay readable
    activation=activation,
)

pi_rules_importers = FORMAT.pi_rules_importers
pi_rules_sources = FORMAT.pi_rules_sources
pi_rules_parse = FORMAT.pi_rules_parse
