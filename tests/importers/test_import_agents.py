"""The agents importer: .agent(s)/rules (oh-my-pi, Antigravity), .omp and .xcsh rules and
their sticky RULES.md, at project and user level."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

from importer_helpers import cli, record  # noqa: F401 - pytest fixtures
from importer_helpers import by_id, copy_fixture, deny_listing, discover, error_rows, evaluate, git_init, outcomes

errors = error_rows


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped fixture repository, copied and made a git root."""
    return copy_fixture(rule_project, "agents", git=True)


def error_of(project, text: str, name: str = ".agents/rules/bad.md") -> tuple[str, str]:
    project.write({name: text})
    assert discover(project).rules == ()
    ((kind, path, message),) = errors(project)
    assert path == str(project.cwd / name)
    return kind, message


# -- the fixture repository, from its root -----------------------------------------------


def test_fixture_order_agent_then_agents_then_omp_then_xcsh(repo):
    discovery = discover(repo)
    assert discovery.errors == ()
    assert [(r.id, r.relative_path, r.file.plugin, r.file.path) for r in discovery.rules] == [
        (stem, rel, "agents", str(repo.cwd / where / rel)) for stem, rel, where in [
            ("architecture", "architecture.md", ".agent/rules"),
            ("dba-persona", "dba-persona.md", ".agent/rules"),
            ("python-style", "python-style.md", ".agent/rules"),
            ("release-checklist", "release-checklist.md", ".agent/rules"),
            ("code-review", "code-review.md", ".agents/rules"),
            ("commits", "commits.md", ".agents/rules"),
            ("no-console", "no-console.md", ".agents/rules"),
            ("old-api", "old-api.md", ".agents/rules"),
            ("typescript", "typescript.mdc", ".agents/rules"),
            ("errors", "errors.md", ".omp/rules"),
            ("RULES", "RULES.md", ".omp"),
            ("go", "go.mdc", ".xcsh/rules"),
            ("RULES-2", "RULES.md", ".xcsh"),
        ]
    ]
    assert {(r.source, r.file.base) for r in discovery.rules} == {("project", str(repo.cwd))}


def test_subfolders_and_workflows_are_not_rules(repo):
    paths = {r.file.path for r in discover(repo).rules}
    assert str(repo.cwd / ".agent/rules/drafts/wip.md") not in paths
    assert str(repo.cwd / ".agent/workflows/deploy.md") not in paths


def test_list_json_names_the_real_file(repo, cli):
    code, out = cli(repo, "--json", "list")
    assert code == 0
    rules = {r["id"]: _without_conditions(r) for r in json.loads(out)["rules"]}
    assert rules["dba-persona"] == {
        "id": "dba-persona", "relativePath": "dba-persona.md", "path": str(repo.cwd / ".agent/rules/dba-persona.md"),
        "source": "project", "plugin": "agents",
        "description": "Act as a DBA when the task touches SQL schemas or migrations",
        "load": "on-demand", "priority": 0, "enforcement": "inform",
    }


# -- mapping: one test per rule -------------------------------------------------------------


def test_trigger_always_on_is_always_applied(repo):
    rule = by_id(repo)["architecture"]
    assert rule.always_apply and rule.load == "pinned" and rule.description == "Architecture"
    assert outcomes(repo)["architecture"].status == "active"


def test_trigger_glob_with_an_unquoted_glob_is_read_as_written(repo):
    rule = by_id(repo)["python-style"]
    assert (rule.globs, rule.match, rule.always_apply) == (("**/*.py",), "touched", False)
    assert errors(repo) == []
    outcome = outcomes(repo, touched=["tools/gen.py"])["python-style"]
    assert (outcome.status, outcome.reasons) == ("active", ("touched tools/gen.py",))
    assert outcomes(repo, touched=["src/index.ts"])["python-style"].status == "inactive"


