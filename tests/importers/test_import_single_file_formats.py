"""The formats built on ``SimpleFormat`` (docs/importers.md): ``amazonq``, ``junie``,
``augment``, ``zed`` and ``trae`` — where each reads, each row of its mapping, ids, order,
errors, trust and ``PI_RULES_IMPORT``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import by_id, copy_fixture, discover, git_init, relative_errors, statuses, text_with_front


def rules(project, plugin: str, **kwargs) -> dict:
    return by_id(project, plugin=plugin, **kwargs)


def rows(project, plugin: str) -> list[tuple[str, str, str]]:
    return [(r.id, r.relative_path, os.path.relpath(r.file.path, project.cwd))
            for r in discover(project).rules if r.file.plugin == plugin]


def verbatim(rule) -> bool:
    return rule.body == Path(rule.file.path).read_text(encoding="utf-8")


# -- amazonq -------------------------------------------------------------------------------------


def test_amazonq_reads_every_markdown_file_below_its_rules_folder(rule_project):
    copy_fixture(rule_project, "amazonq")
    assert rows(rule_project, "amazonq") == [
        ("code-style", "code-style.md", ".amazonq/rules/code-style.md"),
        ("security-guidelines", "security/security-guidelines.md", ".amazonq/rules/security/security-guidelines.md"),
    ]
    for rule in rules(rule_project, "amazonq").values():
        assert rule.always_apply and rule.load == "pinned" and verbatim(rule)
    assert rules(rule_project, "amazonq")["code-style"].description == "Code Style Rules"


def test_amazonq_keeps_a_frontmatter_block_as_text_since_amazon_q_sends_it(rule_project):
    text = "---\ndescription: Amazon Q Rules Location\nglobs: .amazonq/rules/**/*.md\n---\n# Where\n"
    rule_project.write({".amazonq/rules/where.md": text, ".amazonq/rules/notes.txt": "not markdown\n",
                        ".amazonq/prompts/p.md": "a prompt, not a rule\n"})
    [rule] = rules(rule_project, "amazonq").values()
    assert rule.body == text and rule.always_apply and rule.globs == ()


# -- junie ---------------------------------------------------------------------------------------


def test_junie_guidelines_are_one_always_rule_named_after_the_project(rule_project):
    copy_fixture(rule_project, "junie")
    assert rows(rule_project, "junie") == [("project/junie-guidelines", "guidelines.md", ".junie/guidelines.md")]
    rule = rules(rule_project, "junie")["project/junie-guidelines"]
    assert rule.always_apply and verbatim(rule) and rule.description == "Project Guidelines for Junie"
    assert statuses(rule_project)[0]["project/junie-guidelines"] == ("active", ())


def test_junie_id_names_the_git_root_folder_from_a_subfolder_too(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({"api/.junie/guidelines.md": "Use Kotlin.\n"})
    found = rules(rule_project, "junie", cwd=rule_project.cwd / "api")
    assert list(found) == ["project/api/junie-guidelines"]


def test_junie_reads_no_other_file_of_its_folder(rule_project):
    rule_project.write({".junie/notes.md": "scratch\n", ".junie/AGENTS.md": "not read here\n"})
    assert rules(rule_project, "junie") == {}


# -- zed -----------------------------------------------------------------------------------------


def test_zed_rules_file_is_one_always_rule_with_its_text_verbatim(rule_project):
    copy_fixture(rule_project, "zed")
    assert rows(rule_project, "zed") == [("project/rules", ".rules", ".rules")]
    rule = rules(rule_project, "zed")["project/rules"]
    assert rule.always_apply and verbatim(rule) and rule.description == "Zed Assistant Rules — ripgrep"


def test_zed_leaves_its_fallback_names_to_their_own_importers(rule_project):
    rule_project.write({".cursorrules": "Cursor.\n", "AGENTS.md": "# Agents\n"})
    assert rules(rule_project, "zed") == {}
    plugins = {r.file.plugin for r in discover(rule_project).rules}
    assert "zed" not in plugins and "cursor" in plugins


# -- augment -------------------------------------------------------------------------------------


@pytest.fixture
def augment(rule_project):
    return copy_fixture(rule_project, "augment")


def test_augment_fixture_ids_and_order(augment):
    assert rows(augment, "augment") == [
        ("core-coding-standards", "core-coding-standards.md", ".augment/rules/core-coding-standards.md"),
        ("rule-augment", "rule-augment.md", ".augment/rules/rule-augment.md"),
        ("testing-standards", "testing-standards.md", ".augment/rules/testing-standards.md"),
    ]


def test_augment_always_apply_is_an_always_rule_described_by_its_description(augment):
    rule = rules(augment, "augment")["core-coding-standards"]
    assert rule.always_apply and rule.load == "pinned"
    assert rule.description == "Foundational coding standards and AI decision framework for Tucsenberg B2B website"
    assert rule.body.startswith("\n# Tucsenberg Core Coding Standards\n")


def test_augment_without_description_is_described_by_its_first_heading(augment):
    assert rules(augment, "augment")["rule-augment"].description == "🧹 Code Quality & Linting"


def test_augment_auto_is_the_settings_panel_name_of_agent_requested(augment):
    rule = rules(augment, "augment")["testing-standards"]
    assert rule.load == "on-demand" and not rule.always_apply
    result, evaluation = statuses(augment)
    assert result["testing-standards"][0] == "on-demand"
    assert "- testing-standards.md — Vitest unit/integration testing standards" in evaluation.section


@pytest.mark.parametrize("front, load, always", [
    ("type: agent_requested\ndescription: When designing APIs\n", "on-demand", False),
    ("type: manual\n", "on-demand", False),
    ("type: always_apply\n", "pinned", True),
    ("type: ' Always_Apply '\n", "pinned", True),
    ("type: always\n", "pinned", True),
    ("description: no type\n", "pinned", True),
])
def test_augment_type_decides(rule_project, front, load, always):
    rule_project.write({".augment/rules/x.md": text_with_front(front)})
    rule = rules(rule_project, "augment")["x"]
    assert (rule.load, rule.always_apply) == (load, always)


def test_augment_reads_subfolders_and_no_other_extension(rule_project):
    rule_project.write({".augment/rules/web/react.md": "React.\n", ".augment/rules/notes.txt": "no\n"})
    assert [r.relative_path for r in rules(rule_project, "augment").values()] == ["web/react.md"]


@pytest.mark.parametrize("written, meant", [("agent-requested", "agent_requested"), ("always-apply", "always_apply"),
                                            ("Manuel", "manual")])
def test_augment_unknown_type_suggests_the_value_meant(rule_project, written, meant):
    rule_project.write({".augment/rules/x.md": text_with_front(f"type: {written}\n")})
    assert rules(rule_project, "augment") == {}
    assert relative_errors(rule_project) == [(
        "invalid-value", ".augment/rules/x.md",
        f"unknown type {written!r} — did you mean {meant!r}?; use one of always_apply, agent_requested, manual",
        "augment")]


def test_augment_unknown_type_without_a_near_value_lists_the_allowed_ones(rule_project):
    rule_project.write({".augment/rules/x.md": text_with_front("type: sometimes\n")})
    [(_, _, message, _)] = relative_errors(rule_project)
    assert message == "unknown type 'sometimes'; use one of always_apply, agent_requested, manual"


def test_augment_non_text_type_is_invalid_value(rule_project):
    rule_project.write({".augment/rules/x.md": text_with_front("type: 3\n")})
    [(kind, _, message, _)] = relative_errors(rule_project)
    assert kind == "invalid-value" and message.startswith(
        "type must be one of always_apply, agent_requested, manual, got the number 3")


def test_cli_check_shows_the_augment_suggestion(rule_project, cli):
    rule_project.write({".augment/rules/x.md": text_with_front("type: agent-requested\n")})
    code, out = cli(rule_project, "check")
    assert code == 1 and "invalid-value .augment/rules/x.md: unknown type 'agent-requested'" in out
    assert "did you mean 'agent_requested'?" in out


def test_augment_user_rules_are_global_and_always_whatever_their_type(augment):
    path = augment.home / ".augment" / "rules" / "mine.md"
    path.parent.mkdir(parents=True)
    path.write_text(text_with_front("type: manual\n", "Answer briefly.\n"))
    rule = rules(augment, "augment")["mine"]
    assert rule.source == "global" and rule.always_apply
    assert [(r.id, r.source) for r in discover(augment, trusted=False).rules] == [("mine", "global")]


# -- trae ----------------------------------------------------------------------------------------


@pytest.fixture
def trae(rule_project):
    return copy_fixture(rule_project, "trae")


def test_trae_fixture_ids_and_order(trae):
    assert rows(trae, "trae") == [
        ("backend", "backend.md", ".trae/rules/backend.md"),
        ("frontend", "frontend.md", ".trae/rules/frontend.md"),
        ("git-commit", "git-commit.md", ".trae/rules/git-commit.md"),
        ("project_rules", "project_rules.md", ".trae/rules/project_rules.md"),
    ]
    assert relative_errors(trae) == []


def test_trae_project_rules_without_frontmatter_is_always_applied(trae):
    rule = rules(trae, "trae")["project_rules"]
    assert rule.always_apply and verbatim(rule) and rule.description == "Rules"


def test_trae_globs_unquoted_as_trae_writes_them(trae):
    found = rules(trae, "trae")
    assert found["backend"].globs == ("**/*.go",) and found["backend"].load == "pinned"
    assert found["frontend"].globs == ("frontend/**/*.ts", "frontend/**/*.tsx")
    result, _ = statuses(trae, touched=["main.go", "frontend/src/App.tsx"])
    assert result["backend"] == ("active", ("touched main.go",))
    assert result["frontend"] == ("active", ("touched frontend/src/App.tsx",))
    assert statuses(trae, touched=["docs/index.md"])[0]["backend"][0] == "inactive"


def test_trae_description_without_globs_is_on_demand(trae):
    rule = rules(trae, "trae")["git-commit"]
    assert rule.load == "on-demand" and rule.description == "Git 提交规范和 pre-commit hook 配置"
    assert "- git-commit.md — Git 提交规范和 pre-commit hook 配置" in statuses(trae)[1].section


@pytest.mark.parametrize("front, load, always, globs", [
    ("alwaysApply: true\n", "pinned", True, ()),
    ("alwaysApply: true\nglobs: src/**\n", "pinned", True, ()),
    ("alwaysApply: false\n", "on-demand", False, ()),
    ("description: When writing SQL\n", "on-demand", False, ()),
    ("globs: '*.ts,*.tsx'\ndescription: TS\n", "pinned", False, ("*.ts", "*.tsx")),
    ("title: unrelated\n", "pinned", True, ()),
])
def test_trae_keys_decide(rule_project, front, load, always, globs):
    rule_project.write({".trae/rules/x.md": text_with_front(front)})
    rule = rules(rule_project, "trae")["x"]
    assert (rule.load, rule.always_apply, rule.globs) == (load, always, globs)


def test_trae_reads_its_rules_folder_flat(rule_project):
    rule_project.write({".trae/rules/a.md": "A\n", ".trae/rules/old/b.md": "B\n", ".trae/documents/plan.md": "P\n"})
    assert list(rules(rule_project, "trae")) == ["a"]


def test_trae_bad_always_apply_is_invalid_value(rule_project):
    rule_project.write({".trae/rules/x.md": text_with_front("alwaysApply: sometimes\n")})
    [(kind, path, message, plugin)] = relative_errors(rule_project)
    assert (kind, path, plugin) == ("invalid-value", ".trae/rules/x.md", "trae")
    assert message.startswith("alwaysApply must be true or false")


# -- every format: discovery order, trust, PI_RULES_IMPORT ------------------------------------------


EVERY = {"amazonq": ".amazonq/rules/a.md", "junie": ".junie/guidelines.md", "augment": ".augment/rules/a.md",
         "zed": ".rules", "trae": ".trae/rules/a.md"}


def test_importers_come_in_their_rank_order(rule_project):
    rule_project.write({path: f"{name}\n" for name, path in EVERY.items()})
    rule_project.write({".roo/rules/r.md": "roo\n"})
    order = [r.file.plugin for r in discover(rule_project).rules]
    assert order == ["roo", "amazonq", "junie", "augment", "zed", "trae"]


def test_an_untrusted_project_reads_none_of_their_project_files(rule_project):
    rule_project.write({path: f"{name}\n" for name, path in EVERY.items()})
    assert discover(rule_project, trusted=False).rules == ()


@pytest.mark.parametrize("name", sorted(EVERY))
def test_each_is_selected_by_its_name(rule_project, name):
    rule_project.write({path: f"{n}\n" for n, path in EVERY.items()})
    rule_project.env["PI_RULES_IMPORT"] = name
    assert {r.file.plugin for r in discover(rule_project).rules} == {name}


def test_import_none_stats_none_of_their_paths(rule_project, record):
    rule_project.write({path: f"{name}\n" for name, path in EVERY.items()})
    (rule_project.home / ".augment" / "rules").mkdir(parents=True)
    rule_project.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert discover(rule_project).rules == ()
    assert [p for p in record if any(part in p for part in (".amazonq", ".junie", ".augment", ".trae", ".rules"))] == []


def test_cli_list_json_names_each_plugin(rule_project, cli):
    rule_project.write({path: f"{name}\n" for name, path in EVERY.items()})
    code, out = cli(rule_project, "--json", "list")
    assert code == 0
    assert {r["plugin"]: r["id"] for r in json.loads(out)["rules"]} == {
        "amazonq": "a", "junie": "project/junie-guidelines", "augment": "a-2", "zed": "project/rules",
        "trae": "a-3"}


def test_cli_plugins_lists_them_as_importers_on_by_default(rule_project, cli):
    code, out = cli(rule_project, "--json", "plugins")
    importers = {i["name"]: i for i in json.loads(out)["importers"]}
    for name in ("roo", *EVERY):
        assert importers[name]["default"] is True and importers[name]["enabled"] is True
