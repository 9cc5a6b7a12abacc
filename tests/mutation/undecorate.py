"""Let mutmut reach pluggy hook implementations (scratch copies only, never the project).

mutmut 3 leaves every decorated function unmutated, and every matcher and importer entry
point is ``@hookimpl``-decorated. This rewrites ``@hookimpl`` / ``@hookimpl(...)`` above a
top-level ``def NAME`` into ``NAME = hookimpl(NAME)`` after the module body: the same
marker on the same function (pluggy reads the marker attribute, and mutmut's trampoline
keeps the signature pluggy inspects), now visible to mutmut. Usage:
``python tests/mutation/undecorate.py FILE...`` (rewrites the files in place).

A method (``SimpleFormat``'s hooks, an importer's instance is the plugin) is marked the same
way after the module body: ``hookimpl(Class.NAME)`` sets the marker on the function the
class holds, which every bound method (``FORMAT.pi_rules_sources``) reads through.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_DECORATED = re.compile(r"^(@hookimpl(?:\([^\n]*\))?)\n(def (\w+)\()", re.MULTILINE)
_METHOD = re.compile(r"^    (@hookimpl(?:\([^\n]*\))?)\n(    def (\w+)\()", re.MULTILINE)
_CLASS = re.compile(r"^class (\w+)", re.MULTILINE)


def undecorate(text: str) -> str:
    tail: list[str] = []

    def _move(found: re.Match[str]) -> str:
        tail.append(f"{found.group(3)} = {found.group(1)[1:]}({found.group(3)})")
        return found.group(2)

    def _mark(found: re.Match[str]) -> str:
        owner = _CLASS.findall(found.string, 0, found.start())[-1]
        tail.append(f"{found.group(1)[1:]}({owner}.{found.group(3)})")
        return found.group(2)

    body = _METHOD.sub(_mark, _DECORATED.sub(_move, text))
    if not tail:
        return text
    return body.rstrip("\n") + "\n\n\n# moved here by tests/mutation/undecorate.py\n" + "\n".join(tail) + "\n"


def main(paths: list[str]) -> None:
    for path in map(Path, paths):
        path.write_text(undecorate(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
