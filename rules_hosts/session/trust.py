"""pi-rules' own trust store, for hosts that have no trust decision of their own (Pi 0.73.1).

The model people know from ``direnv allow`` and ``mise trust``: ``pi-rules trust [DIR]``
records a project root in the user's config folder, ``pi-rules untrust [DIR]`` removes
it, and a host started with ``--trust-store`` (or asking ``trust_decision``) reads project
rules only for a recorded root or a folder below one. See docs/trust.md.

What an entry pins is the real path of the root, nothing else: a moved repository is
not trusted at its new place, and whatever is later checked out at a trusted path is
trusted (``untrust`` before handing the folder to someone else's code). The store is
``$XDG_CONFIG_HOME/pi-rules/trusted.json`` and is never looked for in a project; finding
a project's root never runs git (git reads the repository's config, and this decision is
what stands between an unknown repository and every process we would start in it).
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from rules_core.discovery.containment import write_contained
from rules_core.settings.load import SettingsCache, user_settings_path
from rules_core.settings.parse import TRUST_MODES

STORE_NAME = "trusted.json"
STORE_VERSION = 1
MAX_STORE_BYTES = 1024 * 1024  # thousands of paths; more was not written by us
MAX_ENTRIES = 10_000
OWN_MARKERS = (os.path.join(".pi", "rules"),)  # the spec's own rules folder


class TrustStoreError(Exception):
    """The store cannot be read or written; the message names the file and the fix."""


@dataclass(frozen=True)
class TrustDecision:
    """Whether project rules may be read in ``cwd``, and who said so.

    ``decided_by``: ``store`` (the trust store), ``settings`` (``trust`` in the user's
    config file), ``host`` (the host's own decision, e.g. ``--untrusted``) or ``default``
    (the CLI's trusted default). ``root`` is the project root an entry would record."""

    trusted: bool
    root: str
    decided_by: str
    problem: str | None = None  # the store could not be read: untrusted, and why
    home: str | None = None  # the home folder the hint must never name

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"trusted": self.trusted, "root": self.root, "decided_by": self.decided_by,
                                 "hint": trust_hint(self.root, self.home)}
        if self.problem is not None:
            shown["problem"] = self.problem
        return shown


def trust_hint(root: str, home: str | None = None) -> str:
    if too_wide(root, home):
        return ("pi-rules trust in the project's own folder (your home folder and / are never trusted: "
                "every repository cloned below them would be)")
    return f"pi-rules trust {shlex.quote(root)}"


def too_wide(root: str, home: str | None = None) -> bool:
    """Whether ``root`` is ``/``, the user's home folder or a folder above it: recording it
    would trust every repository cloned below, so the store never does."""
    real = os.path.realpath(root)
    if real == os.path.dirname(real):
        return True
    home_real = os.path.realpath(home or os.path.expanduser("~"))
    return home_real == real or home_real.startswith(real.rstrip(os.sep) + os.sep)


def store_path(env: Mapping[str, str]) -> str | None:
    """``$XDG_CONFIG_HOME/pi-rules/trusted.json`` (``~/.config`` when unset or relative);
    ``None`` without a home to put it in."""
    config = user_settings_path(env, env.get("HOME") or None)
    return None if config is None else os.path.join(os.path.dirname(config), STORE_NAME)


def project_root(directory: str) -> str:
    """The real path of the nearest folder at or above ``directory`` holding ``.git``
    (a folder, or a worktree's file), found with ``lstat`` alone; ``directory`` itself
    when there is none. The walk stops below the user's home and at ``/``, which are never
    a project root."""
    start = os.path.realpath(directory)
    home = os.path.realpath(os.path.expanduser("~"))
    current = start
    while True:
        if current in (home, os.path.dirname(current)):
            return start  # home or /: not a project
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        current = os.path.dirname(current)


def read_store(env: Mapping[str, str]) -> tuple[str, ...]:
    """The trusted roots. A missing store is empty; one that cannot be read or is not ours
    raises ``TrustStoreError`` — the caller then trusts nothing, never more."""
    path = store_path(env)
    if path is None:
        return ()
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return ()
    except OSError as exc:
        raise TrustStoreError(f"cannot read the trust store {path}: {exc.strerror}; fix its permissions or remove it")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_STORE_BYTES + 1)
    if len(data) > MAX_STORE_BYTES:
        raise TrustStoreError(f"the trust store {path} is larger than {MAX_STORE_BYTES} bytes; remove it "
                              "and trust your projects again")
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise TrustStoreError(f"the trust store {path} is not valid JSON; remove it and trust your projects again")
    if not isinstance(document, dict) or document.get("version") != STORE_VERSION:
        raise TrustStoreError(f"the trust store {path} is not a version-{STORE_VERSION} store of pi-rules; "
                              "remove it and trust your projects again")
    roots = document.get("trusted")
    if not isinstance(roots, list) or not all(isinstance(r, str) and os.path.isabs(r) and "\0" not in r
                                              for r in roots):
        raise TrustStoreError(f"the trust store {path} holds something other than absolute paths under "
                              '"trusted"; remove it and trust your projects again')
    return tuple(dict.fromkeys(roots))[:MAX_ENTRIES]


