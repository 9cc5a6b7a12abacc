"""The settings of one call, resolved once (docs/configuration.md, "Resolved once per call").

A command or a host event reads the settings files once, at its entry
(``Engine.resolve``), and hands the resulting ``Resolved`` down: the engine's discovery
and exclusions, the facts builder, the importer selection and the lint filter all read
this one value instead of asking the settings cache again. Each derived value is worked
out on first use and kept, so a call pays for what it reads and no more; ``settings``
keeps every value's origin (``Settings.value(...).origin``) for reports.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping, Sequence

from rules_core.discovery.imports import Selected
from rules_core.model import ImporterInfo, Rule
from rules_core.settings.apply import disabled_reason, import_chosen, project_and_user_importers
from rules_core.settings.load import Settings


@dataclass(frozen=True, eq=False)
class Resolved:
    """The effective settings of one call for ``host`` (``None``: the top level), with
    their origins in ``settings``; read for ``cwd`` (absolute) as ``trusted`` says.
    Compared by identity: one call, one value."""

    settings: Settings
    host: str | None = None
    cwd: str = ""
    trusted: bool = True

    def for_host(self, host: str | None) -> Resolved:
        """The same files and levels read for another host's table (no file is re-read)."""
        return self if host == self.host else dataclasses.replace(self, host=host)

    def with_options(self, options: Mapping[str, Any]) -> Resolved:
        """The same files with the command line's values (known only after parsing)."""
        return dataclasses.replace(self, settings=dataclasses.replace(self.settings, options=dict(options)))

    def with_env(self, env: Mapping[str, str]) -> Resolved:
        """The same files under another environment level (a session's own ``env``)."""
        return self if env is self.settings.env else dataclasses.replace(
            self, settings=dataclasses.replace(self.settings, env=env))

    def serves(self, cwd: str, trusted: bool) -> bool:
        """Whether this value was read for ``cwd`` (absolute) and that trust."""
        return self.cwd == cwd and self.trusted == trusted

    @cached_property
    def max_tokens(self) -> int:
        return int(self.settings.value("max_tokens", self.host).value)

    @cached_property
    def overflow(self) -> str:
        return str(self.settings.value("overflow", self.host).value)

    @cached_property
    def attach(self) -> bool:
        return bool(self.settings.value("attach", self.host).value)

    @cached_property
    def lint_ignore(self) -> frozenset[str]:
        """The warning codes (and ``code:glob`` entries) ``[lint] ignore`` silences."""
        return self.settings.lint_ignore_for(self.host)

    @cached_property
    def import_chosen(self) -> bool:
        """Some level chose the importers (``settings.apply.import_chosen``)."""
        return import_chosen(self.settings, self.host)

    @cached_property
    def disabled(self) -> Callable[[Rule], str | None]:
        """``rule`` → why ``disable`` leaves it out, else ``None`` (globs compiled once)."""
        return disabled_reason(self.settings, self.host)

    def importers(self, declared: Sequence[ImporterInfo]) -> tuple[Selected, frozenset[str]]:
        """(the importers for the project's files among ``declared``, with errors; those
        for the user's own files), as ``settings.apply.project_and_user_importers``; kept
        for the ``declared`` last asked (an engine's importers do not change within a call)."""
        kept = self.__dict__.get("_importers")
        if kept is None or kept[0] is not declared:
            chosen = project_and_user_importers(self.settings, self.host, declared)
            kept = self.__dict__["_importers"] = (declared, chosen)
        return kept[1]
