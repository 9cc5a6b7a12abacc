"""The golden refresh switch is explicit: only ``PI_RULES_UPDATE_GOLDEN=1`` (or
``--update-goldens``) rewrites; ``=0`` and any other value compare, so a changed golden fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from golden_files import check_golden

TESTS = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("value", ["0", "", "no", "true", " 1"])
def test_a_changed_golden_fails_unless_the_switch_is_exactly_one(tmp_path, monkeypatch, value):
    (tmp_path / "out.txt").write_text("before\n", encoding="utf-8")
    monkeypatch.setenv("PI_RULES_UPDATE_GOLDEN", value)
    with pytest.raises(AssertionError, match="out.txt differs"):
        check_golden("out.txt", "after\n", folder=tmp_path)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "before\n"


def test_switch_one_rewrites_the_golden(tmp_path, monkeypatch):
    (tmp_path / "out.txt").write_text("before\n", encoding="utf-8")
    monkeypatch.setenv("PI_RULES_UPDATE_GOLDEN", "1")
    check_golden("out.txt", "after\n", folder=tmp_path)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "after\n"


def test_missing_golden_names_the_refresh_command(tmp_path, monkeypatch):
    monkeypatch.delenv("PI_RULES_UPDATE_GOLDEN", raising=False)
    with pytest.raises(AssertionError, match="--update-goldens"):
        check_golden("absent.txt", "x", folder=tmp_path)


def test_no_test_module_reads_the_switch_itself():
    """One helper, one switch: every other reader would be a second rule for the switch."""
    readers = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py")
               if "os.environ.get(\"PI_RULES_UPDATE_GOLDEN\"" in p.read_text(encoding="utf-8")]
    assert readers == []


def test_update_goldens_option_is_registered():
    """``--update-goldens`` is a real pytest option of this suite (not an unknown argument)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=TESTS.parent,
                          capture_output=True, text=True, timeout=120)
    assert "--update-goldens" in done.stdout
