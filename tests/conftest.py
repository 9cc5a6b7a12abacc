from __future__ import annotations

import os
import shutil
import sys
from typing import Iterator

import pytest

import session_guard

pytest_plugins = ["rules_core.rule_tests.pytest_plugin"]

# HOME, the XDG folders and the runtime folder of this run, before any test reads them
# (tests/session_guard.py). Hook calls are answered in process (each test counts its own
# work). A test that builds its hook's environment without PI_RULES_* must keep
# PI_RULES_HOOK_SERVER (suite_helpers.hook_env), or stop the server its hook starts: the
# check after every test fails it otherwise.
_BEFORE = session_guard.snapshot()
_BASE = session_guard.start()
session_guard.install_audit()
os.environ["PI_RULES_HOOK_SERVER"] = "off"


@pytest.fixture(autouse=True)
def _no_hook_server_outlives_its_test() -> Iterator[None]:
    """A test that starts a hook server (directly, or through a hook process that finds
    the server switched on) stops it: one left running holds its runtime folder for the
    server's idle time (600 s) after the run. New processes only are looked at."""
    before = session_guard.processes()
    yield
    started = session_guard.hook_servers(session_guard.processes() - before)
    left = session_guard.settled(started, wait=5.0)  # one on its way out is not a leak
    if left:
        session_guard.stop_hook_servers(left)  # the next test starts clean
        pytest.fail(f"this test left hook servers running (pid: socket): {left}", pytrace=False)


@pytest.fixture(autouse=True)
def _fresh_glob_cache_under_mutmut() -> None:
    """Under mutmut (docs/mutation.md) every mutant's tests run in a process forked from the
    one that ran the whole suite first, so the glob compile cache there already holds every
    pattern compiled right: a mutant of the compiler would never run, and the stats would
    tie only the first test of each pattern to it. Each test starts with an empty cache."""
    if "MUTANT_UNDER_TEST" in os.environ and (globs := sys.modules.get("rules_core.globs.matching")):
        globs._compile.cache_clear()
    if "MUTANT_UNDER_TEST" in os.environ and (cont := sys.modules.get("rules_importers.continue_rules")):
        cont._seen.clear()  # Continue's regex verdicts by file and its compiled patterns
        cont._compiled.cache_clear()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/golden/ from this run (same as PI_RULES_UPDATE_GOLDEN=1)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-goldens"):
        os.environ["PI_RULES_UPDATE_GOLDEN"] = "1"


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    # Each test stops its own servers (checked above); this catches one a failed test left.
    session_guard.stop_hook_servers(session_guard.hook_servers())
    shutil.rmtree(_BASE, ignore_errors=True)
    if session_guard.caught:
        # A test of this run wrote where no test may (the real home, /nonexistent).
        print(f"\nFAILED: tests wrote outside their folders: {sorted(set(session_guard.caught))[:20]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # type: ignore[attr-defined]
    changed = session_guard.written(_BEFORE, session_guard.snapshot())
    if changed:
        print(f"\nwarning: changed during this run (by it, a child, or another process): {changed[:10]}")
