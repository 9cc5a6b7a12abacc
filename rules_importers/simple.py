"""``SimpleFormat``: a tool whose rules are a few fixed files and folders of Markdown, as an
importer in a few lines (docs/plugins.md, "Add your own format in a few lines").

A format names where its files are and, if its files carry frontmatter, how a file's
keys choose between always, touched globs and on demand::

    FORMAT = SimpleFormat(
        name="acme", summary="Acme: .acme/rules/**/*.md, .acmerules",
        folders=(".acme/rules",), files={".acmerules": "acmerules"},
    )

The format is itself a plugin (its methods are hook implementations): register the
instance (an entry point ``acme = "acme_rules:FORMAT"``), or, in a module that is the
plugin, bind them: ``pi_rules_importers = FORMAT.pi_rules_importers`` and likewise
``pi_rules_sources`` and ``pi_rules_parse``. Formats with more structure (Roo's mode
folders) build their own ``pi_rules_sources`` from ``folder``, ``file`` and ``parse``.

Everything else is the importers' common ground (docs/importers.md): project files only
for a trusted project that selected the importer, ``$HOME`` files as global rules
whenever it is selected, bodies verbatim, every file a rule or an error.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from rules_core import hookimpl
from rules_core.model import DiscoveryContext, ImporterInfo, ParseResult, RuleError, RuleFile, SchemaKey

from ._lenient import (
    describe, enabled, enabled_globally, extension, finish, imported_rule, invalid, list_flat, list_import_root,
    single_file,
)
from ._memory import folder_label
from ._recovery import read_document, with_quote_hint

# A whitespace-only file is listed but never injected: an entry with nothing to say
# would only cost a section line (as the agents-md importer does with an empty AGENTS.md).
EMPTY = "turned off: the file is empty"
BINARY = "the file contains NUL bytes, so it is binary, not markdown; delete it or save it as text"


@dataclass(frozen=True)
class Activation:
    """How an imported rule loads: always (the default), while a touched path matches
    ``globs``, or ``on_demand`` (one index line; the model fetches the body)."""

    globs: tuple[str, ...] = ()
    on_demand: bool = False

    @property
    def always(self) -> bool:
        return not self.globs and not self.on_demand


ALWAYS = Activation()
ON_DEMAND = Activation(on_demand=True)

# Reads a file's frontmatter keys; appends a one-line problem (naming the key and the
# fix) for a value it cannot use, which turns the file into an ``invalid-value`` error.
ActivationReader = Callable[[Mapping[str, Any], "list[str]"], Activation]


def is_markdown(name: str) -> bool:
    return name.endswith(".md")


# eq=False: a format is a plugin, registered and looked up by identity (and its mappings
# would make a value hash fail).
@dataclass(frozen=True, eq=False)
class SimpleFormat:
    """One tool's rule files. Paths are ``/``-separated, relative to cwd (``files``,
    ``folders``) or to ``$HOME`` (``home_files``, ``home_folders``, read as global rules).

    ``files`` maps a fixed file to its id stem; the id names the project folder
    (``acme/junie-guidelines``) or ``~`` for a home file. Files below a folder keep their
    own stems. ``accept`` picks a folder's files by name; ``recursive`` reads subfolders.
    ``frontmatter=False`` keeps the whole text as the body (the tool reads it that way);
    otherwise a leading ``---`` block is read leniently (``dialect``: the ``_recovery``
    dialect for YAML strict parsing refuses) and ``activation`` reads its keys. Home files
    apply always unless ``home_activation`` reads them.
    """

    name: str
    summary: str
    files: Mapping[str, str] = field(default_factory=dict)
    folders: tuple[str, ...] = ()
    home_files: Mapping[str, str] = field(default_factory=dict)
    home_folders: tuple[str, ...] = ()
    recursive: bool = True
    accept: Callable[[str], bool] = is_markdown
    frontmatter: bool = True
    dialect: str | None = None
    activation: ActivationReader | None = None
    home_activation: ActivationReader | None = None
    default: bool = True
    # Project paths read only in the working directory, for the ``cwd-only`` warning;
    # default: every project file and folder above.
    cwd_only: tuple[str, ...] | None = None
    # The tool reads damaged text (U+FFFD) instead of refusing it (ImporterInfo.lossy_utf8).
    lossy_utf8: bool = False

    # -- the hooks -----------------------------------------------------------------------

    @hookimpl
    def pi_rules_importers(self) -> list[ImporterInfo]:
        cwd_only = self.cwd_only if self.cwd_only is not None else (*self.folders, *self.files)
        return [ImporterInfo(self.name, default=self.default, summary=self.summary, cwd_only=cwd_only,
                             markers=(*self.folders, *self.files), lossy_utf8=self.lossy_utf8)]

    @hookimpl
    def pi_rules_sources(self, context: DiscoveryContext) -> list[RuleFile | RuleError]:
        # Folders first, then fixed files, each in declaration order (the order key's scope).
        found: list[RuleFile | RuleError] = []
        if enabled(context, self.name):
            label = folder_label(context, context.cwd)
            for index, folder in enumerate(self.folders):
                found += self.folder(context, _under(context.cwd, folder), scope=f"{index:02d}")
            for index, (relative, stem) in enumerate(self.files.items(), start=len(self.folders)):
                found += self.file(context, _under(context.cwd, relative), id_stem=f"{label}/{stem}",
                                   scope=f"{index:02d}")
        if enabled_globally(context, self.name):
            home = context.home or ""
            for index, folder in enumerate(self.home_folders):
                found += self.folder(context, _under(home, folder), source="global", scope=f"{index:02d}")
            for index, (relative, stem) in enumerate(self.home_files.items(), start=len(self.home_folders)):
                found += self.file(context, _under(home, relative), id_stem=f"~/{stem}", source="global",
                                   scope=f"{index:02d}")
        return found

    @hookimpl(trylast=True)
    def pi_rules_parse(self, rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey]) -> ParseResult | None:
        if rule_file.schema != self.name:
            return None
        return self.parse(rule_file, text, extra_keys)

    # -- the building blocks -------------------------------------------------------------

    def folder(
        self, context: DiscoveryContext, root: str, *, source: str = "project", scope: str = "",
    ) -> list[RuleFile | RuleError]:
        """The accepted files below ``root`` (only directly inside it unless
        ``recursive``); nothing when it is absent, an error when it cannot be listed."""
        if self.recursive:
            return list_import_root(context, self.name, root, accept=self.accept, source=source, scope=scope)
        return list_flat(context, self.name, root, accept=self.accept, base=context.cwd, source=source, scope=scope)

    def file(
        self, context: DiscoveryContext, path: str, *, id_stem: str, source: str = "project", scope: str = "",
    ) -> list[RuleFile | RuleError]:
        """One fixed file as one rule: nothing when absent, an error when it is no plain file."""
        found = single_file(context, self.name, path, id_stem=id_stem, source=source)
        return [_scoped(item, scope) for item in found]

    def parse(
        self, rule_file: RuleFile, text: str, extra_keys: Mapping[str, SchemaKey], *,
        extra: Mapping[str, Any] | None = None,
    ) -> ParseResult:
        """The rule of one file. ``extra`` adds keys that come from where the file is
        rather than from its text (Roo's mode folder scopes it to an agent)."""
        if "\x00" in text:
            # These files need no frontmatter: a binary file that happens to be valid
            # UTF-8 would otherwise be an always rule injecting NULs into the prompt.
            return ParseResult(None, (RuleError("read-failure", rule_file.path, BINARY, rule_file.plugin),))
        if not self.frontmatter:
            return self._rule(rule_file, text, ALWAYS, describe(rule_file, {}, [], body=text, closing=True),
                              {"extra": dict(extra or {}), "extra_conditions": ()})
        document = read_document(rule_file, text, dialect=self.dialect)
        if isinstance(document, RuleError):
            return ParseResult(None, (with_quote_hint(document, text),))
        problems: list[str] = []
        reader = self.activation if rule_file.source == "project" else self.home_activation
        activation = reader(document.data, problems) if reader is not None else ALWAYS
        description = describe(rule_file, document.data, problems, body=document.body, closing=True, show="scalar")
        extended = extension(document.data, extra_keys, problems)
        if problems:
            return invalid(rule_file, *problems)
        extended["extra"] = {**extended["extra"], **(extra or {})}
        return self._rule(rule_file, document.body, activation, description, extended)

    def _rule(
        self, rule_file: RuleFile, body: str, activation: Activation, description: str, extended: dict[str, Any],
    ) -> ParseResult:
        rule = imported_rule(
            rule_file, description=description, body=body, globs=activation.globs,
            always_apply=activation.always, load="on-demand" if activation.on_demand else "pinned",
            inactive_reason=None if body.strip() else EMPTY, **extended,
        )
        return finish(rule)


def _under(base: str, relative: str) -> str:
    return os.path.join(base, *relative.split("/"))


def _scoped(item: RuleFile | RuleError, scope: str) -> RuleFile | RuleError:
    if isinstance(item, RuleError):
        return item
    group, rank, _, relative = item.order
    return dataclasses.replace(item, order=(group, rank, scope, relative))
