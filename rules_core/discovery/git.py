"""The questions pi-rules asks git: the current branch, the repository's top level, and
(for ``stream scan``) which files it would not ignore.

Each is one git command; any failure means "absent", never an error, and pi-rules itself
touches no file to find out beyond the ``.git`` entry at the top level git reports.

How git is run (issue 14, attacks 3 and 5): a repository must not choose which program
runs, nor which repository git answers about.

- ``git`` is an absolute path, resolved on ``PATH`` with relative and empty entries
  dropped: an empty entry means "the current directory", which is the project, so its
  own ``./git`` would run. The cleaned ``PATH`` is also what git itself gets.
- git runs with the variables that select a repository removed (the list git itself
  clears before working in another repository, ``git rev-parse --local-env-vars``:
  ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_COMMON_DIR``, ``GIT_CONFIG_PARAMETERS`` …), so the
  answer depends on the directory alone — as it would in a fresh terminal there — and
  never on a dotfiles alias exported into the shell or on an outer git hook's
  ``GIT_DIR``. ``GIT_CEILING_DIRECTORIES`` (which only narrows the search) is kept, and the
  home folder is added to it: git never searches into the home folder from below it.
- Callers never ask git about an untrusted project (see ``rules_hosts.session.facts``).
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess

_TIMEOUT_SECONDS = 5
_GITFILE_BYTES = 4096  # a worktree/submodule `.git` file holds one short line

# `git rev-parse --local-env-vars` (git 2.39): what git clears before it works in another
# repository. The GIT_CONFIG_KEY_n/VALUE_n pairs that GIT_CONFIG_COUNT announces go too.
REPOSITORY_ENV = frozenset({
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
})


def absolute_path(path: str) -> str:
    """``PATH`` without its relative and empty entries (each would resolve in the project)."""
    return os.pathsep.join(entry for entry in path.split(os.pathsep) if os.path.isabs(entry))


@functools.lru_cache(maxsize=8)
def _git_on(path: str) -> str | None:
    found = shutil.which("git", path=absolute_path(path))
    return found if found is not None and os.path.isabs(found) else None


def git_executable() -> str | None:
    """The absolute path of ``git`` on this process's ``PATH`` (absolute entries only),
    resolved once per ``PATH`` value; ``None`` when there is none."""
    return _git_on(os.environ.get("PATH", os.defpath))


def git_environment() -> dict[str, str]:
    """This process's environment as git gets it: no repository-selecting variables, an
    absolute-only ``PATH``, and the home folder as a ceiling of git's upward search."""
    env = {
        name: value for name, value in os.environ.items()
        if name not in REPOSITORY_ENV and not name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env["PATH"] = absolute_path(env.get("PATH", os.defpath))
    home = env.get("HOME", "")
    if os.path.isabs(home):
        ceilings = env.get("GIT_CEILING_DIRECTORIES", "")
        env["GIT_CEILING_DIRECTORIES"] = f"{ceilings}{os.pathsep}{home}" if ceilings else home
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a question must not take the index lock
    return env


def git_output(cwd: str, *args: str, timeout: float = _TIMEOUT_SECONDS) -> bytes | None:
    """git's raw stdout, or ``None`` when git is missing, fails or hangs."""
    git = git_executable()
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, *args],
            cwd=cwd,
            env=git_environment(),
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout if done.returncode == 0 else None


def run_git(cwd: str, *args: str) -> str | None:
    """git's stdout, or ``None`` when git is missing, fails, hangs or prints non-UTF-8."""
    output = git_output(cwd, *args)
    if output is None:
        return None
    try:
        return output.decode("utf-8")
    except UnicodeDecodeError:
        return None


def current_branch(cwd: str) -> str | None:
    """``git rev-parse --abbrev-ref HEAD`` in ``cwd``; ``None`` when there is no branch.

    Outside a repository, on a detached HEAD or an unborn branch, when git is missing,
    fails, hangs or prints something that is not one branch name, the branch is absent.
    Never call it for an untrusted project: git reads the project's config.
    """
    output = run_git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    name = output.strip() if output is not None else ""
    if not name or name == "HEAD" or any(c.isspace() for c in name):
        return None
    return name


def find_git_root(cwd: str) -> str | None:
    """The enclosing repository's top level, as an ancestor-or-self of ``cwd`` as given.

    Asks ``git rev-parse --show-toplevel --show-prefix --absolute-git-dir``. The prefix
    (cwd's path inside the repository) says how many of cwd's own trailing segments to
    drop, so a symlinked spelling of cwd is kept and nothing above the root is listed.
    The top level counts only where the repository really is: its ``.git`` (a directory,
    or a worktree/submodule file pointing at it) is the git directory git used. A
    ``core.worktree`` in the repository's config moves git's top level anywhere (``/``),
    and a bound taken from it would let a symlink reach any file. ``None`` — behave as a
    single-directory project — when git is missing, fails, hangs or prints anything
    unexpected, or the check fails.
    """
    output = run_git(cwd, "rev-parse", "--show-toplevel", "--show-prefix", "--absolute-git-dir")
    if output is None:
        return None
    lines = output.split("\n")
    if len(lines) != 4 or lines[3] != "" or not os.path.isabs(lines[0]) or not os.path.isabs(lines[2]):
        return None
    if not _git_dir_at(lines[0], lines[2]):
        return None
    return _root_in_cwd_spelling(cwd.rstrip("/") or "/", lines[0], lines[1])


def _git_dir_at(toplevel: str, git_dir: str) -> bool:
    """Whether ``<toplevel>/.git`` is (or points at) ``git_dir``, the repository git used."""
    dot_git = os.path.join(toplevel, ".git")
    try:
        info = os.lstat(dot_git)
    except (OSError, ValueError):
        return False
    if stat.S_ISREG(info.st_mode):  # `gitdir: <path>`, relative to the top level
        pointed = _gitfile_target(dot_git)
        if pointed is None:
            return False
        return _same_directory(os.path.normpath(os.path.join(toplevel, pointed)), git_dir)
    # A directory, or a link to one (some setups keep .git elsewhere that way).
    return _same_directory(dot_git, git_dir)


def _gitfile_target(path: str) -> str | None:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = os.read(fd, _GITFILE_BYTES)
        finally:
            os.close(fd)
        text = data.decode("utf-8").strip()
    except (OSError, ValueError):
        return None
    if not text.startswith("gitdir:") or "\n" in text:
        return None
    return text[len("gitdir:"):].strip() or None


def _same_directory(path: str, git_dir: str) -> bool:
    if os.path.normpath(path) == os.path.normpath(git_dir):
        return True  # git reports physical paths; the usual case needs no stat
    try:
        return os.path.samestat(os.stat(path), os.stat(git_dir))
    except (OSError, ValueError):
        return False


def _root_in_cwd_spelling(cwd: str, toplevel: str, prefix: str) -> str | None:
    inside = prefix.rstrip("/")
    if not inside:
        return cwd
    if cwd.endswith("/" + inside):
        return cwd[: -len(inside) - 1] or "/"
    if cwd.startswith(toplevel.rstrip("/") + "/"):
        return toplevel
    return None  # cwd reached through a symlink inside the repository: no safe bound
