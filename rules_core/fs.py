"""Listing rule directories and reading rule files without ever hanging or raising.

Source plugins list with ``list_rule_files``; the engine reads with ``read_rule_text``.
Both turn every filesystem fault into a ``RuleError`` value. ``Containment`` keeps
project files inside the git root (or cwd without one): a symbolic link leading out is
reported, and its target is never stat-ed, listed or read.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Callable, Literal, Union

from .model import RuleError, RuleFile

if TYPE_CHECKING:  # cache.py imports this module
    from .cache import ListingCache

# A rule is a short instruction for a model; anything bigger is a mistake (or an attack)
# and is reported instead of being read into memory.
MAX_RULE_BYTES = 1024 * 1024
NEVER_SCANNED = frozenset({".git", "node_modules"})
MAX_SYMLINKS = 40  # the kernel's own ELOOP limit


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
                return Unresolved(_describe(exc) if isinstance(exc, OSError) else str(exc))
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


def list_rule_files(
    root: str,
    *,
    accept: Callable[[str], bool],
    plugin: str,
    schema: str,
    source: Literal["project", "global"],
    base: str,
    group: int,
    rank: int = 0,
    scope: str = "",
    cache: ListingCache | None = None,
) -> list[RuleFile | RuleError]:
    """Every accepted file below ``root`` as a ``RuleFile``, plus errors for what failed.

    A missing root yields nothing. ``.git`` and ``node_modules`` are never entered and
    symlinked directories are not followed (no loops, no escape from the tree); symlinked
    files are read. Entries that are not regular files (FIFOs, sockets, devices, broken
    links) with an accepted name are reported as ``read-failure``, never opened. With a
    ``cache`` (``DiscoveryContext.listing_cache``) an unlistable directory is re-reported
    from the cache instead of being listed again until its mtime changes, and a
    ``project`` source is held inside the discovery's ``Containment``: a rules directory
    or a symlinked rule file that leads outside the git root is reported, not followed.
    """
    found: list[RuleFile | RuleError] = []
    contain: Containment | None = getattr(cache, "containment", None) if source == "project" else None
    if contain is not None:
        real_root = contain.directory(root)
        if real_root is None:
            return []  # missing (or a broken link): nothing to report, as without a bound
        if isinstance(real_root, Unresolved) and real_root.escape:
            return [RuleError("source-unreadable", root, _unlisted(real_root), plugin)]
        # A loop or an OS error: listing fails the usual way and is cached (RULE-SPEC §7).

    def make(path: str, rel: str) -> RuleFile:
        return RuleFile(
            path=path,
            rules_root=root,
            relative_path=rel,
            base=base,
            plugin=plugin,
            schema=schema,
            source=source,
            order=(group, rank, scope, rel),
        )

    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        known = cache.known_failure(directory) if cache is not None else None
        if known is not None:
            found.append(known)
            continue
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            continue  # vanished or never existed: nothing to report
        except OSError as exc:
            error = _unreadable(directory, exc, plugin)
            if cache is not None:
                cache.remember_failure(directory, error)
            found.append(error)
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            try:
                is_link = entry.is_symlink()
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in NEVER_SCANNED:
                        pending.append((entry.path, rel + "/"))
                    continue
                if not accept(entry.name):
                    continue
                if is_link and contain is not None:
                    found.extend(_contained_link(contain, entry.path, rel, make, plugin))
                    continue
                if is_link and entry.is_dir(follow_symlinks=True):
                    continue  # a symlinked directory named like a rule file
                if entry.is_file(follow_symlinks=True):
                    found.append(make(entry.path, rel))
                else:
                    found.append(RuleError("read-failure", entry.path, _not_regular(entry.path), plugin))
            except OSError as exc:
                found.append(RuleError("read-failure", entry.path, _describe(exc), plugin))
    return sorted(found, key=_order_key)


def _contained_link(
    contain: Containment, path: str, rel: str, make: Callable[[str, str], RuleFile], plugin: str
) -> list[RuleFile | RuleError]:
    """A symlinked entry of a project rules directory, resolved inside the bound only."""
    found = contain.resolve(path)
    if found is None:
        return [RuleError("read-failure", path, _BROKEN, plugin)]
    if isinstance(found, Unresolved):
        return [RuleError("read-failure", path, found.message, plugin)]
    mode = found[1].st_mode
    if stat.S_ISDIR(mode):
        return []  # a symlinked directory named like a rule file: not followed
    if stat.S_ISREG(mode):
        return [make(path, rel)]
    return [RuleError("read-failure", path, _NOT_REGULAR, plugin)]


def read_rule_text(path: str, *, follow: bool = True) -> str | RuleError | None:
    """The file's text (BOM dropped, CRLF folded), an error, or ``None`` if it vanished
    (or became a directory: the next listing walks it).

    Opens non-blocking and checks the descriptor is a regular file, so a FIFO swapped in
    after listing cannot hang the engine; never reads more than ``MAX_RULE_BYTES`` + 1
    bytes, whatever size the file claims. ``follow=False`` refuses a final symbolic link
    (the caller resolved it already; one swapped in since is not followed).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return RuleError("read-failure", path, _describe(exc))
    except ValueError:  # an embedded NUL from a third-party source
        return RuleError("read-failure", path, "the path contains a NUL byte; rename the file")
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            return RuleError("read-failure", path, _not_regular(path))
        if info.st_size > MAX_RULE_BYTES:
            return _too_big(path, info.st_size)
        chunks = []
        remaining = MAX_RULE_BYTES + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        return RuleError("read-failure", path, _describe(exc))
    finally:
        os.close(fd)
    if len(data) > MAX_RULE_BYTES:  # it grew after fstat (or lied about its size)
        return _too_big(path, len(data), at_least=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return RuleError(
            "read-failure",
            path,
            f"not valid UTF-8 (byte {exc.start}); save the file as UTF-8",
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n")


def file_signature(path: str) -> tuple[int, int, int] | None:
    """(mtime_ns, size, inode) for cache validation, or ``None`` when it cannot be stat-ed."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _order_key(item: RuleFile | RuleError) -> tuple[int, str]:
    if isinstance(item, RuleFile):
        return (1, item.relative_path)
    return (0, item.path)


def _unreadable(directory: str, exc: OSError, plugin: str) -> RuleError:
    return RuleError(
        "source-unreadable",
        directory,
        f"cannot list this rules directory ({exc.strerror or type(exc).__name__}); "
        "fix its permissions or remove it — its rules are not loaded",
        plugin,
    )


_LOOP = "symbolic link loop (more than 40 links to follow); point the link at a real file or delete it"
_BROKEN = "broken symbolic link; point it at an existing file or delete it"
_NOT_REGULAR = "not a regular file (FIFO, socket or device); rule files must be plain files"
# What to do about an OSError, by errno; anything else gets the generic advice.
_FIXES = {
    errno.EACCES: "make it readable (chmod a+r) or remove it",
    errno.EPERM: "make it readable (chmod a+r) or remove it",
    errno.ELOOP: "point the link at a real file or delete it",
    errno.ENAMETOOLONG: "move it to a shorter path",
}


def _describe(exc: OSError) -> str:
    """The OS's words plus what to do about them."""
    reason = exc.strerror or type(exc).__name__
    return f"{reason}; {_FIXES.get(exc.errno or 0, 'check the file system, then fix or remove it')}"


def _unlisted(stop: Unresolved) -> str:
    return f"this rules directory cannot be listed: {stop.message}"


def _not_regular(path: str) -> str:
    if os.path.islink(path) and not os.path.exists(path):
        return _BROKEN
    return _NOT_REGULAR


def _too_big(path: str, size: int, at_least: bool = False) -> RuleError:
    return RuleError(
        "read-failure",
        path,
        f"file is {'at least ' if at_least else ''}{size} bytes, over the {MAX_RULE_BYTES}-byte limit for a rule; "
        "split it into smaller rules",
    )
