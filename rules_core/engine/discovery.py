"""Discovery: every source's rule files, parsed once per change, ids assigned.

``Discoverer`` owns discovery's caches (parsed files by mtime, unlistable directories,
the shared tree walk, git roots, the last id assignment); ``Engine.discover`` is its
front. Project files are resolved inside ``Containment`` (the git root, or cwd without
one), handed to sources as ``DiscoveryContext.containment``.
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from typing import Mapping, Sequence

from rules_core.discovery.aliases import merge_aliases
from rules_core.discovery.cache import FileCache, evict_oldest
from rules_core.globs.compiled import compile_rule
from rules_core.discovery.containment import Containment
from rules_core.discovery.ignore import MAX_IGNORE_BYTES, MAX_WILDCARD_LINES
from rules_core.discovery.tree import skipped_ignore_files
from rules_core.deadline import deadline_error, expired
from rules_core.discovery.git import find_git_root
from rules_core.plugins.hooks import Hooks
from rules_core.discovery.imports import IMPORT_ENV, Selected, select_importers
from rules_core.discovery.listing import ListingCache
from rules_core.discovery.persistent import Persistent, sources_with_kept_tree
from rules_core.discovery.kept_parses import kept_parser
from rules_core.lookup import RULE_URL
from rules_core.model import Discovery, DiscoveryContext, ImporterInfo, Rule, RuleError, RuleFile, RuleWarning
from rules_core.paths import ancestors_between
from rules_core.safe import invisible_in
from rules_core.lint_context import position
from rules_core.discovery.reading import read_rule_text

MAX_CWDS = 256  # git roots remembered, one per working directory asked about
# What one discovery loads at most, whatever the sources list (issue 14, "caps with
# reports"): rule files, and characters of rule text read.
MAX_RULE_FILES = 10_000
MAX_RULE_BYTES_TOTAL = 64 * 1024 * 1024
MAX_TREES = 24  # cached tree walks and their per-marker owners: 8 working directories


class Discoverer:
    def __init__(self, hooks: Hooks, env: Mapping[str, str], home: str | None) -> None:
        self.hooks = hooks
        self.env = env
        self.home = home
        self._files = FileCache()
        self._listings = ListingCache()
        self._tree: dict[object, object] = {}
        self._ids_memo: tuple[tuple[Rule, ...], tuple[Rule, ...], tuple[RuleWarning, ...]] | None = None
        self._git_roots: dict[str, str | None] = {}
        # What the tree walk and the exists scans learnt, kept across processes.
        self.persistent = Persistent(env, hooks.pm.list_name_plugin)

    def discover(self, cwd: str, trusted: bool = True, importers: Selected | None = None,
                 global_importers: frozenset[str] | None = None) -> Discovery:
        """Every rule and error the sources and schemas yield, ids and indexes assigned.
        ``importers``: the enabled importers and their errors (the settings' ``import``);
        ``None`` reads ``PI_RULES_IMPORT``. ``global_importers``: those whose user-level
        files load (the user's own settings' choice), when it differs."""
        try:
            found = self._discover(os.path.abspath(cwd), trusted, importers, global_importers)
            self.persistent.flush()
            return found
        except Exception as exc:  # the host must never see a traceback
            return Discovery((), (internal_error(cwd, exc),))

    def _discover(self, cwd: str, trusted: bool, selected: Selected | None,
                  global_importers: frozenset[str] | None) -> Discovery:
        if selected is None:
            selected = select_importers(self.env.get(IMPORT_ENV), self.hooks.importers())
        importers, import_errors = selected
        context = DiscoveryContext(
            cwd=cwd,
            home=self.home,
            trusted=trusted,
            env=self.env,
            # An untrusted project is not even asked where its repository ends.
            git_root=self.git_root(cwd) if trusted else None,
            listing_cache=self._listings,
            tree_cache=self._tree,
            importers=importers,
            global_importers=global_importers,
        )
        # Project files stay inside the git root (cwd without one): links leading out are
        # reported, never followed; global rules are the user's own.
        contain = _containment(cwd, context.git_root) if trusted else None
        context = dataclasses.replace(context, containment=contain)
        store = self.persistent.store(cwd, context.git_root, trusted)
        files, source_errors = sources_with_kept_tree(store, context, self.hooks.sources)
        evict_oldest(self._tree, MAX_TREES)  # tree walks of other working directories
        if not trusted:
            files = [f for f in files if f.source != "project"]
        files = _unique_in_order(sorted(files, key=lambda f: (f.order, f.path)))
        self._files.retain({f.path for f in files})
        errors = list(import_errors)
        errors += sorted(set(source_errors), key=lambda e: (e.path, e.kind, e.message))
        # The user's own (global) files are read first, so neither a cap nor the deadline a
        # repository can exhaust ever costs them; the rules keep discovery order after.
        reading_order = [f for f in files if f.source == "global"] + [f for f in files if f.source != "global"]
        if len(reading_order) > MAX_RULE_FILES:
            errors.append(_over_cap(cwd, f"the sources list {len(files)} rule files, over the limit of "
                                         f"{MAX_RULE_FILES} per discovery", len(files) - MAX_RULE_FILES))
            reading_order = reading_order[:MAX_RULE_FILES]
        loaded: dict[str, Rule] = {}
        read = 0
        # Importers whose tool reads damaged text (ImporterInfo.lossy_utf8), by plugin name.
        lossy = {info.name for info in self.hooks.importers() if info.lossy_utf8}
        file_warnings: list[RuleWarning] = []
        parse = kept_parser(store, self.hooks.parse)  # parses kept across processes
        for at, rule_file in enumerate(reading_order):
            if expired() and rule_file.source != "global":
                left = len(reading_order) - at
                errors.append(deadline_error(cwd, f"{left} rule file{'s' if left != 1 else ''} not read"))
                break
            result = self._files.load(rule_file, parse, contain if rule_file.source == "project" else None,
                                      lossy=rule_file.plugin in lossy)
            if result is None:
                continue
            errors.extend(result.errors)
            file_warnings.extend(result.warnings)
            if result.rule is not None:
                loaded[rule_file.path] = _ensure_compiled(result.rule)
                read += len(result.rule.body)
                if read > MAX_RULE_BYTES_TOTAL and at + 1 < len(reading_order):
                    errors.append(_over_cap(cwd, f"the rules read so far hold over {MAX_RULE_BYTES_TOTAL} characters, "
                                                 "the limit per discovery", len(reading_order) - at - 1))
                    break
        rules = [loaded[f.path] for f in files if f.path in loaded]
        errors += [RuleError("source-unreadable", cwd, (
            f"importer {name!r} is left out: {problem} — report it to its plugin's authors, or block the "
            "plugin with -p no:NAME"), name) for name, problem in self.hooks.importer_problems()]
        warnings = cwd_only_warnings(context, self.hooks.importers()) if trusted else ()
        warnings += tuple(RuleWarning("ignore-file-skipped", path, (
            f"this ignore file is over the limits pi-rules applies to a repository's ignore files "
            f"({MAX_IGNORE_BYTES // 1024} KiB, {MAX_WILDCARD_LINES} wildcard lines), so nothing in it is ignored "
            "when pi-rules walks the tree — shorten it, or move generated lines elsewhere"
        ), "engine") for path in (skipped_ignore_files(context) if trusted else ()))
        assigned, invisible = self._ids_for(tuple(rules), self._files.physical)
        return Discovery(assigned, tuple(errors), (*warnings, *file_warnings, *invisible))

    def _ids_for(
        self, parsed: tuple[Rule, ...], physical: Mapping[str, str]
    ) -> tuple[tuple[Rule, ...], tuple[RuleWarning, ...]]:
        """Two names of one file merged into one rule (``rules_core.discovery.aliases``), then ids,
        indexes and the rules' own warnings; reused while discovery yields the very same
        parsed rules (a warm pass scans no body). A link pointed elsewhere changes what
        its path parses to, so the memo cannot outlive a change of ``physical``."""
        memo = self._ids_memo
        if memo is not None and same_objects(memo[0], parsed):
            return memo[1], memo[2]
        assigned = _assign_ids(merge_aliases(parsed, physical))
        invisible = _invisible_warnings(assigned)
        self._ids_memo = (parsed, assigned, invisible)
        return assigned, invisible

    def git_root(self, cwd: str) -> str | None:
        """Resolved once per working directory (RULE-SPEC §1). The bound is the project,
        not what git says: ``/``, the home folder and its ancestors are never a project's
        root (a dotfiles repository in the home folder would otherwise take in ``~/.ssh``);
        without a root the project is cwd alone."""
        if cwd not in self._git_roots:
            evict_oldest(self._git_roots, MAX_CWDS - 1)  # a host that wanders stays bounded
            root = find_git_root(cwd)
            self._git_roots[cwd] = None if root is not None and _holds_home(root, self.home) else root
        return self._git_roots[cwd]

    def tree_changed(self) -> None:
        """Forget the sources' cached tree enumerations (parsed files stay, by mtime)."""
        self._tree.clear()

    def forget_git_roots(self) -> None:
        """Ask git again (a long-lived host: a folder may have become its own repository)."""
        self._git_roots.clear()


def cwd_only_warnings(context: DiscoveryContext, importers: Sequence[ImporterInfo]) -> tuple[RuleWarning, ...]:
    """A ``cwd-only`` warning for each enabled importer path that exists in an ancestor
    up to the git root but not in cwd: the spec reads those from cwd only, so they are
    not loaded — and not read here either, only looked at (one lstat each, remembered
    with the tree walk until the tree changes)."""
    if context.git_root is None or context.cwd == context.git_root:
        return ()
    cache = context.tree_cache
    key = ("cwd-only", context.cwd, context.git_root, context.importers)
    if cache is not None and key in cache:
        return cache[key]
    found: list[RuleWarning] = []
    ancestors = ancestors_between(context.cwd, context.git_root)
    for info in importers:
        if info.name not in context.importers:
            continue
        for relative in info.cwd_only:
            if os.path.lexists(os.path.join(context.cwd, relative)):
                continue
            holder = next((a for a in ancestors if os.path.lexists(os.path.join(a, relative))), None)
            if holder is not None:
                found.append(RuleWarning("cwd-only", os.path.join(holder, relative), (
                    f"{info.name} reads {relative} only from the working directory, so these rules are not "
                    f"loaded here; run from {holder} (pi-rules --cwd {holder} check) or start the agent there"
                ), info.name))
    warnings = tuple(found)
    if cache is not None:
        cache[key] = warnings
    return warnings


def _over_cap(cwd: str, why: str, left_out: int) -> RuleError:
    return RuleError("source-unreadable", cwd, (
        f"{why}; the rules first in discovery order loaded, the other {left_out} "
        f"rule file{'s' if left_out != 1 else ''} did not — remove or move rule files"
    ), "engine")


def _invisible_warnings(rules: Sequence[Rule]) -> tuple[RuleWarning, ...]:
    """An ``invisible-characters`` warning for each rule whose text hides characters a
    reviewer cannot see (the section shows them as escapes, so the model reads no more
    than the reviewer can)."""
    found = []
    for rule in rules:
        hidden = sorted({f"U+{ord(c):04X}" for c in invisible_in(rule.body + rule.description)})
        if hidden:
            shown = ", ".join(hidden[:5]) + (f" and {len(hidden) - 5} more" if len(hidden) > 5 else "")
            line, column = _first_invisible(rule.file.path)
            found.append(RuleWarning("invisible-characters", rule.file.path, (
                f"the rule holds invisible characters ({shown}) a reader cannot see but a model reads; they are "
                "shown as escapes in the section — remove them unless you put them there on purpose"
            ), rule.file.plugin, line, column))
    return tuple(found)


def _first_invisible(path: str) -> tuple[int | None, int | None]:
    """Where the file's first invisible character is, so an annotation lands on its line;
    read again only for a rule that has one (rare), without following a link swapped in."""
    text = read_rule_text(path, follow=False)
    if not isinstance(text, str):
        return None, None
    hidden = invisible_in(text)
    index = min((text.find(c) for c in hidden), default=-1)
    return position(text, index) if index >= 0 else (None, None)


def _holds_home(root: str, home: str | None) -> bool:
    """Whether ``root`` is ``/`` or contains the home folder (compared as spelled: git
    itself never searches into the home folder from below, ``rules_core.discovery.git``)."""
    root = os.path.normpath(root)
    if root == "/":
        return True
    if not home or not os.path.isabs(home):
        return False
    home = os.path.normpath(home)
    return home == root or home.startswith(root + "/")


def _containment(cwd: str, git_root: str | None) -> Containment:
    if git_root is not None:
        return Containment(git_root, "the git root")
    return Containment(cwd, "the project directory")


def _ensure_compiled(rule: Rule) -> Rule:
    if rule.compiled is not None:
        return rule
    compiled, _ = compile_rule(rule.globs, rule.model, rule.branch)
    return dataclasses.replace(rule, compiled=compiled)


def same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def same_inputs(old: tuple[object, ...], new: tuple[object, ...]) -> bool:
    """Whether an evaluation's inputs (facts, rules, errors, exists pool, exclusions) are
    the last one's: the engine then returns the last evaluation as it was."""
    old_facts, old_rules, old_errors, old_existing, old_excluded = old
    new_facts, new_rules, new_errors, new_existing, new_excluded = new
    return (
        old_facts == new_facts
        and old_excluded == new_excluded
        and same_objects(old_rules, new_rules)  # type: ignore[arg-type]
        and old_errors == new_errors
        and old_existing.keys() == new_existing.keys()  # type: ignore[attr-defined]
        and all(old_existing[k] is v for k, v in new_existing.items())  # type: ignore[index, attr-defined]
    )


def _assign_ids(rules: Sequence[Rule]) -> tuple[Rule, ...]:
    """Ids (the stem, ``-2``, ``-3`` … on a clash) and references. Suffixes are counted per
    stem, so 20,000 files named ``x.md`` cost one pass, not a search from ``x-2`` each."""
    taken: set[str] = set()
    next_suffix: dict[str, int] = {}
    paths: set[str] = set()
    assigned = []
    for index, rule in enumerate(rules):
        stem = rule.file.stem
        candidate, n = stem, next_suffix.get(stem, 1)
        while candidate in taken:
            n += 1
            candidate = f"{stem}-{n}"
        next_suffix[stem] = n
        taken.add(candidate)
        path = rule.relative_path
        reference = path if path and path not in paths else RULE_URL + candidate
        paths.add(path)
        assigned.append(dataclasses.replace(rule, id=candidate, index=index, reference=reference))
    return tuple(assigned)


def _unique_in_order(files: Sequence[RuleFile]) -> list[RuleFile]:
    seen: set[str] = set()
    unique = []
    for rule_file in files:
        if rule_file.path not in seen:
            seen.add(rule_file.path)
            unique.append(rule_file)
    return unique


def internal_error(cwd: str, exc: Exception) -> RuleError:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {where.filename}:{where.lineno}" if where else ""
    return RuleError(
        "source-unreadable",
        cwd,
        f"pi-rules internal error ({type(exc).__name__}: {exc}{at}); no rules were "
        "evaluated — please report this",
        "engine",
    )
