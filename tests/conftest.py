from __future__ import annotations

import glob
import os
import shutil
import signal
import tempfile

import pytest

pytest_plugins = ["rules_core.rule_tests.pytest_plugin"]

# Hook calls are answered in process (each test counts its own work). A test that builds
# its hook's environment without PI_RULES_* still keeps this run's own runtime folder, so
# a server it starts lives there, and is stopped when the run ends.
_RUNTIME = tempfile.mkdtemp(prefix="pi-rules-test-run-")
os.environ["XDG_RUNTIME_DIR"] = _RUNTIME
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
    shutil.rmtree(_RUNTIME, ignore_errors=True)
