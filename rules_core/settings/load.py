"""The settings files (CONTRACT §6): read and merge (``settings_parse`` validates one file,
``settings_apply`` applies the result to discovery and evaluation).

Two files hold the same keys: ``.pi/rules.toml`` in the working directory (trusted
projects only, and never an ancestor's) and the user's
``$XDG_CONFIG_HOME/pi-rules/config.toml`` (``~/.config/pi-rules/config.toml``). A value
is taken from the highest level that sets it validly: command line, environment,
project file, user file, default. Inside one file a ``[hosts.<name>]`` table beats the
file's top level for that host. List keys (``disable``, ``plugins.*``, ``lint.ignore``)
add up across levels instead, as ``-p no:NAME`` always added to
``PI_RULES_DISABLE_PLUGINS``. See docs/configuration.md.

Reading never raises and never reads more than 64 KiB: a file that cannot be read or
parsed, an unknown key or a bad value is a ``RuleError`` naming the file and line, and
the value falls back to the next level. Files are re-read only when their (mtime, size,
inode) changes, so a long-lived session sees an edit at its next evaluation.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from rules_core.discovery.cache import evict_oldest
from rules_core.discovery.containment import Containment, Unresolved
from rules_core.globs.matching import Glob, GlobError, compile_glob
from rules_core.model import RuleError, RuleWarning
from rules_core.discovery.reading import describe_os_error, not_regular
from rules_core.select import js_parse_int
from rules_core.settings.parse import (
    KEYS,
    LIST_KEYS,
    OVERFLOWS,
    PLUGIN,
    SCALAR_KEYS,
    SettingsFile,
    hint,
    parse_settings,
)

__all__ = ["KEYS", "LIST_KEYS", "SCALAR_KEYS", "Settings", "SettingsCache", "SettingsFile", "Value", "filter_warnings"]

PROJECT_FILE = ".pi/rules.toml"
MAX_SETTINGS_BYTES = 64 * 1024  # a settings file is a dozen lines; more is a mistake or an attack
MAX_CACHED_FILES = 64  # settings files remembered (a host that wanders between projects)
DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "max_tokens": 2000, "overflow": "drop", "import": "all", "attach": True, "trust": "ask",
    **{key: () for key in LIST_KEYS},
})
ENV_NAMES: Mapping[str, str] = MappingProxyType({
    "max_tokens": "PI_RULES_MAX_TOKENS", "overflow": "PI_RULES_OVERFLOW", "import": "PI_RULES_IMPORT",
    "attach": "PI_RULES_ATTACH", "plugins.block": "PI_RULES_DISABLE_PLUGINS",
})
OPTION_NAMES: Mapping[str, str] = MappingProxyType({
    "max_tokens": "--max-tokens", "overflow": "--overflow", "import": "--import", "plugins.block": "-p no:NAME",
})
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Value:
    """One effective value and where it came from: ``level`` is ``command-line``,
    ``environment``, ``project``, ``user`` or ``default``; ``source`` the option, the
    variable or the file (as reports show it); ``table`` ``hosts.<name>`` when a host
    table set it."""

    value: Any
    level: str = "default"
    source: str = ""
    table: str = ""

    @property
    def origin(self) -> str:
        where = f"{self.source} [{self.table}]" if self.table else self.source
        return f"{self.level} {where}".strip()


@dataclass(frozen=True)
class FileState:
    """Where one level's file is and what became of it: ``read``, ``missing``,
    ``error`` or ``untrusted`` (a project file is not even looked for)."""

    level: str
    path: str
    shown: str
    state: str


@dataclass(frozen=True)
class Settings:
    """The effective settings of one working directory: files highest first (project,
    then user), the environment and the command line's values (``OPTION_NAMES`` keys)."""

    files: tuple[SettingsFile, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    options: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    states: tuple[FileState, ...] = ()

    def value(self, key: str, host: str | None = None) -> Value:
        """The effective value of ``key`` (a list key: every item, at its highest level)."""
        if key in LIST_KEYS:
            items = self.items(key, host)
            return Value(tuple(i for i, _ in items), items[0][1].level if items else "default")
        option = self.options.get(key)
        if option is not None:
            return Value(option, "command-line", OPTION_NAMES[key])
        from_env = env_value(key, self.env)
        if from_env is not None:
            return Value(from_env, "environment", ENV_NAMES[key])
        for settings_file in self.files:
            found = settings_file.lookup(key, host)
            if found is not None:
                return Value(found[0], settings_file.level, settings_file.shown, found[1])
        return Value(DEFAULTS[key])

    def items(self, key: str, host: str | None = None) -> tuple[tuple[str, Value], ...]:
        """Each item of the list key ``key`` with the highest level that lists it."""
        found: dict[str, Value] = {}
        for item in self.options.get(key) or ():
            found.setdefault(item, Value(item, "command-line", OPTION_NAMES[key]))
        for item in env_items(key, self.env):
            found.setdefault(item, Value(item, "environment", ENV_NAMES[key]))
        for settings_file in self.files:
            for item, table in settings_file.items(key, host):
                found.setdefault(item, Value(item, settings_file.level, settings_file.shown, table))
        return tuple(found.items())

    @property
    def lint_ignore(self) -> frozenset[str]:
        """The warning codes ``[lint] ignore`` silences (top level; see ``lint_ignore_for``)."""
        return self.lint_ignore_for(None)

    def lint_ignore_for(self, host: str | None) -> frozenset[str]:
        return frozenset(self.value("lint.ignore", host).value)

    @property
    def errors(self) -> tuple[RuleError, ...]:
        """What is wrong with the files, and an environment value that is not read at all."""
        found = [e for f in self.files for e in f.errors]
        overflow = (self.env.get(ENV_NAMES["overflow"]) or "").strip()
        if overflow and overflow.lower() not in OVERFLOWS:
            found.append(RuleError("invalid-value", ENV_NAMES["overflow"], (
                f"{ENV_NAMES['overflow']}={overflow!r} is neither 'drop' nor 'index'; ignored"
                f"{hint(overflow, OVERFLOWS)}"
            ), PLUGIN))
        return tuple(found)


def filter_warnings(warnings: Iterable[RuleWarning], ignore: Iterable[str], cwd: str = "") -> tuple[RuleWarning, ...]:
    """``warnings`` without what ``[lint] ignore`` lists (``Settings.lint_ignore``): a
    code (``dead-glob``) silences it everywhere, ``code:glob`` (``dead-glob:legacy/**``)
    only for files whose cwd-relative path the glob matches."""
    codes: set[str] = set()
    scoped: list[tuple[str, Glob]] = []
    for entry in ignore:
        code, _, pattern = entry.partition(":")
        if not pattern:
            codes.add(code)
            continue
        try:
            scoped.append((code, compile_glob(pattern)))
        except GlobError:
            continue  # reported by the settings check; silences nothing meanwhile
    return tuple(w for w in warnings if w.code not in codes and not _silenced(w, scoped, cwd))


def _silenced(warning: RuleWarning, scoped: list[tuple[str, Glob]], cwd: str) -> bool:
    if not scoped:
        return False
    path = warning.path
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1:]
    return any(code == warning.code and glob.match(path) for code, glob in scoped)


