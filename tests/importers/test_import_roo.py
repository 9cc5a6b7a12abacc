"""The ``roo`` importer (docs/importers.md, "The roo importer"): Roo Code's rules folders,
their single-file fallbacks, mode folders scoped to the agent named like the mode, and
``~/.roo`` as global rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import by_id, copy_fixture, discover, relative_errors, statuses

PLUGIN = "roo"


def rules(project, **kwargs) -> dict:
    return by_id(project, plugin=PLUGIN, **kwargs)


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped Roo project: .roo/rules, .roo/rules-architect, a shadowed
    .roorules and a .roorules-code fallback."""
    return copy_fixture(rule_project, "roo")


def write_home(project, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = project.home / ".roo" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# -- the fixture project ---------------------------------------------------------------------


def test_fixture_ids_order_reference_paths_and_real_paths(repo):
    found = discover(repo)
    assert found.errors == ()
    rows = [(r.id, r.relative_path, r.file.plugin, r.source, os.path.relpath(r.file.path, repo.cwd))
            for r in found.rules]
    assert rows == [
        ("00-general", "00-general.md", PLUGIN, "project", ".roo/rules/00-general.md"),
        ("00-general-2", "00-general.md", PLUGIN, "project", ".roo/rules-architect/00-general.md"),
        ("project/roorules-code", ".roorules-code", PLUGIN, "project", ".roorules-code"),
    ]


def test_every_rule_is_always_applied_with_the_whole_text_verbatim(repo):
    for rule in rules(repo).values():
        assert rule.always_apply and rule.load == "pinned" and rule.match == "touched" and rule.globs == ()
        assert rule.body == Path(rule.file.path).read_text(encoding="utf-8")
    assert rules(repo)["00-general"].description == "Rules for all Roo Modes"  # its first heading
    assert rules(repo)["project/roorules-code"].description == "project/roorules-code"  # no heading


def test_the_rules_folder_has_files_so_roorules_is_not_read(repo):
    assert "project/roorules" not in rules(repo)


def test_roorules_is_read_when_the_rules_folder_is_absent_or_has_no_file(rule_project):
    rule_project.write({".roorules": "Plain rules.\n"})
    assert list(rules(rule_project)) == ["project/roorules"]
    (rule_project.cwd / ".roo" / "rules" / "empty").mkdir(parents=True)
    assert list(rules(rule_project)) == ["project/roorules"]


def test_every_file_counts_but_roos_cache_and_system_files(rule_project):
    rule_project.write({".roo/rules/01-general.md": "A\n", ".roo/rules/02-coding-style.txt": "B\n",
                        ".roo/rules/notes": "C\n", ".roo/rules/x.md.swp": "D", ".roo/rules/.DS_Store": "E",
                        ".roo/rules/build.log": "F\n"})
    assert list(rules(rule_project)) == ["01-general", "02-coding-style", "notes"]


def test_files_are_ordered_by_name_case_insensitively_wherever_they_are(rule_project):
    rule_project.write({".roo/rules/b.md": "B\n", ".roo/rules/A/z.md": "Z\n", ".roo/rules/a/c.md": "C\n",
                        ".roo/rules/D.md": "D\n"})
    assert [r.relative_path for r in rules(rule_project).values()] == ["b.md", "a/c.md", "D.md", "A/z.md"]


# -- modes: agent scoping --------------------------------------------------------------------


def test_mode_rules_carry_the_mode_as_their_agents(repo):
    assert dict(rules(repo)["00-general-2"].extra) == {"agents": ("architect",)}
    assert dict(rules(repo)["project/roorules-code"].extra) == {"agents": ("code",)}
    assert dict(rules(repo)["00-general"].extra) == {}


@pytest.mark.parametrize("agent, active", [
    ("main", {"00-general"}),
    ("code", {"00-general", "project/roorules-code"}),
    ("architect", {"00-general", "00-general-2"}),
    ("Code", {"00-general", "project/roorules-code"}),
])
def test_only_the_agent_named_like_the_mode_gets_its_rules(repo, agent, active):
    result, _ = statuses(repo, agent=agent)
    assert {i for i, (status, _) in result.items() if status == "active"} == active
    others = {i for i, (status, _) in result.items() if status != "active"}
    assert all(result[i][0] == "inactive" and "agent mismatch" in result[i][1][0] for i in others)


def test_a_mode_folder_wins_over_its_single_file(rule_project):
    rule_project.write({".roo/rules-code/style.md": "Folder.\n", ".roorules-code": "File.\n",
                        ".roorules-debug": "Debug file.\n"})
    found = rules(rule_project)
    assert list(found) == ["style", "project/roorules-debug"]
    assert dict(found["project/roorules-debug"].extra) == {"agents": ("debug",)}


def test_a_file_named_like_a_legacy_file_inside_a_folder_is_no_mode_file(rule_project):
    rule_project.write({".roo/rules/.roorules-code": "General after all.\n"})
    assert dict(rules(rule_project)[".roorules-code"].extra) == {}


def test_cli_report_agent_code_selects_rules_code(repo, cli):
    code, out = cli(repo, "report", "--agent", "code")
    assert code == 0
    assert "active: project/roorules-code — .roorules-code (project) — always applies" in out
    assert "session agent code is not one of the rule's agents architect" in out
    code, out = cli(repo, "render", "--agent", "architect")
    assert "Rules for the Architect Roo Mode" in out and "fuzz tests" not in out


# -- ~/.roo: global rules --------------------------------------------------------------------


def test_home_rules_folders_are_global_rules_after_the_project(repo):
    write_home(repo, {"rules/mine.md": "Be brief.\n", "rules-code/tests.txt": "Test first.\n"})
    found = [r for r in discover(repo).rules if r.file.plugin == PLUGIN]
    assert [(r.id, r.source) for r in found][-2:] == [("mine", "global"), ("tests", "global")]
    assert dict(found[-1].extra) == {"agents": ("code",)}


def test_an_untrusted_project_reads_only_the_home_folders(repo):
    write_home(repo, {"rules/mine.md": "Be brief.\n"})
    assert [(r.id, r.source) for r in discover(repo, trusted=False).rules] == [("mine", "global")]


def test_home_rules_do_not_make_the_project_fallback_disappear(rule_project):
    # Roo's code skips .roorules when even ~/.roo/rules has files; its docs say the
    # project folder decides, and a user's own files must not hide the project's rules.
    write_home(rule_project, {"rules/mine.md": "Mine.\n"})
    rule_project.write({".roorules": "Project.\n"})
    assert list(rules(rule_project)) == ["project/roorules", "mine"]


# -- switching it off, errors ------------------------------------------------------------------


def test_import_none_reads_no_roo_path(repo, record):
    write_home(repo, {"rules/mine.md": "Be brief.\n"})
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert rules(repo) == {}
    assert [p for p in record if ".roo" in p] == []


def test_blocking_the_plugin_turns_it_off(repo):
    assert rules(repo, blocked=["roo"]) == {}


def test_a_binary_rule_file_is_a_read_failure_not_a_rule(rule_project):
    rule_project.write({".roo/rules/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00"})
    assert rules(rule_project) == {}
    [(kind, path, _, plugin)] = relative_errors(rule_project)
    assert (kind, path, plugin) == ("read-failure", ".roo/rules/logo.png", "roo")


def test_cli_list_json_names_plugin_and_real_path(repo, cli):
    code, out = cli(repo, "--json", "list")
    by_rule = {r["id"]: r for r in json.loads(out)["rules"]}
    assert (by_rule["project/roorules-code"]["plugin"], by_rule["project/roorules-code"]["path"]) == (
        "roo", str(repo.cwd / ".roorules-code"))
