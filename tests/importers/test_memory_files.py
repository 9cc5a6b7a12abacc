"""Every memory file (AGENTS.md, CLAUDE.md, GEMINI.md, copilot-instructions.md) treats an
empty file and a binary file alike: listed and never active, or a read failure."""

from __future__ import annotations

import subprocess

import pytest

from rules_core.model import Facts

FILES = ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md"]


@pytest.fixture
def repo(rule_project):
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    return rule_project


@pytest.mark.parametrize("name", FILES)
def test_an_empty_memory_file_is_listed_but_never_active(repo, name):
    repo.write({name: "\n  \n"})
    (outcome,) = repo.engine().evaluate(Facts(cwd=str(repo.cwd))).outcomes
    assert outcome.status == "inactive" and outcome.reasons[0].startswith("turned off: ")


@pytest.mark.parametrize("name", FILES)
def test_a_binary_memory_file_is_a_read_failure(repo, name):
    repo.write({name: "# Title\n\x00\x01 binary\n"})
    discovery = repo.engine().discover(str(repo.cwd))
    assert discovery.rules == ()
    (error,) = discovery.errors
    assert (error.kind, error.path) == ("read-failure", str(repo.cwd / name))
    assert "contains NUL bytes" in error.message
