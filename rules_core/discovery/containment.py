"""Keeping project files inside the project: ``Containment`` resolves paths one
component at a time and never looks outside its bound (the git root, or cwd without
one). A symbolic link leading out is reported; its target is never stat-ed, listed or
read. The engine makes one per discovery and hands it to sources as
``DiscoveryContext.containment``.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Union

from rules_core.discovery.reading import describe_os_error

MAX_SYMLINKS = 40  # the kernel's own ELOOP limit
_LOOP = "symbolic link loop (more than 40 links to follow); point the link at a real file or delete it"


class Unresolved:
    """Why a path cannot be resolved inside the bound: the message a user sees, and
    whether the reason is the bound itself (``escape``) rather than a loop or an error."""

    def __init__(self, message: str, escape: bool = False) -> None:
        self.message = message
        self.escape = escape


Resolved = Union[tuple[str, os.stat_result], Unresolved, None]


class Containment:
    """Resolves project paths one component at a time without looking outside ``bound``.

    ``bound`` is the git root (or cwd when there is none), in cwd's spelling. Each symbolic
    link's target is checked against the bound *before* anything is stat-ed there, so a
    link that leads out is reported without its target ever being touched. Targets are
    compared by spelling: an absolute link through another spelling of the repository
    counts as outside (relative links, the only kind that survives a clone, are exact).
    Resolved directories are memoised, so a fresh instance is made per discovery.
    """

    def __init__(self, bound: str, label: str = "the git root") -> None:
        self.bound = os.path.normpath(bound)
        self.label = label
        self._prefix = self.bound if self.bound.endswith("/") else self.bound + "/"
        self._dirs: dict[str, str | Unresolved | None] = {}

    def inside(self, path: str) -> bool:
        return path == self.bound or path.startswith(self._prefix)

    def resolve(self, path: str) -> Resolved:
        """``(physical path, its lstat)`` of the file ``path`` names, a ``Unresolved`` (outside
        the bound, a loop, an error) or ``None`` when it does not exist (or is broken)."""
        if not self.inside(path):
            return Unresolved(self._escape("", ""), True)
        if path == self.bound:
            return self._walk(self.bound, [])
        parent = self.directory(os.path.dirname(path))
        if not isinstance(parent, str):
            return parent
        return self._walk(parent, [os.path.basename(path)])

    def directory(self, directory: str) -> str | Unresolved | None:
        """The physical directory ``directory`` names (memoised), or why it has none."""
        if not self.inside(directory):
            return Unresolved(self._escape("", ""), True)
        pending = []
        current = directory
        while current != self.bound and current not in self._dirs:
            pending.append(current)
            current = os.path.dirname(current)
        real: str | Unresolved | None = self.bound if current == self.bound else self._dirs[current]
        for lexical in reversed(pending):
            if isinstance(real, str):
                found = self._walk(real, [os.path.basename(lexical)])
                if isinstance(found, tuple):
                    real = found[0] if stat.S_ISDIR(found[1].st_mode) else None
                else:
                    real = found
            self._dirs[lexical] = real
        return real

    def _walk(self, start: str, parts: list[str]) -> Resolved:
        """Follow ``parts`` from the physical directory ``start`` (inside the bound), as the
        kernel would, but checking every link target before stepping onto it."""
        # Each part remembers the link whose target it came from, to name it if it leads out.
        todo = [(part, ("", "")) for part in reversed(parts)]
        current, info, links = start, None, 0
        while todo:
            part, origin = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if current != self.bound:
                    current, info = os.path.dirname(current), None
                elif todo and todo[-1][0] == os.path.basename(self.bound):
                    todo.pop()  # "../<root>": out and straight back in, nothing to look at
                else:
                    return Unresolved(self._escape(*origin), True)
                continue
            candidate = os.path.join(current, part)
            try:
                info = os.lstat(candidate)
                if not stat.S_ISLNK(info.st_mode):
                    if todo and not stat.S_ISDIR(info.st_mode):
                        return None  # a path through a file names nothing
                    current = candidate
                    continue
                links += 1
                if links > MAX_SYMLINKS:
                    return Unresolved(_LOOP)
                target = os.readlink(candidate)
            except FileNotFoundError:
                return None
            except (OSError, ValueError) as exc:
                return Unresolved(describe_os_error(exc) if isinstance(exc, OSError) else str(exc))
            info = None  # the link's own lstat describes nothing we return
            if os.path.isabs(target):
                if not self.inside(target):
                    return Unresolved(self._escape(candidate, target), True)
                current, rest = self.bound, target[len(self.bound):]
            else:
                rest = target
            todo.extend((step, (candidate, target)) for step in reversed(rest.split("/")))
        if info is None:  # ended on a directory reached by ".." or on the bound itself
            try:
                info = os.lstat(current)
            except (OSError, ValueError):
                return None
        return current, info

    def _escape(self, link: str, target: str) -> str:
        where = f"{self.label} {self.bound}"
        if not link:  # a ".." in the path itself, no link involved
            return f"outside {where}; not read — project rules must live inside it"
        if not os.path.isabs(target):  # also say where a relative target lands
            target += f" ({os.path.normpath(os.path.join(os.path.dirname(link), target))})"
        return (
            f"symbolic link {link} -> {target} leads outside {where}; not read — "
            f"point the link inside {self.label} or copy what it points at there"
        )


# -- writes ----------------------------------------------------------------------------
# No write follows a link the repository ships (issue 26): `init`, `--install`, `map -o`,
# the trust store. Every writer asks `write_target` where its bytes may go.


class LinkRefused(OSError):
    """A write would follow a symbolic link out of its bound (or, with ``follow=False``,
    any link below it); the message names the link, ``link`` is its path."""

    def __init__(self, code: int, message: str, link: str = "") -> None:
        super().__init__(code, message)
        self.link = link


def write_target(path: str, bound: str, label: str = "the project", *, follow: bool = True) -> str:
    """The physical path a write to ``path`` may use: the path with every link inside
    ``bound`` resolved, each checked against ``bound`` before it is followed (folders that
    do not exist yet are taken as they are spelt). A path outside ``bound`` is returned as
    it is (the bound does not speak for it). Raises ``LinkRefused`` for a link leading out.

    ``follow=False`` is the stricter rule of a writer whose files must stay where they are
    spelt (``export``: a link inside the project would make one target's files land in
    another's folder): any link below ``bound`` on the way, dangling or not, is refused,
    and the path is returned as spelt.
    """
    path = os.path.abspath(path)
    contain = Containment(bound, label)
    if not contain.inside(path) or path == contain.bound:
        return path
    if not follow:
        _refuse_any_link(contain.bound, path)
        return path
    missing: list[str] = []
    current = path
    while current != contain.bound:
        found = contain.resolve(current)
        if isinstance(found, Unresolved):
            raise LinkRefused(errno.EPERM, _refusal(found.message))
        if isinstance(found, tuple):
            if missing and not stat.S_ISDIR(found[1].st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), current)
            return os.path.join(found[0], *reversed(missing))
        if os.path.islink(current):  # a dangling link: its target is ours to create only inside
            target = os.readlink(current)
            lands = os.path.normpath(os.path.join(os.path.dirname(current), target))
            if not contain.inside(lands):
                raise LinkRefused(errno.EPERM, _refusal(contain._escape(current, target)))
        missing.append(os.path.basename(current))
        current = os.path.dirname(current)
    return os.path.join(contain.bound, *reversed(missing))


def _refuse_any_link(bound: str, path: str) -> None:
    """``LinkRefused`` for the first symbolic link among the existing components of ``path``
    below ``bound`` (its target is never looked at)."""
    current = bound
    for part in os.path.relpath(path, bound).split(os.sep):
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return  # what is missing from here on is made as it is spelt
        if stat.S_ISLNK(mode):
            raise LinkRefused(errno.EPERM, f"{current} is a symbolic link; not written — pi-rules never writes "
                                           "through one here: remove the link, or write elsewhere", current)


def enclosing_project(folder: str, home: str | None = None) -> str:
    """The bound of a write into ``folder``: the nearest folder at or above it holding
    ``.git`` (by ``lstat`` alone, in ``folder``'s spelling; no git runs), else ``folder``
    itself. Home and ``/`` are never a project."""
    start = current = os.path.abspath(folder)
    home = os.path.abspath(home or os.path.expanduser("~"))
    while current not in (home, os.path.dirname(current)):
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        current = os.path.dirname(current)
    return start


def _refusal(message: str) -> str:
    what = message.split("; not read", 1)[0]
    return (f"{what}; not written — pi-rules never writes through a link out of the project (a repository "
            "could point it at your own files): remove the link, or write elsewhere")


def write_contained(path: str, data: bytes, bound: str, label: str = "the project", *,
                    mode: int | None = None, sync: bool = False, follow: bool = True) -> str:
    """Write ``data`` to ``path`` (atomically, folders made) unless a link leads out of
    ``bound`` (``follow=False``: unless any link is on the way, see ``write_target``);
    returns the physical path written. Raises ``LinkRefused`` or ``OSError``."""
    from rules_core.discovery.cache_files import write_atomically

    os.makedirs(os.path.dirname(write_target(path, bound, label, follow=follow)), exist_ok=True)
    # Checked again once the folders exist: one someone made meanwhile must pass too.
    physical = write_target(path, bound, label, follow=follow)
    directory, name = os.path.split(physical)
    write_atomically(directory, name, data, sync=sync, mode=mode, prefix=f".{name}.")
    return physical