def test_trigger_model_decision_is_on_demand_and_listed_in_the_index(repo):
    evaluation = evaluate(repo)
    assert {o.rule.id: o.status for o in evaluation.outcomes}["dba-persona"] == "on-demand"
    assert ("- dba-persona.md — Act as a DBA when the task touches SQL schemas or migrations "
            "(fetch with the read_rule tool)") in evaluation.section


def test_trigger_manual_is_on_demand_described_by_its_heading(repo):
    rule = by_id(repo)["release-checklist"]
    assert (rule.load, rule.always_apply, rule.description) == ("on-demand", False, "Release checklist")


def test_globs_list_without_always_apply_are_touched_globs(repo):
    rule = by_id(repo)["typescript"]
    assert (rule.globs, rule.load, rule.always_apply) == (("src/**/*.ts", "src/**/*.tsx"), "pinned", False)
    assert outcomes(repo, touched=["src/index.ts"])["typescript"].reasons == ("touched src/index.ts",)


def test_always_apply_true_is_always_applied(repo):
    rule = by_id(repo)["commits"]
    assert rule.always_apply and rule.description == "Commit message format"


def test_description_only_is_fetchable_on_demand(repo, cli):
    rule = by_id(repo)["code-review"]
    assert (rule.load, rule.globs, rule.always_apply) == ("on-demand", (), False)
    code, out = cli(repo, "read", "code-review.md")
    assert code == 0 and out.startswith("Check tests first")


def test_no_keys_at_all_is_on_demand_described_by_heading_then_stem(repo):
    repo.write({".agents/rules/notes.md": "Plain notes.\n", ".agents/rules/headed.md": "## Headed\nText.\n"})
    rules = by_id(repo)
    assert (rules["notes"].load, rules["notes"].description) == ("on-demand", "notes")
    assert rules["headed"].description == "Headed"


def test_cursors_empty_template_keys_mean_absent(repo):
    repo.write({".agents/rules/tpl.mdc": "---\ndescription:\nglobs:\nalwaysApply: false\n---\n# From Cursor\nX.\n"})
    rule = by_id(repo)["tpl"]
    assert (rule.load, rule.globs, rule.description) == ("on-demand", (), "From Cursor")
    assert errors(repo) == []


def test_comma_string_globs_split_only_outside_braces(repo):
    assert by_id(repo)["errors"].globs == ("src/**/*.{ts,tsx}", "lib/**")


def test_stream_rule_keys_are_validated_and_shown(repo, cli):
    rule = by_id(repo)["no-console"]
    assert dict(rule.extra) == {"condition": ("console\\.log\\(",), "scope": ("tool:edit(*.ts)", "tool:write(*.ts)"),
                                "interruptMode": "tool-only", "agents": ("main", "reviewer")}
    assert outcomes(repo)["no-console"].reasons[0].startswith("stream rule: fires when tool:edit(*.ts)")
    code, shown = cli(repo, "show", "no-console")
    assert code == 0
    assert "agents: main, reviewer" in shown and "interruptMode: tool-only" in shown


def test_enabled_false_is_listed_but_never_activates(repo):
    outcome = outcomes(repo, touched=["src/index.ts"])["old-api"]
    assert (outcome.status, outcome.reasons) == ("inactive", ("turned off: enabled: false (oh-my-pi skips this rule)",))


def test_an_empty_body_is_listed_but_never_activates(repo):
    repo.write({".agents/rules/empty.md": "---\nalwaysApply: true\n---\n\n"})
    outcome = outcomes(repo)["empty"]
    assert outcome.reasons == ("turned off: the body is empty, and oh-my-pi skips rules without content",)


def test_omp_sticky_rules_md_is_always_applied(repo):
    rule = by_id(repo)["RULES"]
    assert rule.always_apply and rule.description == "Project rules" and rule.file.path == str(repo.cwd / ".omp/RULES.md")


