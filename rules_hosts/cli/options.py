"""The global options of ``pi-rules`` (CONTRACT §3) and the conventions around them.

``--cwd``, ``--untrusted``, ``--trust-store``, ``-p no:NAME`` and ``--json`` are accepted before or after the
command (``pi-rules list --json``, ``pi-rules check --cwd x``), as people type them.
The top-level parser owns them; every command's parser (and every verb below it, such as
``stream test``) gets copies whose default is ``SUPPRESS``, so a copy only sets the value
when the option is written after the command and otherwise leaves the top level's alone.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Iterator, NamedTuple, Sequence

DISTRIBUTION = "pi-rules"
DESCRIPTION = "Discover, check, match and render project rules."
EPILOG = (
    "New here? `pi-rules init` creates .pi/rules/ with an example rule; `pi-rules check` "
    "lints every rule file. Global options may come before or after the command; "
    "`pi-rules COMMAND --help` shows a command's own options."
)


class _Option(NamedTuple):  # not a dataclass: `dataclasses` imports `inspect`, 5 ms of `--version`
    flags: tuple[str, ...]
    kwargs: dict[str, Any]
    default: Any


_GLOBALS = (
    _Option(("--cwd",), {"metavar": "DIR", "help": "project working directory (default: .)"}, "."),
    _Option(("--untrusted",), {"action": "store_true", "help": "read no project rules"}, False),
    _Option(
        ("-p",),
        {"dest": "plugin_options", "action": "append", "metavar": "no:NAME", "help": "block the plugin NAME (repeatable)"},
        [],
    ),
    # For hosts with no trust decision of their own (docs/trust.md); --untrusted wins.
    _Option(("--trust-store",), {"action": "store_true",
                                 "help": "read project rules only if `pi-rules trust` recorded the project"}, False),
    _Option(("--json",), {"action": "store_true", "help": "machine-readable output"}, False),
    # The ``import`` setting for this run (docs/configuration.md); ``import`` is a keyword.
    _Option(("--import",), {"dest": "import_names", "metavar": "LIST",
                            "help": "importers to run: all, none or a comma list (beats PI_RULES_IMPORT and the files)"},
            None),
)


def global_parser(add_help: bool = True) -> argparse.ArgumentParser:
    """The top-level parser with the global options (and ``--version``), no commands yet.

    Without help it is the first phase of the two-phase parse: it reads the global
    options wherever they stand, before any plugin (or settings file) is loaded. It reads
    them exactly as the full parser will, abbreviations included, so that ``--unt`` is
    untrusted for the settings files as much as for the rules.
    """
    parser = argparse.ArgumentParser(prog="pi-rules", description=DESCRIPTION, epilog=EPILOG, add_help=add_help)
    for option in _GLOBALS:
        parser.add_argument(*option.flags, default=option.default, **option.kwargs)
    parser.add_argument("--version", action="store_true", help="print the installed version and exit")
    return parser


def share_global_options(parser: argparse.ArgumentParser) -> None:
    """Give every command and verb below ``parser`` the global options it does not define
    itself, defaulting to ``SUPPRESS`` (see the module doc)."""
    for sub in _sub_parsers(parser):
        taken = set(sub._option_string_actions)  # noqa: SLF001 - argparse has no public view
        missing = [o for o in _GLOBALS if not taken.intersection(o.flags)]
        if missing:
            group = sub.add_argument_group("global options (also accepted before the command)")
            for option in missing:
                group.add_argument(*option.flags, default=argparse.SUPPRESS, **option.kwargs)
        share_global_options(sub)


def _sub_parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    seen: set[int] = set()
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in action.choices.values():
                if id(sub) not in seen:  # an alias maps to the same parser
                    seen.add(id(sub))
                    yield sub


def print_version(argv: Sequence[str]) -> bool:
    """Answer ``--version`` (with ``--json`` if asked) when the global options carry it:
    before any plugin or the engine is imported, so it costs what Python's start does and
    a broken plugin cannot hide it. ``False`` when the line does not ask."""
    known, _ = global_parser(add_help=False).parse_known_args(argv)
    if not known.version:
        return False
    if known.json:
        from rules_core.safe import safe_json

        sys.stdout.write(safe_json({"name": DISTRIBUTION, "version": version()}) + "\n")
    else:
        print(f"{DISTRIBUTION} {version()}")
    return True


def version() -> str:
    """The installed distribution's version; ``unknown`` when run from a source tree that
    was never installed (no metadata to read).

    Read from the first ``pi_rules`` metadata folder on ``sys.path``, as
    ``importlib.metadata`` would find it, without importing it (about 60 ms: ``email``,
    ``zipfile`` … for one header line)."""
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if dot and suffix in ("dist-info", "egg-info") and _normal(stem.partition("-")[0]) == _normal(DISTRIBUTION):
                found = _metadata_version(os.path.join(entry or ".", name))
                if found is not None:
                    return found
    return "unknown"


_MAX_METADATA = 64 * 1024  # the headers come first; Version is among the first lines


def _normal(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").lower()


def _metadata_version(folder: str) -> str | None:
    for file_name in ("METADATA", "PKG-INFO"):
        path = os.path.join(folder, file_name)
        if not os.path.isfile(path):  # a FIFO would block the open
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                head = handle.read(_MAX_METADATA)  # a folder on sys.path may be anyone's: bounded
        except OSError:
            continue
        for line in head.splitlines():
            if not line.strip():
                break  # the headers end at the first blank line
            if line.startswith("Version:"):
                return line[len("Version:"):].strip() or None
    return None
