"""Issue 14, attacks 3, 5, 10 and 12: the bound is the project, not what git says; no
process runs in an untrusted project and ``git`` is never looked up in it; a link out
is no existence oracle; a FIFO cannot hang ``stream scan``.

Real git repositories, real symlinks and FIFOs, the CLI as a real subprocess.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_core.engine.core import Engine
from rules_core.discovery.git import find_git_root, git_executable
from rules_core.model import Facts
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text
from rules_hosts.protocols.mcp import RulesTools
from rules_hosts.session.runtime import Session

SECRET = "SECRET-KEY-7f3a"


from suite_helpers import cli_process, commit, git  # noqa: E402 - the shared helpers


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_RULES_", "GIT_"))}
    env.update(HOME=str(home), **extra)
    return env


def cli(cwd: Path, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``pi-rules --cwd CWD ARGS`` as a real process started in ``cwd`` (as an agent does)."""
    return cli_process("--cwd", str(cwd), *args, cwd=cwd, env=env, timeout=timeout)


def secret_outside(tmp_path: Path) -> Path:
    return make_rules(tmp_path / "outside", {"secret.txt": SECRET + "\n"}) / "secret.txt"


# -- attack 3: the bound taken from git ------------------------------------------------------


def test_core_worktree_at_the_filesystem_root_does_not_make_every_file_inside(tmp_path):
    secret_outside(tmp_path)
    repo, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "config", "core.worktree", "/")  # git now reports / as the top level
    (repo / ".cursorrules").symlink_to("../outside/secret.txt")
    env = clean_env(home)
    assert SECRET not in cli(repo, env, "render").stdout  # was: the secret, as a rule
    check = cli(repo, env, "check").stdout
    assert "leads outside the project directory" in check and SECRET not in check
    assert find_git_root(str(repo)) is None


def test_a_dotfiles_repository_in_home_is_not_the_bound_of_a_project_below_it(tmp_path):
    home = tmp_path / "home"
    make_rules(home, {".ssh/id_rsa": SECRET + "\n", "dl/proj/README": "unpacked tarball\n"})
    git(tmp_path, "init", "-q", str(home))
    proj = home / "dl" / "proj"
    (proj / ".cursorrules").symlink_to("../../.ssh/id_rsa")
    out = cli(proj, clean_env(home), "render").stdout
    assert SECRET not in out  # was: the private key, as a rule
    assert "leads outside the project directory" in cli(proj, clean_env(home), "check").stdout


def test_the_engine_refuses_its_home_as_a_root_even_where_git_would_answer(tmp_path, monkeypatch):
    # git's own search is kept below $HOME (a ceiling); the engine's home is checked on
    # its own, so a host passing another home than the process's is covered too.
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    home = make_rules(tmp_path / "home", {"dl/proj/x.txt": "x\n"})
    git(tmp_path, "init", "-q", str(home))
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    assert find_git_root(str(home / "dl" / "proj")) == str(home)  # what git says
    assert engine.discovery.git_root(str(home / "dl" / "proj")) is None  # the project is cwd
    assert engine.discovery.git_root(str(home)) is None  # cwd IS home: the bound is cwd, home


def test_git_dir_and_work_tree_in_the_environment_do_not_choose_the_bound(tmp_path):
    # A bare dotfiles setup exported into the shell: GIT_DIR=~/.cfg GIT_WORK_TREE=/.
    secret_outside(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(home / ".cfg"))
    proj = make_rules(tmp_path / "proj", {"README": "no .git here\n"})
    (proj / ".cursorrules").symlink_to("../outside/secret.txt")
    env = clean_env(home, GIT_DIR=str(home / ".cfg"), GIT_WORK_TREE="/")
    assert SECRET not in cli(proj, env, "render").stdout  # was: / as the bound