# -- the environment ----------------------------------------------------------------------


def env_value(key: str, env: Mapping[str, str]) -> Any:
    """The value the environment gives ``key``, or ``None`` when it gives none (unset,
    blank, or unreadable: an unreadable value falls back to the files, as if unset)."""
    name = ENV_NAMES.get(key)
    raw = (env.get(name) or "").strip() if name is not None and key not in LIST_KEYS else ""
    if not raw:
        return None
    if key == "max_tokens":
        parsed = js_parse_int(raw)  # JavaScript's parseInt, as RULE-SPEC reads it
        return parsed if parsed is not None and parsed > 0 else None
    if key == "overflow":
        return raw.lower() if raw.lower() in OVERFLOWS else None
    if key == "attach":
        return raw.lower() != "off"  # "anything but off keeps it on" (RULE-SPEC §6)
    return import_value(raw)


def env_items(key: str, env: Mapping[str, str]) -> tuple[str, ...]:
    name = ENV_NAMES.get(key)
    raw = env.get(name, "") if name is not None and key in LIST_KEYS else ""
    return tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))


def import_value(text: str) -> str | tuple[str, ...]:
    """``all``, ``none`` or the importer names of a comma list (``PI_RULES_IMPORT``, ``--import``)."""
    text = text.strip()
    if text.lower() in ("all", "none", ""):
        return text.lower() or "all"
    return tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))


# -- reading -----------------------------------------------------------------------------


def user_settings_path(env: Mapping[str, str], home: str | None) -> str | None:
    """``$XDG_CONFIG_HOME/pi-rules/config.toml``; a relative XDG value is invalid (the
    XDG spec), so ``$HOME/.config`` is used; ``None`` without a home."""
    base = env.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(base):
        if not home or not os.path.isabs(home):
            return None
        base = os.path.join(home, ".config")
    return os.path.join(base, "pi-rules", "config.toml")


