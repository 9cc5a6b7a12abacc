"""Installing an example distribution from examples/ for real, offline, into a folder of
its own (tests/hosts/test_example_plugin.py, test_rule_packs.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def install_example(example: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install --target`` of ``example`` (built in a copy so the checkout stays
    clean, no index, no build isolation); the site folder to put on ``PYTHONPATH``."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build") / "src"
    shutil.copytree(example, build)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(build)],
        check=False, capture_output=True, text=True,
    )
    assert done.returncode == 0, f"pip could not install {example.name}:\n{done.stderr}"
    return target
