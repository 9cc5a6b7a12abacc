"""The live git branch: present on a branch, absent everywhere else."""

from __future__ import annotations


from rules_core import current_branch


from suite_helpers import commit, git  # noqa: E402 - the shared helpers


def test_branch_name_with_slash(tmp_path):
    git(tmp_path, "init", "-q", "-b", "feature/x")
    commit(tmp_path)
    assert current_branch(str(tmp_path)) == "feature/x"


def test_unborn_branch_fails_in_git_so_is_absent(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    assert current_branch(str(tmp_path)) is None


def test_outside_git_is_absent(tmp_path):
    assert current_branch(str(tmp_path)) is None


def test_detached_head_is_absent(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path)
    git(tmp_path, "checkout", "-q", "--detach")
    assert current_branch(str(tmp_path)) is None


def test_missing_directory_or_git_is_absent(tmp_path, monkeypatch):
    assert current_branch(str(tmp_path / "nope")) is None
    monkeypatch.setenv("PATH", str(tmp_path))
    assert current_branch(str(tmp_path)) is None
