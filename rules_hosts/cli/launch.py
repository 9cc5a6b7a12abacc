"""How a host config starts this very pi-rules again: an absolute command, never a bare name.

Claude Code (and every MCP host) runs the commands it is given with its own ``PATH``, which
rarely holds the virtual environment pi-rules lives in; a bare ``pi-rules`` would then fail
or, worse, start another installation. So every snippet pi-rules writes names the running
program by its absolute path: the ``pi-rules`` console script when that is what runs, else
``<python> -P -m rules_hosts`` with the interpreter that runs now (``python -m rules_hosts``,
tests, an embedding). ``-P`` (Python 3.11+) keeps the working directory off ``sys.path``:
a host runs the command in the project, and a repository shipping its own ``rules_hosts/``
folder must not become the hook (issue 26). See docs/hosts.md.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

SCRIPT = "pi-rules"


def launcher(argv0: str | None = None, executable: str | None = None) -> tuple[str, ...]:
    """The words that start this pi-rules from any directory and any ``PATH``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    name = os.path.basename(argv0)
    if name in (SCRIPT, SCRIPT + ".exe"):
        # A bare name (started through PATH by a caller that passed no path) is looked up
        # the way the shell did.
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found and os.path.isfile(found):
            return (os.path.abspath(found),)
    python = sys.executable if executable is None else executable
    if not python:  # an embedded interpreter that cannot name itself: PATH is all there is
        return (SCRIPT,)
    # abspath, not realpath: a venv's python is a symlink, and resolving it would leave
    # the venv (and its site-packages) behind.
    return (os.path.abspath(python), "-P", "-m", "rules_hosts")


def shell_command(*words: str, launch: tuple[str, ...] | None = None) -> str:
    """One shell command line (hooks run through a shell): each word quoted as needed."""
    return shlex.join([*(launcher() if launch is None else launch), *words])