def test_worktrees_and_submodules_keep_their_own_root(tmp_path):
    """Not an attack: a `.git` FILE at the top level (worktree, submodule) is accepted."""
    main = tmp_path / "main"
    git(tmp_path, "init", "-q", str(main))
    commit(main)
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    (tmp_path / "wt" / "src").mkdir()
    assert find_git_root(str(tmp_path / "wt" / "src")) == str(tmp_path / "wt")
    sup = tmp_path / "sup"
    git(tmp_path, "init", "-q", str(sup))
    git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(main), "sm")
    assert find_git_root(str(sup / "sm")) == str(sup / "sm")
    assert find_git_root(str(sup)) == str(sup)


def test_a_nested_repository_cannot_widen_its_root_to_the_enclosing_one(tmp_path):
    outer = make_rules(tmp_path / "outer", {"private/notes.txt": SECRET + "\n"})
    git(tmp_path, "init", "-q", str(outer))
    inner = outer / "vendor" / "evil"
    git(tmp_path, "init", "-q", str(inner))
    git(inner, "config", "core.worktree", str(outer))  # the enclosing repository's top level
    assert find_git_root(str(inner)) is None  # its .git is not the one at outer


# -- attack 5: no git in an untrusted project, never a relative git -----------------------------


@pytest.fixture
def planted(tmp_path):
    """A repository holding its own ``git`` that leaves a marker when it runs, and an
    environment whose PATH starts with an empty entry (the current directory)."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    git(tmp_path, "init", "-q", str(repo))
    commit(repo)
    marker = tmp_path / "MARKER"
    fake = repo / "git"
    fake.write_text(f"#!/bin/sh\necho ran >> '{marker}'\necho main\n")
    fake.chmod(0o755)
    make_rules(repo, {"src/a.ts": "console.log(1);\n",
                      ".pi/rules/r.md": rule_text("Project rule.", globs=["src/**"])})
    make_rules(home / ".pi" / "agent" / "rules", {"no-console.md": rule_text(
        "No console.", condition="console\\.log\\(", scope="tool:write(*.ts)")})
    env = clean_env(home, PATH=":" + os.environ.get("PATH", os.defpath))
    return repo, home, marker, env


@pytest.mark.parametrize("args", [
    ("render",), ("explain", "src/a.ts"), ("stream", "scan"), ("stream", "test", "--text", "console.log("),
    ("--untrusted", "render"), ("--untrusted", "explain", "src/a.ts"),
    ("--untrusted", "stream", "scan"), ("--untrusted", "stream", "test", "--text", "console.log("),
], ids=lambda args: "-".join(a for a in args if not a.startswith("console")))
def test_the_repositorys_own_git_never_runs_from_the_cli(planted, args):
    repo, _, marker, env = planted
    done = cli(repo, env, *args)
    assert done.returncode in (0, 1), done.stderr
    assert not marker.exists()  # was: ./git ran for every one of them


def test_the_repositorys_own_git_never_runs_from_a_session_or_mcp(planted, monkeypatch):
    repo, home, marker, env = planted
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.chdir(repo)
    for trusted in (True, False):
        engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
        session = Session(engine, str(repo), trusted=trusted, env={"HOME": str(home)})
        session.command("/rules")  # a report before any turn: the session's own branch look-up
        session.before_agent_start("hi")
        RulesTools(engine, str(repo), trusted).call("explain_path", {"path": "src/a.ts"})
    assert not marker.exists()


def test_no_git_at_all_runs_for_an_untrusted_project(planted, tmp_path, monkeypatch):
    """Untrusted means no process in the project, not even the real git: a logging
    wrapper first on PATH records every run."""
    repo, home, _, env = planted
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git.log"
    wrapper = make_rules(tmp_path / "bin", {"git": f"#!/bin/sh\necho \"$*\" >> '{log}'\nexec '{real}' \"$@\"\n"})
    (wrapper / "git").chmod(0o755)
    path = f"{wrapper}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    env = {**env, "PATH": path}
    for args in (("render",), ("explain", "src/a.ts"), ("stream", "scan"), ("stream", "test", "--text", "x")):
        assert cli(repo, env, "--untrusted", *args).returncode in (0, 1)
    monkeypatch.setenv("PATH", path)
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    session = Session(engine, str(repo), trusted=False, env={"HOME": str(home)})
    session.command("/rules")  # was: git asked for the branch of the untrusted project
    session.before_agent_start("hi")
    RulesTools(engine, str(repo), False).call("explain_path", {"path": "src/a.ts"})
    assert not log.exists()
    cli(repo, env, "render")  # the wrapper is the git that runs: trusted, it is used
    assert sorted(log.read_text().splitlines()) == ["rev-parse --abbrev-ref HEAD",
                                                    "rev-parse --show-toplevel --show-prefix --absolute-git-dir"]


def test_an_untrusted_project_has_no_branch_and_git_is_absolute(planted, monkeypatch):
    repo, home, _, env = planted
    monkeypatch.setenv("PATH", env["PATH"])
    found = git_executable()
    assert found is not None and os.path.isabs(found) and not found.startswith(str(repo))
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    untrusted = Session(engine, str(repo), trusted=False, env={"HOME": str(home)}).before_agent_start("hi")
    trusted = Session(engine, str(repo), trusted=True, env={"HOME": str(home)}).before_agent_start("hi")
    assert untrusted.evaluation.facts.branch is None
    assert trusted.evaluation.facts.branch is not None  # the real git's answer


# -- attack 10: a symlink out is no existence oracle ---------------------------------------------


def _keys_active(tmp_path: Path, target_exists: bool, with_git: bool) -> list[str]:
    world = tmp_path / f"{target_exists}-{with_git}"
    home = make_rules(world / "home", {})
    credentials = make_rules(world / "outside", {"credentials": "x\n"}) / "credentials"
    repo = make_rules(world / "repo", {
        ".pi/rules/keys.md": rule_text("Rotate the keys.", globs=["probe/*.key"], match="exists"),
        "probe/README": "probe\n",
    })
    if with_git:
        git(world, "init", "-q", str(repo))
    (repo / "probe" / "a.key").symlink_to(credentials)  # absolute, out of the project
    (repo / "probe" / "b.key").symlink_to("../../outside/credentials")  # relative, out
    if not target_exists:
        credentials.unlink()
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    return [o.rule.id for o in engine.evaluate(Facts(cwd=str(repo))).active]


@pytest.mark.parametrize("with_git", [True, False])
def test_activation_does_not_depend_on_a_file_outside_the_project(tmp_path, with_git):
    present = _keys_active(tmp_path, target_exists=True, with_git=with_git)
    absent = _keys_active(tmp_path, target_exists=False, with_git=with_git)
    assert present == absent == []  # was: ["keys"] when the outside file existed


def test_a_link_to_a_file_inside_the_project_still_counts(tmp_path):
    home = make_rules(tmp_path / "home", {})
    repo = make_rules(tmp_path / "repo", {
        ".pi/rules/keys.md": rule_text("Rotate the keys.", globs=["probe/*.key"], match="exists"),
        "real/a.key": "k\n",
    })
    git(tmp_path, "init", "-q", str(repo))
    (repo / "probe").mkdir()
    (repo / "probe" / "a.key").symlink_to("../real/a.key")
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    assert [o.rule.id for o in engine.evaluate(Facts(cwd=str(repo))).active] == ["keys"]


# -- attack 12: a FIFO named like a watched file -------------------------------------------------


@pytest.mark.parametrize("mode", ["untrusted", "no-git"])
def test_stream_scan_never_opens_a_fifo(tmp_path, mode):
    home, proj = tmp_path / "home", tmp_path / "proj"
    make_rules(home / ".pi" / "agent" / "rules", {"no-console.md": rule_text(
        "No console.", condition="console\\.log\\(", scope="tool:write(*.ts)")})
    make_rules(proj, {"src/a.ts": "console.log(1);\n"})
    if mode == "untrusted":
        git(tmp_path, "init", "-q", str(proj))
    os.mkfifo(proj / "src" / "b.ts")  # sorts after a.ts: the scan reaches it
    args = ("--untrusted",) if mode == "untrusted" else ()
    try:
        done = cli(proj, clean_env(home), *args, "stream", "scan", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("stream scan hung on a FIFO")  # was: open() blocked forever
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == ['src/a.ts:1: no-console: matched /console\\.log\\(/: "console.log("']
