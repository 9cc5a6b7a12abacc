"""``PI_RULES_IMPORT``: which importers run (RULE-SPEC §1, CONTRACT §2)."""

from __future__ import annotations

from typing import Sequence

from rules_core.model import ImporterInfo, RuleError

IMPORT_ENV = "PI_RULES_IMPORT"
# The enabled importers and their errors. Defined here, not beside the discovery pass that
# takes it, so the settings wing can name it without importing the engine wing.
Selected = tuple[frozenset[str], tuple[RuleError, ...]]


def select_importers(
    value: str | None, declared: Sequence[ImporterInfo]
) -> Selected:
    """The enabled importer names and an error per unknown name.

    ``none`` (trimmed, any case) enables nothing; absent, empty or ``all`` the defaults;
    a comma list exactly the names it gives. An unknown name is reported and, as the
    spec's "anything but none" requires, the defaults are used.
    """
    defaults = frozenset(info.name for info in declared if info.default)
    text = (value or "").strip()
    if text.lower() == "none":
        return frozenset(), ()
    if not text or text.lower() == "all":
        return defaults, ()
    known = {info.name for info in declared}
    wanted = [name.strip().lower() for name in text.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        message = (
            f"unknown importer {', '.join(repr(n) for n in unknown)} in {IMPORT_ENV}={text!r}; "
            f"known importers: {', '.join(sorted(known)) or 'none installed'} "
            "(or 'none' / 'all'); using the default set until it is fixed"
        )
        return defaults, (RuleError("invalid-value", IMPORT_ENV, message, "importers"),)
    return frozenset(wanted), ()