def test_sticky_rules_md_ignores_its_activation_keys(repo):
    repo.write({".omp/RULES.md": "---\nalwaysApply: false\nglobs: x/**\nenabled: false\n---\nStill sticky.\n"})
    rule = by_id(repo)["RULES"]
    assert rule.always_apply and rule.globs == () and outcomes(repo)["RULES"].status == "active"


def test_an_empty_sticky_rules_md_is_listed_but_off(repo):
    repo.write({".omp/RULES.md": "\n"})
    assert outcomes(repo)["RULES"].reasons == ("turned off: RULES.md is empty, and oh-my-pi skips an empty RULES.md",)


def test_xcsh_rules_and_sticky_rules_md(repo):
    rules = by_id(repo)
    assert rules["go"].globs == ("**/*.go",)
    assert rules["RULES-2"].always_apply and rules["RULES-2"].description == "xcsh project rules"


def test_bodies_are_kept_verbatim(repo):
    assert by_id(repo)["architecture"].body == (
        "\n# Architecture\n\nServices talk through the event bus only; no service imports another service's code.\n")


def test_unquoted_globs_in_list_items_are_recovered_too(repo):
    repo.write({".agents/rules/list.md": "---\nglobs:\n  - *.ts   # TypeScript\n  - src/**\n---\nL.\n"})
    assert by_id(repo)["list"].globs == ("*.ts", "src/**")
    assert errors(repo) == []


def test_trigger_values_are_read_case_insensitively(repo):
    repo.write({".agent/rules/loud.md": "---\ntrigger: Always_On \n---\nL.\n"})
    assert by_id(repo)["loud"].always_apply


def test_kebab_case_keys_are_read_as_oh_my_pi_reads_them(repo):
    repo.write({".agents/rules/kebab.md": "---\nalways-apply: true\ninterrupt-mode: never\n---\nK.\n"})
    rule = by_id(repo)["kebab"]
    assert rule.always_apply and dict(rule.extra) == {"interruptMode": "never"}


def test_values_holding_colon_space_and_tab_indents_are_recovered(repo):
    repo.write({
        ".agents/rules/colon.md": "---\ndescription: Use when: editing SQL\nglobs: '**/*.sql'\n---\nC.\n",
        ".agents/rules/tabs.md": "---\nglobs:\n\t- 'db/**'\n---\nT.\n",
    })
    rules = by_id(repo)
    assert (rules["colon"].description, rules["colon"].globs) == ("Use when: editing SQL", ("**/*.sql",))
    assert rules["tabs"].globs == ("db/**",)
    assert errors(repo) == []


def test_ids_share_one_namespace_with_native_rules(repo):
    repo.write({".pi/rules/typescript.md": rule_text(globs=["x"])})
    ids = [(r.id, r.file.plugin) for r in discover(repo).rules]
    assert ("typescript", "native") in ids and ("typescript-2", "agents") in ids


def test_a_glob_that_cannot_compile_is_reported_and_the_rule_still_loads(repo):
    repo.write({".agents/rules/odd.md": "---\nglobs: ['src/**', '!']\n---\nO.\n"})
    assert by_id(repo)["odd"].globs == ("src/**", "!")
    assert errors(repo) == [("invalid-value", str(repo.cwd / ".agents/rules/odd.md"), "glob '!' cannot be used: empty pattern")]


# -- the walk: cwd and ancestors up to the git root, nearest first ------------------------------


def test_from_a_package_the_walk_reaches_the_root_nearest_first(repo):
    cwd = repo.cwd / "packages" / "web"
    rules = discover(repo, cwd).rules
    assert [r.id for r in rules] == ["react", "architecture", "dba-persona", "python-style", "release-checklist",
                                      "code-review", "commits", "no-console", "old-api", "typescript", "RULES", "RULES-2"]
    bases = {r.id: r.file.base for r in rules}
    assert bases["react"] == str(cwd) and bases["typescript"] == str(repo.cwd)


