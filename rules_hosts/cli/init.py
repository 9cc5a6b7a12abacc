"""``pi-rules init``: a project's first ``.pi/rules/``, a commented ``.pi/rules.toml`` and
``.pi/rules.test.yaml`` with passing cases for the example rule.

It never overwrites: a file that exists (a symbolic link included, dangling or not) is
skipped and named, and the example rule is also skipped when ``.pi/rules/`` already holds
rules, so running ``init`` in a project that has its own rules adds no stray one. The
example passes ``pi-rules check`` and the settings template, uncommented, is valid
(both pinned by tests/hosts/test_cli_conventions.py).
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass
from typing import Any

from rules_core.safe import safe_line

EXAMPLE_RULE = ".pi/rules/example.md"
SETTINGS_FILE = ".pi/rules.toml"
TEST_FILE = ".pi/rules.test.yaml"

# A rule about writing rules: it activates only while the agent touches a rule file
# (match: touched), so it costs nothing elsewhere and is useful where it shows up.
EXAMPLE_RULE_TEXT = """\
---
# Created by `pi-rules init`: an example rule to edit, copy or delete.
# `pi-rules check` lints every rule; `pi-rules explain PATH` shows which rules touching
# PATH activates, and why.
description: How rule files in .pi/rules are written (example from pi-rules init)
version: 1
# When the rule applies: the agent touches a file matching one of these globs, relative
# to the project root. Quote every pattern; a "!pattern" entry excludes.
globs: [".pi/rules/**"]
# touched: files the agent reads or edits; exists: any file in the repository;
# both (the default): either.
match: touched
# inform (the default), recommend (adds "Level: SHOULD") or enforce ("Level: MUST").
enforcement: recommend
---
Rule files in `.pi/rules/` are markdown with YAML frontmatter. Each needs a one-line
`description`, `version: 1`, and something that activates it: `globs` (a list of quoted
patterns, such as `globs: ["src/**/*.ts"]`), `tools`, `model`, `branch`, or
`alwaysApply: true`. Keep a rule short and about one topic; add `load: on-demand` to a
long one so the agent sees its description and reads it when needed. Run
`pi-rules check` after editing a rule.
"""

# Every key of CONTRACT §6, commented out: the file documents itself and changes nothing
# until a team uncomments a line. Uncommented as a whole, it is valid (a test says so).
SETTINGS_TEXT = """\
# pi-rules settings for this project (created by `pi-rules init`). Every key is optional:
# uncomment a line to set it. Read only when the project is trusted. Precedence, highest
# first: command-line option, environment variable, this file, the user file
# ($XDG_CONFIG_HOME/pi-rules/config.toml), the default. `pi-rules config` prints the
# effective settings and where each one came from.

# Token budget of the rules section (as PI_RULES_MAX_TOKENS; default 2000).
# max_tokens = 4000

# Pinned rules that do not fit the budget: "drop" them (the default) or list them in the
# on-demand "index", so the agent knows they exist and can fetch them.
# overflow = "index"

# Which importers read other agents' rule files: "all" (the default), "none", or a list
# of names (`pi-rules plugins` lists them).
# import = ["copilot", "claude", "cursor"]

# Rules that never load: rule ids or reference paths, globs allowed.
# disable = ["legacy-style", "drafts/**"]

# Append rules that a tool result activates to that result (as PI_RULES_ATTACH).
# attach = true

# [plugins]
# Plugins never loaded, as `-p no:NAME` does.
# block = ["stream"]
# Plugins `check` requires: it fails, naming the distribution, when one is missing.
# required = ["pi-rules-rulebook"]

# [lint]
# Warning codes `check` does not report.
# ignore = ["dead-glob"]

# Any key above, for one host only (pi, claude-code): a larger budget under Claude Code.
# [hosts.claude-code]
# max_tokens = 8000
"""

# The example rule's own tests, so the first `pi-rules test` after `init` passes (issue 34)
# and shows the format; written only beside the example rule it tests.
TEST_TEXT = """\
# Rule tests (created by `pi-rules init`): `pi-rules test` runs every case and says
# PASS or FAIL; docs/testing-rules.md lists every fact and expectation. Edit them as
# your rules change, and add a case for each rule you write.
- name: the example rule applies while the agent edits a rule file
  touched: .pi/rules/example.md
  expect:
    active: [example]

- name: the example rule stays out of application code
  touched: src/app.py
  expect:
    not_active: [example]
"""

_FILES = ((EXAMPLE_RULE, EXAMPLE_RULE_TEXT), (SETTINGS_FILE, SETTINGS_TEXT), (TEST_FILE, TEST_TEXT))


@dataclass(frozen=True)
class InitResult:
    created: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (path, why)
    failed: tuple[tuple[str, str], ...]  # (path, the system's reason)


def init_project(cwd: str) -> InitResult:
    """Create the files ``init`` promises below ``cwd``; paths in the result are
    ``/``-separated and relative to ``cwd``."""
    created: list[str] = []
    skipped: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    from rules_core.discovery.containment import enclosing_project, write_target

    bound = enclosing_project(cwd)
    for relative, text in _FILES:
        target = os.path.join(cwd, *relative.split("/"))
        why = _reason_to_skip(cwd, relative, target)
        if why is None and relative == TEST_FILE and EXAMPLE_RULE not in created:
            why = "its cases test the example rule, which was not created"
        if why is not None:
            skipped.append((relative, why))
            continue
        try:
            # A `.pi` link the repository ships (into your global rules) is never written through.
            _create(write_target(target, bound), text)
        except FileExistsError:
            skipped.append((relative, "it already exists"))
        except OSError as exc:
            failed.append((relative, exc.strerror or str(exc)))
        else:
            created.append(relative)
    return InitResult(tuple(created), tuple(skipped), tuple(failed))


def _create(target: str, text: str) -> None:
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:  # a file stands where the folder goes: not "already exists"
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), folder) from None
    # "x": exclusive create, so a file that appeared since the check is kept too.
    with open(target, "x", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def _reason_to_skip(cwd: str, relative: str, target: str) -> str | None:
    if os.path.lexists(target):
        return "it already exists"
    if relative == EXAMPLE_RULE and _has_rules(os.path.join(cwd, ".pi", "rules")):
        return ".pi/rules/ already has rules"
    return None


def _has_rules(folder: str) -> bool:
    for _, _, names in os.walk(folder):
        if any(name.endswith(".md") for name in names):
            return True
    return False


def run_init(command: Any) -> int:
    """The ``init`` command: exit 0 when everything was created or rightly skipped, 1
    when a file could not be written."""
    result = init_project(command.cwd)
    if command.args.json:
        command.print_json({
            "created": list(result.created),
            "skipped": [{"path": path, "reason": why} for path, why in result.skipped],
            "failed": [{"path": path, "reason": why} for path, why in result.failed],
        })
    else:
        for path in result.created:
            print(f"created {path}")
        for path, why in result.skipped:
            print(f"skipped {path}: {why}; left as it is")
        for path, why in result.failed:
            print(f"pi-rules init: cannot create {path}: {safe_line(why)}", file=sys.stderr)
        if EXAMPLE_RULE in result.created:
            tests = " and `pi-rules test`" if TEST_FILE in result.created else ""
            print(f"next: edit {EXAMPLE_RULE} (or write your own rules beside it), then run `pi-rules check`{tests}")
    return 1 if result.failed else 0
