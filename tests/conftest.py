from __future__ import annotations

import glob
import os
import shutil
import signal

import pytest

import session_guard

pytest_plugins = ["rules_core.rule_tests.pytest_plugin"]

# HOME, the XDG folders and the runtime folder of this run, before any test reads them
# (tests/session_guard.py). Hook calls are answered in process (each test counts its own
# work). A test that builds its hook's environment without PI_RULES_* still keeps this
# run's own runtime folder, so a server it starts lives there, and is stopped at the end.
_BEFORE = session_guard.snapshot()
_BASE = session_guard.start()
session_guard.install_audit()
_RUNTIME = os.environ["XDG_RUNTIME_DIR"]
os.environ["PI_RULES_HOOK_SERVER"] = "off"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/golden/ from this run (same as PI_RULES_UPDATE_GOLDEN=1)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-goldens"):
        os.environ["PI_RULES_UPDATE_GOLDEN"] = "1"


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    for pid_file in glob.glob(os.path.join(_RUNTIME, "pi-rules", "*.pid")):
        try:
            with open(pid_file) as text:
                os.kill(int(text.read()), signal.SIGTERM)  # the server then removes its socket
        except (OSError, ValueError):
            pass
    shutil.rmtree(_BASE, ignore_errors=True)
    if session_guard.caught:
        # A test of this run wrote where no test may (the real home, /nonexistent).
        print(f"\nFAILED: tests wrote outside their folders: {sorted(set(session_guard.caught))[:20]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # type: ignore[attr-defined]
    changed = session_guard.written(_BEFORE, session_guard.snapshot())
    if changed:
        print(f"\nwarning: changed during this run (by it, a child, or another process): {changed[:10]}")
