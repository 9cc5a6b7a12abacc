"""A real third-party plugin, installed for real: examples/pi-rules-rulebook.

The example is pip-installed (no dependencies, no build isolation) into a temporary
target directory that is put on PYTHONPATH, which is how site-packages works: its
entry point in group ``pi_rules`` is then discovered by ``importlib.metadata`` exactly
as after ``pip install`` into a venv.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from example_installs import install_example
from rules_core.rule_tests.pytest_plugin import make_rules
from suite_helpers import cli_process

ROOT = Path(__file__).parent.parent.parent
EXAMPLE = ROOT / "examples" / "pi-rules-rulebook"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    target = install_example(EXAMPLE, tmp_path_factory)
    assert list(target.glob("pi_rules_rulebook-*.dist-info"))
    return target


def cli(site: Path, project: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")} | extra_env
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    env["HOME"] = str(project.parent / "home")
    return cli_process("--cwd", str(project), *args, env=env)


@pytest.fixture
def project(tmp_path) -> Path:
    return make_rules(
        tmp_path / "project",
        {
            ".rulebook/handlers.rule": "description: Keep handlers small\napplies-to: src/api/**\n\nUnder 50 lines.\n",
            ".rulebook/always.rule": "description: Be kind\n\nWrite friendly messages.\n",
            ".pi/rules/native.md": "---\ndescription: Native\nversion: 1\nglobs: [src/**]\nmatch: touched\n---\nNative body.\n",
        },
    )


def test_installed_plugin_is_listed_with_its_distribution(installed, project):
    done = cli(installed, project, "--json", "plugins")
    plugins = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
    assert plugins["rulebook"]["origin"] == "pi-rules-rulebook 0.1.0"
    assert plugins["rulebook"]["hooks"] == ["pi_rules_parse", "pi_rules_sources"]


def test_installed_plugin_rules_appear_in_list_and_render(installed, project):
    listed = json.loads(cli(installed, project, "--json", "list").stdout)
    assert [(r["id"], r["plugin"], r["relativePath"]) for r in listed["rules"]] == [
        ("native", "native", "native.md"),
        ("always", "rulebook", "always.rule"),
        ("handlers", "rulebook", "handlers.rule"),
    ]
    section = cli(installed, project, "render", "--touched", "src/api/users.ts", "--no-branch").stdout
    assert "## handlers\n> Triggered by: touched src/api/users.ts\n\nUnder 50 lines." in section
    assert "## always\n\nWrite friendly messages." in section


def test_blocking_the_installed_plugin_removes_its_rules(installed, project):
    listed = json.loads(cli(installed, project, "-p", "no:rulebook", "--json", "list").stdout)
    assert [r["id"] for r in listed["rules"]] == ["native"]
    section = cli(installed, project, "-p", "no:rulebook", "render", "--touched", "src/api/x.ts", "--no-branch").stdout
    assert "handlers" not in section and "## native" in section


def test_disable_env_blocks_the_installed_plugin_before_import(installed, project):
    listed = json.loads(cli(installed, project, "--json", "list", PI_RULES_DISABLE_PLUGINS="rulebook").stdout)
    assert [r["id"] for r in listed["rules"]] == ["native"]
    plugins = json.loads(cli(installed, project, "--json", "plugins", PI_RULES_DISABLE_PLUGINS="rulebook").stdout)
    assert "rulebook" not in {p["name"] for p in plugins["plugins"]}
