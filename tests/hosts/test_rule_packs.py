"""Rule packs (docs/packs.md): rule folders shipped by installed distributions.

The example pack (examples/pi-rules-pack-python) is pip-installed offline into a temporary
target directory put on PYTHONPATH, as tests/hosts/test_example_plugin.py installs the
example plugin. The hostile and broken packs are laid out by hand as an installer would
leave them (a package folder and a ``.dist-info`` with ``entry_points.txt``), because pip
would not keep a symbolic link or an entry point naming a missing module. Every check
runs the real ``pi-rules`` in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from importlib_metadata import EntryPoint

from example_installs import install_example
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from rules_plugins.packs import GROUP, pack_plugins
from suite_helpers import cli_process

ROOT = Path(__file__).parent.parent.parent
EXAMPLE = ROOT / "examples" / "pi-rules-pack-python"
PACK = "python-packaging"
PACK_IDS = ["package-init", "pyproject", "setup-py"]  # the example's files, in path order


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    target = install_example(EXAMPLE, tmp_path_factory)
    assert sorted(p.name for p in (target / "pi_rules_pack_python" / "rules").iterdir()) == [
        "package-init.md", "pyproject.md", "setup-py.md",
    ]
    return target


def install_by_hand(site: Path, dist: str, entry_points: dict[str, str], files: dict[str, str]) -> Path:
    """An installed distribution as an installer leaves it: its files and a .dist-info."""
    make_rules(site, files)
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    make_rules(info, {
        "METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n",
        "entry_points.txt": f"[pi_rules.rules]\n{lines}",
    })
    return site


def cli(sites: list[Path], project: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_") and k != "XDG_CONFIG_HOME"}
    env |= extra_env
    env["PYTHONPATH"] = os.pathsep.join([*map(str, sites), str(ROOT)])
    env["HOME"] = str(project.parent / "home")
    return cli_process("--cwd", str(project), *args, env=env)


def listed(sites: list[Path], project: Path, *args: str, **extra_env: str) -> dict[str, Any]:
    done = cli(sites, project, *args, "--json", "list", **extra_env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["id"], r["plugin"], r["source"]) for r in data["rules"]]


@pytest.fixture
def project(tmp_path) -> Path:
    make_rules(tmp_path / "home" / ".pi" / "agent" / "rules", {"pyproject.md": rule_text("Global.", alwaysApply=True)})
    return make_rules(tmp_path / "project", {
        ".pi/rules/pyproject.md": rule_text("Project.", globs=["pyproject.toml"]),
        ".cursor/rules/style.mdc": "---\ndescription: Style\nalwaysApply: true\n---\nImported.\n",
    })


def test_pack_loads_after_project_rules_and_before_global_ones(installed, project):
    data = listed([installed], project)
    assert rows(data) == [
        ("pyproject", "native", "project"),
        ("style", "cursor", "project"),
        ("package-init", PACK, "global"),
        ("pyproject-2", PACK, "global"),  # the project's `pyproject` came first
        ("setup-py", PACK, "global"),
        ("pyproject-3", "global", "global"),
    ]
    assert data["errors"] == []
    folder = installed / "pi_rules_pack_python" / "rules"
    assert data["rules"][3]["path"] == str(folder / "pyproject.md")
    assert data["rules"][3]["relativePath"] == "pyproject.md"


def test_pack_rule_activates_on_a_path_relative_to_the_working_directory(installed, project):
    section = cli([installed], project, "render", "--touched", "pkg/sub/__init__.py", "--no-branch").stdout
    assert "## package-init\n> Triggered by: touched pkg/sub/__init__.py\n\n- An `__init__.py` runs" in section
    assert "## setup-py" not in section


def test_untrusted_project_still_gets_the_pack(installed, project):
    data = listed([installed], project, "--untrusted")
    assert rows(data) == [
        ("package-init", PACK, "global"), ("pyproject", PACK, "global"), ("setup-py", PACK, "global"),
        ("pyproject-2", "global", "global"),
    ]


def test_plugins_lists_the_pack_with_its_distribution_and_folder(installed, project):
    folder = installed / "pi_rules_pack_python" / "rules"
    data = json.loads(cli([installed], project, "--json", "plugins").stdout)
    plugins = {p["name"]: p for p in data["plugins"]}
    assert plugins[PACK] == {"name": PACK, "origin": "pi-rules-pack-python 0.1.0", "hooks": ["pi_rules_sources"]}
    assert data["packs"] == [
        {"name": PACK, "entryPoint": "pi_rules_pack_python:rules", "folder": str(folder), "error": None},
    ]
    text = cli([installed], project, "plugins").stdout
    assert f"\n  {PACK}  pi_rules_pack_python:rules  {folder}\n" in text


@pytest.mark.parametrize("how", [("-p", f"no:{PACK}"), ("-p", "no:packs")])
def test_blocking_the_pack_on_the_command_line_removes_it(installed, project, how):
    data = listed([installed], project, *how)
    assert [r["plugin"] for r in data["rules"]] == ["native", "cursor", "global"]
    plugins = json.loads(cli([installed], project, *how, "--json", "plugins").stdout)
    assert PACK not in {p["name"] for p in plugins["plugins"]} and plugins["packs"] == []


def test_disable_env_blocks_the_pack(installed, project):
    data = listed([installed], project, PI_RULES_DISABLE_PLUGINS=PACK)
    assert PACK not in {r["plugin"] for r in data["rules"]}


def test_user_settings_file_blocks_the_pack_or_disables_one_rule(installed, project):
    config = make_rules(project.parent / "home" / ".config" / "pi-rules", {"config.toml": f'[plugins]\nblock = ["{PACK}"]\n'})
    assert PACK not in {r["plugin"] for r in listed([installed], project)["rules"]}
    (config / "config.toml").write_text('disable = ["setup-py"]\n', encoding="utf-8")
    report = json.loads(cli([installed], project, "--json", "report", "--touched", "setup.py", "--no-branch").stdout)
    [setup] = [r for r in report["rules"] if r["id"] == "setup-py"]
    assert setup["status"] == "inactive" and "disabled in ~/.config/pi-rules/config.toml" in json.dumps(setup)


def test_import_selection_does_not_touch_packs(installed, project):
    data = listed([installed], project, PI_RULES_IMPORT="none")
    assert [r["plugin"] for r in data["rules"]] == ["native", PACK, PACK, PACK, "global"]


def test_a_pack_holds_native_cursor_and_copilot_files(tmp_path, project):
    site = install_by_hand(tmp_path / "site", "mixed-pack", {"mixed": "mixed_pack:rules"}, {
        "mixed_pack/__init__.py": "",
        "mixed_pack/rules/a-native.md": rule_text("Native.", globs=["src/**"]),
        "mixed_pack/rules/b-cursor.mdc": "---\ndescription: Cursor\nglobs: lib/**\n---\nCursor body.\n",
        "mixed_pack/rules/c.instructions.md": "---\napplyTo: 'docs/**'\n---\nCopilot body.\n",
        "mixed_pack/rules/notes.txt": "not a rule",
    })
    data = listed([site], project, PI_RULES_IMPORT="none")
    pack = [r for r in data["rules"] if r["plugin"] == "mixed"]
    assert [(r["id"], r["relativePath"]) for r in pack] == [
        ("a-native", "a-native.md"), ("b-cursor", "b-cursor.mdc"), ("c", "c.instructions.md"),
    ]
    section = cli([site], project, "render", "--touched", "lib/x.py", "--touched", "docs/y.md", "--no-branch").stdout
    assert "## b-cursor\n> Triggered by: touched lib/x.py\n\nCursor body." in section
    assert "## c\n> Triggered by: touched docs/y.md\n\nCopilot body." in section
    assert "## a-native" not in section


def test_a_symlink_out_of_the_pack_folder_is_refused(tmp_path, project):
    site = install_by_hand(tmp_path / "site", "leaky-pack", {"leaky": "leaky_pack:rules"}, {
        "leaky_pack/__init__.py": "",
        "leaky_pack/rules/kept.md": rule_text("Kept.", alwaysApply=True),
        "leaky_pack/rules/real.md": rule_text("Linked inside.", alwaysApply=True),
        "secret.md": rule_text("SECRET outside the pack.", alwaysApply=True),
    })
    rules = site / "leaky_pack" / "rules"
    (rules / "escape.md").symlink_to("../../secret.md")
    (rules / "alias.md").symlink_to("real.md")
    data = listed([site], project)
    assert [r["id"] for r in data["rules"] if r["plugin"] == "leaky"] == ["alias", "kept", "real"]
    [error] = data["errors"]
    assert error["kind"] == "read-failure" and error["path"] == str(rules / "escape.md")
    assert "leads outside the pack folder" in error["message"] and "not read" in error["message"]
    section = cli([site], project, "render", "--no-branch").stdout
    assert "SECRET" not in section and "Linked inside." in section


def test_a_broken_entry_point_is_an_error_naming_it_and_the_fix(tmp_path, project):
    site = install_by_hand(tmp_path / "site", "broken-pack", {
        "broken": "no_such_module:rules", "hollow": "hollow_pack:missing",
    }, {"hollow_pack/__init__.py": ""})
    done = cli([site], project, "--json", "list")
    assert done.returncode == 0 and done.stderr == ""
    data = json.loads(done.stdout)
    assert [r["plugin"] for r in data["rules"]] == ["native", "cursor", "global"]
    errors = {e["path"]: e for e in data["errors"]}
    broken = errors["pi_rules.rules:broken"]
    assert broken["kind"] == "source-unreadable"
    assert "no module no_such_module is installed" in broken["message"]
    assert "broken-pack 1.0" in broken["message"] and "-p no:broken" in broken["message"]
    assert "does not exist" in errors["pi_rules.rules:hollow"]["message"]
    assert cli([site], project, "check").returncode == 1
    packs = json.loads(cli([site], project, "--json", "plugins").stdout)["packs"]
    assert [(p["name"], p["folder"], "no_such_module" in (p["error"] or "")) for p in packs] == [
        ("broken", None, True), ("hollow", None, False),
    ]


def test_the_pack_code_is_never_imported(tmp_path, project):
    marker = tmp_path / "imported"
    trap = f"open({str(marker)!r}, 'w').close()\nraise SystemExit('a pack must not be imported')\n"
    site = install_by_hand(tmp_path / "site", "trap-pack", {"trap": "trap_pack.data:rules"}, {
        "trap_pack/__init__.py": trap,
        "trap_pack/data/__init__.py": trap,
        "trap_pack/data/rules/t.md": rule_text("Trap rule.", alwaysApply=True),
    })
    data = listed([site], project)
    assert [r["id"] for r in data["rules"] if r["plugin"] == "trap"] == ["t"]
    assert not marker.exists()


def test_a_pack_named_like_a_plugin_reports_the_clash(tmp_path, project):
    site = install_by_hand(tmp_path / "site", "clash-pack", {"native": "clash_pack:rules"}, {
        "clash_pack/__init__.py": "", "clash_pack/rules/c.md": rule_text("Clash.", alwaysApply=True),
    })
    data = listed([site], project)
    assert [r["plugin"] for r in data["rules"]] == ["native", "cursor", "global"]  # the built-in stays
    [error] = data["errors"]
    assert error["path"] == "pi_rules.rules:native" and "-p no:pack:native" in error["message"]
    assert listed([site], project, "-p", "no:pack:native")["errors"] == []


@settings(max_examples=200, deadline=None)
@given(value=st.text(max_size=40), name=st.text(min_size=1, max_size=12))
def test_any_entry_point_value_resolves_to_a_folder_or_a_problem_never_an_exception(value, name):
    entry_point = EntryPoint(name=name, value=value, group=GROUP)
    [(registered, pack)] = pack_plugins([entry_point], lambda _: False, lambda _: "some-dist 1.0")
    folder, problem = pack.folder()
    assert registered == name and bool(folder) != bool(problem)
    assert not folder or os.path.isdir(folder)