def test_each_rule_globs_are_relative_to_the_directory_owning_its_agent_folder(repo):
    cwd = repo.cwd / "packages" / "web"
    result = outcomes(repo, cwd, touched=["src/App.tsx"])
    assert (result["react"].status, result["react"].reasons) == ("active", ("touched src/App.tsx",))
    assert result["typescript"].status == "inactive"  # the root's src/**, not the package's
    root_file = str(repo.cwd / "src" / "index.ts")
    assert outcomes(repo, cwd, touched=[root_file])["typescript"].reasons == (f"touched {root_file}",)


def test_omp_and_xcsh_rules_folders_are_read_at_cwd_only(repo):
    ids = by_id(repo, repo.cwd / "packages" / "web")
    assert "errors" not in ids and "go" not in ids


def test_the_sticky_walk_stops_at_the_nearest_non_empty_config_folder(repo):
    cwd = repo.cwd / "packages" / "web"
    repo.write({"packages/web/.omp/prompts/fix.md": "Fix it.\n"})  # non-empty, no RULES.md
    rules = discover(repo, cwd).rules
    assert [r.file.path for r in rules if r.relative_path == "RULES.md"] == [str(repo.cwd / ".xcsh/RULES.md")]
    (cwd / ".omp" / "prompts" / "fix.md").unlink()
    (cwd / ".omp" / "prompts").rmdir()  # an empty .omp/ does not stop the walk
    assert [r.file.path for r in discover(repo, cwd).rules if r.relative_path == "RULES.md"] == [
        str(repo.cwd / ".omp/RULES.md"), str(repo.cwd / ".xcsh/RULES.md")]


def test_the_walk_stops_at_the_git_root(tmp_path, rule_project):
    make_rules(tmp_path, {".agent/rules/above.md": "Above.\n", ".omp/RULES.md": "Above.\n"})
    git_init(rule_project.cwd)
    assert discover(rule_project).rules == ()


def test_outside_a_repository_only_cwd_is_read(rule_project):
    rule_project.write({".agent/rules/root.md": "R.\n", ".omp/RULES.md": "S.\n", "sub/x": ""})
    assert discover(rule_project, rule_project.cwd / "sub").rules == ()
    assert [r.id for r in discover(rule_project).rules] == ["root", "RULES"]


# -- user level: global rules ------------------------------------------------------------------


def user_files(home: Path) -> None:
    make_rules(home, {
        ".agent/rules/mine.md": "---\nglobs: ['**/*.rs']\n---\nRust.\n",
        ".agents/rules/prefs.md": "---\nalwaysApply: true\n---\nBe terse.\n",
        ".omp/agent/rules/omp.md": "---\ndescription: Omp user rule\n---\nO.\n",
        ".omp/agent/RULES.md": "User sticky.\n",
        ".xcsh/agent/rules/x.md": "X.\n",
        ".xcsh/agent/RULES.md": "Xcsh sticky.\n",
        ".pi/agent/rules/mine.md": rule_text(globs=["x"]),
    })


def test_user_level_files_are_global_rules_after_the_native_global_dir(rule_project):
    user_files(rule_project.home)
    rules = discover(rule_project).rules
    home = rule_project.home
    assert [(r.id, r.file.plugin, r.source, r.file.path) for r in rules] == [
        ("mine", "global", "global", str(home / ".pi/agent/rules/mine.md")),
        ("mine-2", "agents", "global", str(home / ".agent/rules/mine.md")),
        ("prefs", "agents", "global", str(home / ".agents/rules/prefs.md")),
        ("omp", "agents", "global", str(home / ".omp/agent/rules/omp.md")),
        ("RULES", "agents", "global", str(home / ".omp/agent/RULES.md")),
        ("x", "agents", "global", str(home / ".xcsh/agent/rules/x.md")),
        ("RULES-2", "agents", "global", str(home / ".xcsh/agent/RULES.md")),
    ]
    assert {r.file.base for r in rules} == {str(rule_project.cwd)}
    assert rules[4].always_apply and rules[2].always_apply and rules[3].load == "on-demand"


