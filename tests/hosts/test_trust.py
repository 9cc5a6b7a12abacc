"""``pi-rules trust``/``untrust``/``trust --list``, ``--trust-store`` and serve's
``trust_status``, run as a user runs them: real processes, a temporary HOME, real git
repositories (docs/trust.md)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text
import rules_hosts.session.trust as store
from suite_helpers import cli_process

MARKER = "PROJECT-RULE-BODY"
RULES = {".pi/rules/style.md": rule_text(MARKER, alwaysApply=True)}


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "work" / "repo"
    make_rules(project, RULES)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "pkg" / "sub").mkdir(parents=True)
    home.mkdir()
    return {"home": home, "project": project, "tmp": tmp_path}


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_RULES_", "XDG_"))}
    env.update(HOME=str(home), **extra)
    return env


def cli(world: dict[str, Path], *args: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    return cli_process(*args, cwd=cwd or world["project"], env=environment(world["home"], **extra))


def project_rule_ids(world: dict[str, Path], *args: str, cwd: Path | None = None, **extra: str) -> list[str]:
    result = cli(world, *args, "--json", "list", cwd=cwd, **extra)
    assert result.returncode == 0, result.stderr
    return [r["id"] for r in json.loads(result.stdout)["rules"]]


def test_trust_list_untrust_round_trip(world):
    project, home = world["project"], world["home"]
    assert cli(world, "trust", "--list").stdout == ""
    first = cli(world, "trust", cwd=project / "pkg" / "sub")  # any folder of the project names its root
    assert first.returncode == 0
    assert first.stdout.splitlines()[0] == f"trusted: {project}"
    assert cli(world, "trust", str(project)).stdout == f"already trusted: {project}\n"
    assert cli(world, "trust", "--list").stdout == f"{project}\n"
    assert json.loads(cli(world, "--json", "trust", "--list").stdout) == {"trusted": [str(project)]}
    saved = home / ".config" / "pi-rules" / "trusted.json"
    assert json.loads(saved.read_text()) == {"version": 1, "trusted": [str(project)]}
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600  # the user's own decisions
    assert cli(world, "untrust").stdout == f"untrusted: {project}\n"
    assert cli(world, "untrust").stdout == f"was not trusted: {project}\n"
    assert json.loads(cli(world, "trust", "--list", "--json").stdout) == {"trusted": []}


def test_trust_store_decides_what_a_host_reads(world):
    project = world["project"]
    assert project_rule_ids(world) == ["style"]  # the CLI stays trusted by default
    assert project_rule_ids(world, "--trust-store") == []
    cli(world, "trust")
    assert project_rule_ids(world, "--trust-store") == ["style"]
    # A folder below a trusted root is trusted; --untrusted (a host's own decision) wins.
    assert project_rule_ids(world, "--trust-store", cwd=project / "pkg") == ["style"]
    assert project_rule_ids(world, "--trust-store", "--untrusted") == []


def test_an_entry_pins_the_path_so_a_moved_repository_is_not_trusted(world):
    cli(world, "trust")
    moved = world["tmp"] / "elsewhere"
    world["project"].rename(moved)
    assert project_rule_ids(world, "--trust-store", cwd=moved) == []
    # untrust still removes the entry of a folder that is gone
    assert cli(world, "untrust", str(world["project"]), cwd=moved).stdout == f"untrusted: {world['project']}\n"


def test_user_setting_always_and_never(world):
    cli(world, "trust")
    make_rules(world["home"] / ".config" / "pi-rules", {"config.toml": 'trust = "never"\n'})
    assert project_rule_ids(world, "--trust-store") == []
    make_rules(world["home"] / ".config" / "pi-rules", {"config.toml": 'trust = "always"\n'})
    other = world["tmp"] / "other"
    make_rules(other, RULES)
    assert project_rule_ids(world, "--trust-store", cwd=other) == ["style"]


def test_a_project_cannot_set_its_own_trust(world):
    project = world["project"]
    make_rules(project, {".pi/rules.toml": 'trust = "always"\n'})
    assert project_rule_ids(world, "--trust-store") == []
    checked = cli(world, "check")
    assert checked.returncode == 1
    assert ".pi/rules.toml" in checked.stdout and "trust may be set only in your own config file" in checked.stdout


def test_a_hostile_project_shipping_a_fake_store_is_never_read(world):
    """The project carries a store that lists itself, where a relative XDG_CONFIG_HOME
    or a careless lookup would find it; none of it is opened, and it stays untrusted."""
    project = world["project"]
    fake = {"version": 1, "trusted": [str(project)]}
    for folder in ("pi-rules", ".config/pi-rules", ".pi"):
        make_rules(project, {f"{folder}/trusted.json": json.dumps(fake)})
    script = (
        "import sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == 'open' else None)\n"
        "from rules_hosts.cli import main\n"
        "code = main(['--trust-store', '--json', 'list'])\n"
        "sys.stderr.write('\\nOPENED ' + repr(opened))\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, text=True, timeout=60,
                            env=environment(world["home"], XDG_CONFIG_HOME="."))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rules"] == []
    opened = eval(result.stderr.rsplit("OPENED ", 1)[1])  # noqa: S307 - our own repr of a list of str
    assert str(world["home"] / ".config" / "pi-rules" / "trusted.json") in opened  # the user's store was asked
    assert [p for p in opened if str(project) in p] == []  # nothing of the project, its fake stores least of all


def test_a_broken_store_trusts_nothing_and_says_how_to_fix_it(world):
    cli(world, "trust")
    saved = world["home"] / ".config" / "pi-rules" / "trusted.json"
    for garbage in ("{not json", json.dumps({"version": 2, "trusted": []}),
                    json.dumps({"version": 1, "trusted": ["relative/path"]}), "\x00" * 10):
        saved.write_text(garbage)
        listed = cli(world, "--trust-store", "--json", "list")
        assert json.loads(listed.stdout)["rules"] == []
        assert str(saved) in listed.stderr and "remove it" in listed.stderr
        refused = cli(world, "trust")  # never overwrites what it could not read
        assert refused.returncode == 1 and saved.read_text() == garbage


def serve(world: dict[str, Path], *args: str, cwd: Path | None = None) -> dict:
    request = json.dumps({"id": 1, "method": "trust_status"}) + "\n"
    result = cli_process(*args, "serve", cwd=cwd or world["project"], env=environment(world["home"]), stdin=request)
    return json.loads(result.stdout)["result"]


def test_serve_trust_status_tells_the_host_what_to_say(world):
    project = world["project"]
    assert serve(world, "--trust-store") == {
        "trusted": False, "root": str(project), "decided_by": "store", "project_rules": True,
        "hint": f"pi-rules trust {project}",
    }
    cli(world, "trust")
    assert serve(world, "--trust-store")["trusted"] is True
    assert serve(world, "--untrusted")["decided_by"] == "host"
    assert serve(world)["decided_by"] == "default"
    empty = world["tmp"] / "empty"
    empty.mkdir()
    assert serve(world, "--trust-store", cwd=empty)["project_rules"] is False
    make_rules(empty, {"AGENTS.md": "Be kind.\n"})  # any format an importer reads counts
    assert serve(world, "--trust-store", cwd=empty)["project_rules"] is True


def test_the_root_is_found_without_git(world, monkeypatch):
    """A .git file (a worktree) marks the root as well; git itself never runs."""
    worktree = world["tmp"] / "wt"
    (worktree / "a" / "b").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /nowhere\n")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("git ran"))
    assert store.project_root(str(worktree / "a" / "b")) == str(worktree)
    lone = world["tmp"] / "lone"
    lone.mkdir()
    assert store.project_root(str(lone)) == str(lone)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=12))
def test_the_store_holds_exactly_what_was_trusted(tmp_path_factory, operations):
    base = tmp_path_factory.mktemp("store")
    env = {"HOME": str(base / "home")}
    folders = [base / f"p{i}" for i in range(4)]
    for folder in folders:
        folder.mkdir(exist_ok=True)
    expected: set[str] = set()
    for add, index in operations:
        root = str(folders[index].resolve())
        (store.trust if add else store.untrust)(str(folders[index]), env)
        (expected.add if add else expected.discard)(root)
    assert set(store.read_store(env)) == expected
    for index, folder in enumerate(folders):
        assert store.trust_decision(str(folder), env).trusted == (str(folder.resolve()) in expected)