class SettingsCache:
    """The parsed settings files by path, re-read only when they change. ``bound(cwd)``
    is the folder a project file may be reached from (the git root; ``None``: cwd)."""

    def __init__(self, env: Mapping[str, str], home: str | None, bound: Callable[[str], str | None]) -> None:
        self.env = env
        self.home = home
        self._bound = bound
        self._files: dict[str, tuple[object, SettingsFile]] = {}

    def settings(self, cwd: str, trusted: bool, options: Mapping[str, Any] = _EMPTY) -> Settings:
        """The settings for ``cwd``. An untrusted project's file is not even stat-ed."""
        states: list[FileState] = []
        files: list[SettingsFile] = []
        project = os.path.join(cwd, PROJECT_FILE)
        if trusted:
            self._add(files, states, "project", project, PROJECT_FILE, lambda: self._project(cwd, project))
        else:
            states.append(FileState("project", project, PROJECT_FILE, "untrusted"))
        user = user_settings_path(self.env, self.home)
        if user is not None:
            self._add(files, states, "user", user, _shown(user, self.home), lambda: self._user(user))
        return Settings(tuple(files), self.env, options, tuple(states))

    def _add(self, files: list[SettingsFile], states: list[FileState], level: str, path: str, shown: str,
             load: Callable[[], tuple[object, str] | RuleError | None]) -> None:
        try:
            found = load()
        except Exception as exc:  # a bug of ours must cost the file, never the evaluation
            found = RuleError("read-failure", path, f"pi-rules internal error ({type(exc).__name__}: {exc}); "
                                                    "the file was not read — please report this", PLUGIN)
        if found is None:
            self._files.pop(path, None)
            states.append(FileState(level, path, shown, "missing"))
            return
        if isinstance(found, RuleError):
            self._files.pop(path, None)
            files.append(SettingsFile(path, shown, level, errors=(found,)))
            states.append(FileState(level, path, shown, "error"))
            return
        signature, physical = found
        cached = self._files.get(path)
        if cached is None or cached[0] != signature:
            text = read_settings_text(physical, follow=level == "user")
            if text is None:
                states.append(FileState(level, path, shown, "missing"))
                return
            parsed = (SettingsFile(path, shown, level, errors=(text,)) if isinstance(text, RuleError)
                      else parse_settings(text, path, shown, level))
            cached = self._files[path] = (signature, parsed)
            evict_oldest(self._files, MAX_CACHED_FILES)
        files.append(cached[1])
        states.append(FileState(level, path, shown, "error" if cached[1].errors else "read"))

    def _project(self, cwd: str, path: str) -> tuple[object, str] | RuleError | None:
        # The common case first, and without asking git for the bound: no .pi folder, or a
        # real one without the file.
        try:
            if not stat.S_ISLNK(os.lstat(os.path.join(cwd, ".pi")).st_mode) and not os.path.lexists(path):
                return None
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            pass  # the containment walk below names the problem
        bound = self._bound(cwd)
        contain = Containment(bound, "the git root") if bound else Containment(cwd, "the project directory")
        if not isinstance(contain.directory(os.path.dirname(path)), str):
            return None  # a .pi leading out: the rules source reports it, and what is there is not ours to look at
        found = contain.resolve(path)
        if found is None:
            return None
        if isinstance(found, Unresolved):
            return RuleError("read-failure", path, found.message, PLUGIN)
        physical, info = found
        return (physical, info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino), physical

    def _user(self, path: str) -> tuple[object, str] | RuleError | None:
        try:
            info = os.stat(path)  # the user's own file: a link is theirs to make
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            return RuleError("read-failure", path, describe_os_error(exc) if isinstance(exc, OSError) else str(exc),
                             PLUGIN)
        return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino), path


def read_settings_text(path: str, *, follow: bool) -> str | RuleError | None:
    """The file's text, an error, or ``None`` if it vanished. Opens non-blocking (a FIFO
    cannot hang us), checks for a regular file and reads at most 64 KiB + 1 bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= 0 if follow else getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return RuleError("read-failure", path, describe_os_error(exc), PLUGIN)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return RuleError("read-failure", path, not_regular(path).replace("rule files", "settings files"), PLUGIN)
        data = os.read(fd, MAX_SETTINGS_BYTES + 1)
        while len(data) <= MAX_SETTINGS_BYTES and (more := os.read(fd, MAX_SETTINGS_BYTES + 1 - len(data))):
            data += more
    except OSError as exc:
        return RuleError("read-failure", path, describe_os_error(exc), PLUGIN)
    finally:
        os.close(fd)
    if len(data) > MAX_SETTINGS_BYTES:
        return RuleError("read-failure", path, f"over the {MAX_SETTINGS_BYTES // 1024} KiB limit for a settings "
                                               "file; not read — a settings file needs a dozen lines", PLUGIN)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        return RuleError("read-failure", path, f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8", PLUGIN)


def _shown(path: str, home: str | None) -> str:
    """How reasons name the user file: ``~/…`` under the home folder."""
    if home and os.path.isabs(home) and path.startswith(home.rstrip("/") + "/"):
        return "~/" + path[len(home.rstrip("/")) + 1:]
    return path
