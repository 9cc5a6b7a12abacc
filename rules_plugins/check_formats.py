"""The ``check-formats`` plugin: ``pi-rules check --format github`` and ``--format sarif``.

``github`` prints one GitHub Actions workflow command per error (``::error``) and per
warning (``::warning``), which the runner turns into an annotation; ``sarif`` prints a
SARIF 2.1.0 log for code scanning, errors at level ``error`` and warnings at level
``warning``. Each carries its stable kind or code (the annotation's title, the SARIF
``ruleId``). Messages and paths come from untrusted rule files: the github escaping keeps
every entry one command line (nothing in a message can start another), and the SARIF
log is JSON. A path that is not absolute names no file (``env-value`` names a variable):
its annotation has no ``file``, its SARIF result a logical location instead. Paths are
relative to ``annotation_root`` (``GITHUB_WORKSPACE``, else the git root, else the working
directory), lines and columns are the warning's own (docs/lint.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import quote

from rules_core import hookimpl
from rules_core.model import Discovery, OutputFormat
from rules_core.safe import safe_json, safe_line

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

# The rule table's short descriptions (docs/format.md, "Errors"); a plugin's own kind
# gets a generic one.
KIND_SUMMARIES: Mapping[str, str] = {
    "yaml-syntax": "The frontmatter is not valid YAML.",
    "missing-frontmatter": "The file does not start with '---' frontmatter.",
    "unknown-key": "The frontmatter has a key the schema does not know.",
    "invalid-version": "'version' is absent or not the integer 1.",
    "missing-description": "'description' is absent or blank.",
    "invalid-value": "A key has a value of the wrong type, or a pattern that cannot compile.",
    "match-without-globs": "'match' is given without non-empty 'globs'.",
    "no-activation-condition": "The rule has no condition that can activate it.",
    "read-failure": "The rule file cannot be read.",
    "source-unreadable": "A rules directory cannot be listed, or a source plugin failed.",
}
# The warning table's short descriptions (docs/lint.md); a plugin's own code gets a generic one.
CODE_SUMMARIES: Mapping[str, str] = {
    "cwd-only": "A tool's rules exist in an ancestor but are read from the working directory only.",
    "invisible-characters": "A rule holds characters a reader cannot see but a model reads.",
    "budget-overflow": "The always-on rules need more tokens together than the budget.",
    "env-value": "An environment variable is read differently from how it is written, or not at all.",
    "dead-glob": "A glob matches no file in the repository.",
    "duplicate-body": "The same rule text is in more than one rule file.",
    "ignored-key": "A key the file's own tool ignores.",
    "ignored-file": "A file the tool the folder belongs to does not read.",
    "size-cap": "A file over its tool's documented size cap.",
    "glob-dialect": "A glob means something else in its tool's matcher than in picomatch.",
    "invalid-utf8": "A file holds invalid UTF-8; it loads with U+FFFD, as its tool reads it.",
    "lint-failed": "A lint check failed; some warnings may be missing.",
}


@hookimpl
def pi_rules_output_formats() -> Sequence[OutputFormat]:
    return (
        OutputFormat("github", "check", "GitHub Actions annotations, one per error and warning", render_github),
        OutputFormat("sarif", "check", "a SARIF 2.1.0 log for code scanning", render_sarif),
    )


def render_github(data: Mapping[str, Any]) -> str:
    """One workflow command per entry: ``::warning file=…,line=…,col=…,title=…::message``
    (GitHub's "Workflow commands for GitHub Actions", "Setting a warning message"). The
    runner resolves ``file`` against the repository's root (``GITHUB_WORKSPACE``), not the
    step's working directory, so paths are relative to ``annotation_root``."""
    discovery: Discovery = data["discovery"]
    root = annotation_root(data)
    lines = []
    for level, code, path, message, line, column in _entries(discovery):
        title = f"title={_property('pi-rules ' + code)}"
        if not os.path.isabs(path):  # a variable, not a file: the message names it
            lines.append(f"::{level} {title}::{_data(path + ': ' + message)}\n")
            continue
        relative = _relative(path, root)
        file = relative if relative is not None else os.path.abspath(path)
        # line=1 without a line of its own still anchors the annotation to the file.
        where = f"line={line or 1}" + (f",col={column}" if line and column else "")
        lines.append(f"::{level} file={_property(file)},{where},{title}::{_data(message)}\n")
    return "".join(lines)


def annotation_root(data: Mapping[str, Any]) -> str:
    """What paths are relative to: ``GITHUB_WORKSPACE`` (the checkout GitHub resolves an
    annotation's ``file`` against) when it is set and holds the working directory, else
    the git root, else the working directory."""
    cwd = os.path.abspath(data["cwd"])
    workspace = (data.get("env") or {}).get("GITHUB_WORKSPACE", "")
    if workspace and os.path.isabs(workspace):
        workspace = os.path.normpath(workspace)
        if cwd == workspace or cwd.startswith(workspace.rstrip(os.sep) + os.sep):
            return workspace
    return os.path.abspath(data.get("git_root") or cwd)


def _entries(discovery: Discovery) -> list[tuple[str, str, str, str, int | None, int | None]]:
    entries: list[tuple[str, str, str, str, int | None, int | None]]
    entries = [("error", e.kind, e.path, e.message, e.line, e.column) for e in discovery.errors]
    entries += [("warning", w.code, w.path, w.message, w.line, w.column) for w in discovery.warnings]
    return entries


def _data(text: str) -> str:
    """@actions/core's escapeData, then every control character the runner would keep
    raw (an ESC sequence colours the log) escaped the way the text output does."""
    return safe_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    """@actions/core's escapeProperty: ``:`` and ``,`` would end the value early."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_sarif(data: Mapping[str, Any]) -> str:
    discovery: Discovery = data["discovery"]
    root = annotation_root(data)
    rules: dict[str, tuple[int, str]] = {}  # code -> (index, level of its first entry)
    results = []
    for level, code, path, message, line, column in _entries(discovery):
        index, _ = rules.setdefault(code, (len(rules), level))
        results.append({
            "ruleId": code,
            "ruleIndex": index,
            "level": level,
            "message": {"text": message},
            "locations": [_location(path, root, line, column)],
        })
    driver = {
        "name": "pi-rules",
        "version": _version(),
        "rules": [
            {"id": code, "shortDescription": {"text": _summary(code, level)}} for code, (_, level) in rules.items()
        ],
    }
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "originalUriBaseIds": {"SRCROOT": {"uri": _file_uri(root).rstrip("/") + "/"}},
            "results": results,
        }],
    }
    # safe_json is json.dumps(indent=2, ensure_ascii=False) plus \u escapes for what no
    # UTF-8 stdout can carry (lone surrogates from non-UTF-8 names) or a terminal shows raw.
    return safe_json(log) + "\n"


def _location(path: str, root: str, line: int | None, column: int | None) -> dict[str, Any]:
    if not os.path.isabs(path):  # a variable (env-value), not a file
        return {"logicalLocations": [{"name": path, "kind": "variable"}]}
    relative = _relative(path, root)
    if relative is not None:
        artifact = {"uri": quote(os.fsencode(relative), safe="/"), "uriBaseId": "SRCROOT"}
    else:
        artifact = {"uri": _file_uri(path)}
    # Code scanning needs a region to place a result: line 1 for the file as a whole.
    region: dict[str, int] = {"startLine": line or 1}
    if line and column:
        region["startColumn"] = column
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _summary(code: str, level: str) -> str:
    if level == "error":
        return KIND_SUMMARIES.get(code, f"A rule file error ({code}).")
    return CODE_SUMMARIES.get(code, f"A rule file warning ({code}).")


def _relative(path: str, base: str) -> str | None:
    """The ``base``-relative ``/`` path of a file strictly inside ``base``, else ``None``."""
    root = os.path.abspath(base).rstrip(os.sep) + os.sep
    if path.startswith(root) and len(path) > len(root):
        return path[len(root):].replace(os.sep, "/")
    return None


def _file_uri(path: str) -> str:
    # as_uri percent-encodes the file system bytes, so a non-UTF-8 name round-trips.
    return Path(os.path.abspath(path)).as_uri()


def _version() -> str:
    from importlib import metadata  # here: importing it costs every process, not only SARIF's

    try:
        return metadata.version("pi-rules")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0"