def test_user_level_globs_are_relative_to_cwd(rule_project):
    user_files(rule_project.home)
    assert outcomes(rule_project, touched=["src/main.rs"])["mine-2"].status == "active"


def test_project_rules_come_before_user_rules(repo):
    user_files(repo.home)
    sources = [r.source for r in discover(repo).rules]
    assert sources == sorted(sources, key=["project", "global"].index)


def test_home_is_not_walked_as_a_project_directory(rule_project):
    home = rule_project.home
    make_rules(home, {".agent/rules/h.md": "H.\n", "proj/x": ""})
    git_init(home)
    (rule, ) = discover(rule_project, home / "proj").rules
    assert (rule.source, rule.file.base) == ("global", str(home / "proj"))


def test_an_untrusted_project_still_gets_user_level_rules_only(repo):
    user_files(repo.home)
    rules = discover(repo, trusted=False).rules
    assert {r.source for r in rules} == {"global"} and "mine-2" in {r.id for r in rules}


# -- errors: a damaged file loads no rule -------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("---\nglobs: ['a']\nB.\n", "never closed"),
    ("---\n- a\n- b\n---\nB.\n", "frontmatter must be a mapping"),
    ("---\nglobs: [src/**, lib/**\n---\nB.\n", "did not find expected ',' or ']'"),
    ("---\nglobs:\n  nested: *.ts\n---\nB.\n", "line 3"),
    ("---\nglobs: a\nglobs: b\n---\nB.\n", "duplicate"),
])
def test_unrecoverable_frontmatter_is_a_yaml_syntax_error(rule_project, text, message):
    kind, got = error_of(rule_project, text)
    assert kind == "yaml-syntax" and message in got


@pytest.mark.parametrize("front, message", [
    ("alwaysApply: 'true'", "alwaysApply must be true or false, got 'true'; write alwaysApply: true, unquoted"),
    ("alwaysApply: yes", "alwaysApply must be true or false, got 'yes'"),
    ("globs: 42", "globs must be a glob string or a list of them, got a number"),
    ("globs: [src/**, 1]", "globs entries must be glob strings"),
    ("trigger: sometimes", "unknown trigger 'sometimes'; use one of always_on, glob, model_decision, manual"),
    ("trigger: glob", "trigger: glob needs globs"),
    ("description: 12", "description must be a string, got a number"),
    ("enabled: 'false'", "enabled must be true or false, got 'false'"),
])
def test_a_bad_value_of_a_key_we_read_is_invalid_value(rule_project, front, message):
    kind, got = error_of(rule_project, f"---\n{front}\n---\nB.\n")
    assert kind == "invalid-value" and message in got


@pytest.mark.parametrize("written, meant", [
    ("always", "always_on"), ("always-on", "always_on"), ("globs", "glob"), ("model-decision", "model_decision"),
    ("manually", "manual"),
])
def test_a_near_miss_trigger_names_the_mode_it_is_closest_to(rule_project, written, meant):
    kind, got = error_of(rule_project, f"---\ntrigger: {written}\n---\nB.\n")
    assert kind == "invalid-value"
    assert got == f"unknown trigger {written!r} — did you mean {meant!r}?; use one of always_on, glob, model_decision, manual"


def test_a_bad_description_in_a_sticky_rules_md_is_invalid_value(rule_project):
    kind, got = error_of(rule_project, "---\ndescription: [a]\n---\nB.\n", ".omp/RULES.md")
    assert kind == "invalid-value" and "description must be a string" in got


def test_unknown_keys_are_ignored(rule_project):
    rule_project.write({".agents/rules/x.md": "---\nalwaysApply: true\nmodel: gpt\nfoo: [1]\n---\nX.\n"})
    assert by_id(rule_project)["x"].always_apply and errors(rule_project) == []


# -- hostile files -----------------------------------------------------------------------------


