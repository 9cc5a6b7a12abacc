"""The ``lint-env`` plugin: ``env-value`` warnings (docs/lint.md).

Environment variables are read leniently on purpose — ``PI_RULES_MAX_TOKENS`` exactly as
JavaScript's ``parseInt`` (CONTRACT §2), the time budgets falling back to their default
so a typo cannot switch a protection off — and a lenient reading is a silent one:
``PI_RULES_MAX_TOKENS=20k`` is a budget of 20. This plugin says so, with the value to
write, and names ``PI_RULES_*`` variables nothing reads (a misspelt name does nothing).
A warning names the variable where other warnings name a file.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

from rules_core import hookimpl
from rules_core.lint_context import LintContext
from rules_core.model import Discovery, RuleWarning
from rules_core.deadline import DEFAULT_MS as DEADLINE_DEFAULT_MS
from rules_core.select import js_parse_int, parse_max_tokens
from rules_core.stream.budget import DEFAULT_BUDGET_MS

CODE = "env-value"
PREFIX = "PI_RULES_"
# Every variable pi-rules or a shipped host reads (grep the code for PI_RULES_): where
# each is read, so a new one is added here in the same change.
KNOWN: Mapping[str, str] = {
    "PI_RULES_MAX_TOKENS": "rules_hosts/session/facts.py",
    "PI_RULES_IMPORT": "rules_core/discovery/imports.py",
    "PI_RULES_ATTACH": "rules_hosts/session/attach.py",
    "PI_RULES_OVERFLOW": "rules_core/settings/load.py",
    "PI_RULES_DISABLE_PLUGINS": "rules_core/plugins/manager.py",
    "PI_RULES_DEBUG": "rules_core/plugins/manager.py",
    "PI_RULES_DEADLINE_MS": "rules_core/deadline.py",
    "PI_RULES_STREAM_BUDGET_MS": "rules_core/stream/budget.py",
    "PI_RULES_LOCK_WAIT_MS": "rules_hosts/claude_code/state.py",
    "PI_RULES_CACHE": "rules_core/discovery/persistent.py",
    "PI_RULES_COMMAND": "hosts/pi/index.ts",
    "PI_RULES_HOOK_SERVER": "rules_hosts/cli/hook_client.py",
    "PI_RULES_HOOK_SERVER_IDLE": "rules_hosts/hook_server/server.py",
    "PI_RULES_EVAL_CLAUDE": "rules_hosts/eval/runners.py",
    "PI_RULES_EVAL_CLAUDE_ARGS": "rules_hosts/eval/runners.py",
    "PI_RULES_SECTION": "rules_hosts/eval/runners.py",
    "PI_RULES_EVAL_PI": "rules_hosts/eval/pi_runner.py",
    "PI_RULES_EVAL_PI_ARGS": "rules_hosts/eval/pi_runner.py",
    "PI_RULES_EVAL_PI_EXTENSION": "rules_hosts/eval/pi_runner.py",
    "PI_RULES_EVAL_PI_MODELS": "rules_hosts/eval/pi_runner.py",
}
# The test suite's own knobs: never suggested, never warned about (a developer running
# `check` with them set is not wrong).
SUITE = frozenset({"PI_RULES_UPDATE_GOLDEN", "PI_RULES_FUZZ_SCALE", "PI_RULES_FUZZ_SUBJECT",
                   "PI_RULES_FUZZ_MATCH_SECONDS", "PI_RULES_MAP_SCREENSHOT", "PI_RULES_TEST_CLAUDE_DUMP"})
# Close to our prefix: a slip in the prefix (PI_RULE_, PIRULES_, lower case) reads nothing too.
_OURS = re.compile(r"pi_?rules?_", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)")
_GROUPED = re.compile(r"[0-9]{1,3}(?:[,_ '][0-9]{3})+")
_SUFFIXED = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([kK])")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+]?[0-9]+)?")
_OFF_WORDS = frozenset({"0", "false", "no", "n", "f", "none", "disable", "disabled", "off"})


@hookimpl
def pi_rules_lint(discovery: Discovery, context: LintContext) -> Sequence[RuleWarning]:
    found = []
    for name in sorted(context.env):
        value = context.env[name]
        if name in KNOWN:
            problem = READERS.get(name, _fine)(name, value)
        elif _OURS.match(name) and name not in SUITE:
            problem = _unknown(name)
        else:
            continue
        if problem:
            found.append(RuleWarning(CODE, name, problem, "lint-env"))
    return found


def _max_tokens(name: str, value: str) -> str | None:
    """As written vs as read: ``parseInt`` takes the leading integer and ignores the rest."""
    text = value.strip()
    if not text:
        return None  # set but empty: the default, as unset
    read = js_parse_int(value)
    budget = parse_max_tokens(value)
    if read is not None and read > 0 and _INTEGER.fullmatch(text):
        return None
    meant = _intended(text)
    fix = f"write {name}={meant}" if meant else f"write a whole number of tokens, e.g. {name}=8000"
    if read is None:
        why = "is not a number"
    elif read <= 0:
        why = f"is read as {read}, not a positive number"
    else:
        return (f"{name}={value!r} is read as {budget}: the value is read like JavaScript's parseInt, which "
                f"stops at the first character that is not a digit (docs/format.md, \"Selection and the "
                f"section\") — {fix}")
    return f"{name}={value!r} {why}, so the default budget of {budget} applies — {fix}"


def _intended(text: str) -> int | None:
    """What ``20k``, ``8,000``, ``1e4`` or ``3000.0`` most likely meant, if anything."""
    if _GROUPED.fullmatch(text):
        return int(re.sub(r"[,_ ']", "", text))
    match = _SUFFIXED.fullmatch(text)
    number = float(match.group(1)) * 1000 if match else float(text) if _NUMBER.fullmatch(text) else None
    if number is None or number <= 0 or number != int(number):
        return None
    return int(number)


def _milliseconds(default: str, *, zero: str) -> Callable[[str, str], str | None]:
    """``PI_RULES_DEADLINE_MS`` and ``PI_RULES_STREAM_BUDGET_MS``: digits, or ``0``/``off``/
    ``none``; anything else is the default (so a typo never turns the protection off)."""

    def check(name: str, value: str) -> str | None:
        text = value.strip().lower()
        if not text or text in ("0", "off", "none") or (text.isdigit() and int(text) > 0):
            return None
        return (f"{name}={value!r} is not a whole number of milliseconds, so the default of {default} applies "
                f"— write digits only (e.g. {name}=5000 for 5 s), or 0 for {zero}")

    return check


def _lock_wait(name: str, value: str) -> str | None:
    text = value.strip()
    if not text or (text.isdigit() and len(text) <= 9):
        return None
    return (f"{name}={value!r} is not a whole number of milliseconds, so the default wait applies — "
            f"write digits only, or 0 for a single try")


def _attach(name: str, value: str) -> str | None:
    text = value.strip().lower()
    if text in _OFF_WORDS and text != "off":
        return (f"{name}={value!r} is read as on: only 'off' turns mid-run attachment off "
                f"(RULE-SPEC §6) — write {name}=off, or unset it")
    return None


def _debug(name: str, value: str) -> str | None:
    text = value.strip().lower()
    if text in _OFF_WORDS and text != "0":
        return (f"{name}={value!r} is read as on (every hook call is traced to stderr): only 0 or an empty "
                f"value turns tracing off — write {name}=0, or unset it")
    return None


def _fine(name: str, value: str) -> str | None:
    return None  # read as a name list (checked where it is read) or passed through


def _unknown(name: str) -> str:
    import difflib  # only when there is a name to suggest for: every command loads this plugin
    # Compared without the prefix every name shares, which would make anything look close.
    tails = {known[len(PREFIX):]: known for known in KNOWN}
    tail = name[_OURS.match(name).end():].upper() if _OURS.match(name) else name.upper()
    close = difflib.get_close_matches(tail, list(tails), n=1, cutoff=0.6)
    hint = f"did you mean {tails[close[0]]}?" if close else f"pi-rules reads {', '.join(sorted(KNOWN))}"
    return f"{name} is not a variable pi-rules reads, so it changes nothing — {hint}"


READERS: Mapping[str, Callable[[str, str], str | None]] = {
    "PI_RULES_MAX_TOKENS": _max_tokens,
    "PI_RULES_DEADLINE_MS": _milliseconds(f"{DEADLINE_DEFAULT_MS} ms", zero="no time limit"),
    "PI_RULES_STREAM_BUDGET_MS": _milliseconds(f"{DEFAULT_BUDGET_MS} ms", zero="no call budget"),
    "PI_RULES_LOCK_WAIT_MS": _lock_wait,
    "PI_RULES_ATTACH": _attach,
    "PI_RULES_DEBUG": _debug,
}
