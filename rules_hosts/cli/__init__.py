"""The command line, and the ``pi-rules`` entry (the console script ``rules_hosts.cli:main``).

``pi-rules hook claude-code`` runs once per Claude Code hook event, so before anything
heavy is imported ``main`` tries the resident hook server through ``hook_client``
(stdlib only); every other command, and a hook the server cannot answer, runs the app.

Modules and their public names: ``app`` (``main``, the parser and the built-in commands),
``options`` (the global options), ``config`` (``config`` and ``configured_engine``),
``init``, ``trust`` (``trust``/``untrust``), ``stream`` (``stream test``/``scan``),
``launch`` (the command that starts this pi-rules, for host configs), ``hook_client``.
"""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    # A real process's hook call (an embedding caller's argv is answered in process); a
    # command without the word `hook` never pays for importing the client (`socket`).
    if argv is None and "hook" in sys.argv[1:]:
        import rules_hosts.cli.hook_client as hook_client

        try:
            code = hook_client.main()
        except Exception:  # noqa: BLE001 - the fast path never costs the answer: run it in process
            # ... unless GO was sent: the server ran the call, and it never runs twice.
            code = 0 if hook_client.went else None
        if code is not None:
            return code
    words = sys.argv[1:] if argv is None else list(argv)
    if "--version" in words and "hook" not in words:  # a hook's exit code is app.main's to decide
        from rules_hosts.cli.options import print_version

        if print_version(words):  # the engine and the plugins are never imported
            return 0
    from rules_hosts.cli.app import main as app_main

    return app_main(words)