def test_invalid_utf8_is_a_read_failure(rule_project):
    rule_project.write({".agent/rules/latin1.md": b"caf\xe9\n"})
    assert [(k, m) for k, _, m in errors(rule_project)] == [("read-failure", "not valid UTF-8 (byte 3); save the file as UTF-8")]


def test_binary_and_huge_files_are_read_failures(rule_project):
    rule_project.write({".agent/rules/a.md": bytes(range(256)), ".agent/rules/b.md": "x" * (1024 * 1024 + 1)})
    assert [k for k, _, _ in errors(rule_project)] == ["read-failure", "read-failure"]
    assert discover(rule_project).rules == ()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", [".agent/rules/pipe.md", ".omp/RULES.md", ".omp/rules/pipe.mdc"])
def test_a_fifo_named_like_a_rule_is_reported_never_opened(rule_project, name):
    target = rule_project.cwd / name
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    ((kind, path, message),) = errors(rule_project)
    assert (kind, path) == ("read-failure", str(target)) and "not a regular file" in message


def test_broken_symlinks_are_reported(rule_project):
    (rule_project.cwd / ".omp/rules").mkdir(parents=True)
    os.symlink(rule_project.cwd / "gone", rule_project.cwd / ".omp/RULES.md")
    os.symlink(rule_project.cwd / "gone", rule_project.cwd / ".omp/rules/r.md")
    assert sorted((k, p) for k, p, _ in errors(rule_project)) == [
        ("read-failure", str(rule_project.cwd / ".omp/RULES.md")),
        ("read-failure", str(rule_project.cwd / ".omp/rules/r.md")),
    ]


def test_an_unlistable_rules_folder_is_source_unreadable(rule_project, monkeypatch):
    folder = rule_project.cwd / ".agents" / "rules"
    folder.mkdir(parents=True)
    deny_listing(monkeypatch, folder)
    assert [(k, p) for k, p, _ in errors(rule_project)] == [("source-unreadable", str(folder))]


# -- turning it off ------------------------------------------------------------------------------


def test_import_none_reads_nothing_not_even_a_stat(repo, record):
    user_files(repo.home)
    repo.env["PI_RULES_IMPORT"] = "NONE"
    record.clear()
    assert {r.file.plugin for r in discover(repo).rules} == {"global"}
    assert [p for p in record if any(f"/{d}" in p for d in (".agent", ".omp", ".xcsh"))] == []


def test_selecting_another_importer_turns_agents_off(repo):
    user_files(repo.home)
    repo.env["PI_RULES_IMPORT"] = "cline"
    assert {r.file.plugin for r in discover(repo).rules} == {"global"}
    repo.env["PI_RULES_IMPORT"] = "agents"
    assert len([r for r in discover(repo).rules if r.file.plugin == "agents"]) == 13 + 6


def test_blocking_the_plugin_turns_it_off(repo, cli):
    code, out = cli(repo, "-p", "no:agents", "--json", "list")
    assert code == 0 and json.loads(out)["rules"] == []


def test_agents_is_an_importer_on_by_default(repo, cli):
    code, out = cli(repo, "plugins")
    assert code == 0
    line = next(l for l in out.splitlines() if l.strip().startswith("agents") and "enabled" in l)
    assert ".agent(s)/rules" in line


def test_an_unlistable_config_folder_stops_the_sticky_walk_with_an_error(rule_project, monkeypatch):
    git_init(rule_project.cwd)
    rule_project.write({".omp/RULES.md": "Root.\n", "pkg/.omp/x": ""})
    folder = rule_project.cwd / "pkg" / ".omp"
    deny_listing(monkeypatch, folder)
    cwd = rule_project.cwd / "pkg"
    assert discover(rule_project, cwd).rules == ()
    assert [(k, p) for k, p, _ in errors(rule_project, cwd)] == [("source-unreadable", str(folder))]


def _without_conditions(row: dict) -> dict:
    """A ``list --json`` row without ``conditions`` (issue 34 added them; tests/hosts/test_new_user.py)."""
    return {k: v for k, v in row.items() if k != "conditions"}