def _write_store(env: Mapping[str, str], roots: Iterable[str]) -> str:
    path = store_path(env)
    if path is None:
        raise TrustStoreError("no home folder to keep the trust store in; set HOME or XDG_CONFIG_HOME")
    folder = os.path.dirname(path)
    text = json.dumps({"version": STORE_VERSION, "trusted": sorted(set(roots))}, indent=2) + "\n"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        # Through the one writer that refuses links out (its bound: the store's own folder).
        write_contained(path, text.encode("utf-8"), folder, "the trust store's folder", sync=True)
    except OSError as exc:
        raise TrustStoreError(f"cannot write the trust store {path}: {exc.strerror or exc}") from None
    return path


def trust(directory: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """Record the project root of ``directory``: (root, whether it was new)."""
    root = project_root(directory)
    if too_wide(root, env.get("HOME")):
        raise TrustStoreError(f"{root} is / or your home folder (or above it); pi-rules never trusts it, since "
                              "every repository cloned below it would be trusted too — run pi-rules trust in "
                              "the project's own folder")
    roots = read_store(env)
    if root in roots:
        return root, False
    if len(roots) >= MAX_ENTRIES:
        raise TrustStoreError(f"the trust store already holds {MAX_ENTRIES} projects; untrust some first")
    _write_store(env, (*roots, root))
    return root, True


def untrust(directory: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """Remove the project root of ``directory`` (or ``directory`` as recorded, for a
    folder that is gone): (root, whether it was there)."""
    roots = read_store(env)
    candidates = {project_root(directory), os.path.abspath(directory)}
    kept = [r for r in roots if r not in candidates]
    if len(kept) == len(roots):
        return project_root(directory), False
    _write_store(env, kept)
    removed = next(r for r in roots if r in candidates)
    return removed, True


def trust_mode(env: Mapping[str, str]) -> str:
    """``trust`` in the user's config file: ``ask`` (the store decides, the default),
    ``always`` or ``never``. Read as for an untrusted project, so no project file is
    opened; a project file setting it is an error of that file (settings_parse)."""
    cache = SettingsCache(env, env.get("HOME") or None, bound=lambda cwd: None)
    mode = cache.settings(os.sep, trusted=False).value("trust").value
    return mode if mode in TRUST_MODES else "ask"


def trust_decision(cwd: str, env: Mapping[str, str] | None = None) -> TrustDecision:
    """The store's answer for ``cwd``: trusted when ``cwd`` is a recorded root or below
    one, or when the user's ``trust`` setting is ``always``; never when it is ``never``.
    A store that cannot be read trusts nothing (``problem`` says why)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or None
    root = project_root(cwd)
    mode = trust_mode(env)
    if mode != "ask":
        return TrustDecision(mode == "always", root, "settings", home=home)
    try:
        roots = read_store(env)
    except TrustStoreError as exc:
        return TrustDecision(False, root, "store", str(exc), home=home)
    here = os.path.realpath(cwd)
    # An entry for /, home or above (written by hand or by an older version) trusts nothing.
    trusted = any(here == r or here.startswith(r.rstrip(os.sep) + os.sep) for r in roots if not too_wide(r, home))
    return TrustDecision(trusted, root, "store", home=home)


def project_markers(importers: Iterable[Any]) -> tuple[str, ...]:
    """The cwd-relative names whose presence says a project has rules: ours and what
    every selectable importer declares (``ImporterInfo.markers``)."""
    names: list[str] = list(OWN_MARKERS)
    for info in importers:
        names.extend(getattr(info, "markers", ()) or getattr(info, "cwd_only", ()))
    return tuple(dict.fromkeys(names))


def has_project_rules(cwd: str, markers: Iterable[str]) -> bool:
    """Whether an untrusted project holds rule files pi-rules would read once trusted:
    ``lstat`` of fixed names in ``cwd`` and its project root, nothing listed or read."""
    folders = dict.fromkeys((os.path.realpath(cwd), project_root(cwd)))
    for folder in folders:
        for name in markers:
            if os.path.lexists(os.path.join(folder, name)):
                return True
    return False
