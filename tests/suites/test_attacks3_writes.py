"""Issue 26, attacks 10, 12 and 13: no write follows a link the repository ships
(`map -o`, `init`, a project-scope `--install`); all go through
`rules_core.discovery.containment.write_target`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from rules_core.discovery.containment import LinkRefused, write_contained, write_target
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
from suite_helpers import cli_process


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    home, project = tmp_path / "home", tmp_path / "repo"
    make_rules(project, {".cursorrules": "Be kind.\n"})
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    make_rules(home, {".ssh/id_ed25519": "SECRET KEY\n",
                      ".pi/agent/rules/mine.md": rule_text("Mine.", alwaysApply=True),
                      ".claude/settings.json": '{"theme": "dark"}\n'})
    return {"home": home, "project": project}


def _run(world: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_RULES_", "XDG_"))}
    env.update(HOME=str(world["home"]), PI_RULES_HOOK_SERVER="off")
    return cli_process(*args, cwd=world["project"], env=env, python=["-P"])


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not str(p.relative_to(folder)).startswith(".cache")}  # our own cache


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_map_does_not_write_through_a_shipped_link(world, how):
    key = world["home"] / ".ssh" / "id_ed25519"
    os.symlink(key if how == "absolute" else os.path.relpath(key, world["project"]),
               world["project"] / "rules-map.html")
    done = _run(world, "map")
    assert done.returncode == 2 and "leads outside the project" in done.stderr and "not written" in done.stderr
    assert key.read_text() == "SECRET KEY\n"


def test_map_writes_its_page_and_an_explicit_path_outside(world, tmp_path):
    # Positive controls: the default page, and a path the user names outside the project.
    assert _run(world, "map").returncode == 0
    assert (world["project"] / "rules-map.html").read_text().startswith("<!DOCTYPE html>")
    assert _run(world, "map", "-o", str(tmp_path / "elsewhere.html")).returncode == 0
    assert (tmp_path / "elsewhere.html").exists()


def test_init_does_not_write_through_a_shipped_pi_link(world):
    os.symlink(world["home"] / ".pi" / "agent", world["project"] / ".pi")
    before = _tree(world["home"])
    done = _run(world, "init")
    assert _tree(world["home"]) == before
    assert "leads outside the project" in done.stdout + done.stderr


def test_init_creates_its_files_in_a_plain_project(world):
    assert _run(world, "init").returncode == 0
    assert (world["project"] / ".pi" / "rules").is_dir()


def test_project_install_does_not_write_through_a_shipped_claude_link(world):
    os.symlink(world["home"] / ".claude", world["project"] / ".claude")
    before = _tree(world["home"])
    done = _run(world, "hook", "claude-code", "--install")
    assert done.returncode == 1 and "leads outside the project" in done.stderr
    assert _tree(world["home"]) == before  # no settings change, no .bak
    assert not (world["project"] / ".mcp.json").exists()  # a refused file leaves all untouched


def test_project_install_writes_into_a_plain_project(world):
    assert _run(world, "hook", "claude-code", "--install").returncode == 0
    assert "hooks" in json.loads((world["project"] / ".claude" / "settings.json").read_text())


def test_the_helper_resolves_inside_links_and_refuses_links_out(tmp_path):
    bound, outside = tmp_path / "p", tmp_path / "out"
    (bound / "real").mkdir(parents=True)
    outside.mkdir()
    os.symlink("real", bound / "inner")
    os.symlink(outside, bound / "away")
    os.symlink("../out/x", bound / "dangling")
    assert write_target(str(bound / "inner" / "f"), str(bound)) == str(bound / "real" / "f")
    assert write_target(str(bound / "new" / "deep" / "f"), str(bound)) == str(bound / "new" / "deep" / "f")
    for refused in (bound / "away" / "f", bound / "dangling"):
        with pytest.raises(LinkRefused):
            write_target(str(refused), str(bound))
    with pytest.raises(LinkRefused):
        write_contained(str(bound / "away" / "f"), b"x", str(bound))
    assert list(outside.iterdir()) == []


def test_the_strict_form_refuses_every_link_and_names_it(tmp_path):
    """``follow=False`` (export's rule, issue 28): a link inside the project is refused
    too, dangling or not, and the error names it; a plain path is returned as spelt."""
    bound = tmp_path / "p"
    (bound / "real").mkdir(parents=True)
    os.symlink("real", bound / "inner")
    os.symlink("nowhere", bound / "dangling")
    for path, link in ((bound / "inner" / "f", bound / "inner"), (bound / "dangling", bound / "dangling")):
        with pytest.raises(LinkRefused) as refused:
            write_target(str(path), str(bound), follow=False)
        assert refused.value.link == str(link) and f"{link} is a symbolic link" in str(refused.value)
    with pytest.raises(LinkRefused):
        write_contained(str(bound / "inner" / "f"), b"x", str(bound), follow=False)
    assert list((bound / "real").iterdir()) == [] and not (bound / "nowhere").exists()
    # Positive controls: the same link is followed by the default form; a plain path is written.
    assert write_target(str(bound / "inner" / "f"), str(bound)) == str(bound / "real" / "f")
    assert write_contained(str(bound / "new" / "f"), b"x", str(bound), follow=False) == str(bound / "new" / "f")
    assert (bound / "new" / "f").read_bytes() == b"x"
