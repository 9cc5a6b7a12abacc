"""Importer mappings pinned where mutation testing found them unpinned (issue 32): Kiro,
Windsurf, Cline and Roo, and the first ones for ``.agent(s)``/``.omp``/``.xcsh``.

What a user sees (each importer's summary and default are checked with the others' in
``test_mutants_importers.py``): the rules discovery makes of a tool's files, what an evaluation answers and
the errors it reports. docs/mutation.md lists the mutants these kill and the ones left,
explained.
"""

from __future__ import annotations

import os
import shutil

import pytest

from rules_core import hookimpl
from rules_core.model import Facts, Verdict
from importer_helpers import BAD_AGENTS, discover
from suite_helpers import git_init

def errors(found):
    return sorted((e.kind, e.path.rsplit("/", 1)[-1], e.message) for e in found.errors)


# -- kiro -----------------------------------------------------------------------------------

def test_kiro_references_in_a_sub_folder_workspace_are_read_from_it_and_up_to_the_git_root(rule_project):
    # Kiro resolves #[[file:]] in the workspace (cwd); pi-rules reads inside the git root.
    git_init(rule_project.cwd)
    rule_project.write({
        "pkg/.kiro/steering/api.md": "Spec: #[[file:spec.md]]; shared: #[[file:../shared.md]]\n",
        "pkg/spec.md": "pkg spec\n", "spec.md": "root spec\n", "shared.md": "root shared\n",
    })
    found = discover(rule_project, rule_project.cwd / "pkg")
    assert found.errors == ()
    assert [(r.id, r.body) for r in found.rules] == [("api", "Spec: pkg spec; shared: root shared\n")]


def test_kiro_always_steering_is_budgeted_as_memory_and_the_other_modes_are_not(rule_project):
    rule_project.write({
        ".kiro/steering/a-always.md": "---\ninclusion: always\n---\nAlways.\n",
        ".kiro/steering/b-plain.md": "No frontmatter.\n",
        ".kiro/steering/c-match.md": "---\ninclusion: fileMatch\nfileMatchPattern: src/**\n---\nMatch.\n",
        ".kiro/steering/d-auto.md": "---\ninclusion: auto\ndescription: Deploys\n---\nAuto.\n",
        ".kiro/steering/e-manual.md": "---\ninclusion: manual\n---\nManual.\n",
    })
    found = discover(rule_project)
    assert found.errors == ()
    assert [(r.id, r.pool and r.pool.name) for r in found.rules] == [
        ("a-always", "memory"), ("b-plain", "memory"), ("c-match", None), ("d-auto", None), ("e-manual", None)]


@pytest.mark.parametrize("path, front", [(".kiro/steering/a.md", "inclusion: always"),
                                         (".windsurf/rules/a.md", "trigger: always_on")])
def test_a_bad_peer_key_is_reported_with_its_fix(rule_project, path, front):
    rule_project.write({path: f"---\n{front}\nagents: 5\n---\nAlways.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert errors(found) == [("invalid-value", "a.md", BAD_AGENTS)]


def test_a_kiro_description_from_a_heading_drops_its_closing_hashes(rule_project):
    # CommonMark: a closing run of '#' is not part of an ATX heading's text.
    rule_project.write({".kiro/steering/api.md": "---\ninclusion: always\n---\n## API standards ##\nUse REST.\n"})
    assert [r.description for r in discover(rule_project).rules] == ["API standards"]


def test_a_file_match_pattern_written_with_underscores_is_named_in_the_fix(rule_project):
    rule_project.write({".kiro/steering/a.md": "---\ninclusion: fileMatch\nfile_match_pattern: src/**\n---\nA.\n"})
    [(_, _, message)] = errors(discover(rule_project))
    assert "(this file has file_match_pattern:, which Kiro does not read — rename it to fileMatchPattern)" in message


def test_a_kiro_steering_file_named_just_dot_md_is_the_rule_md(rule_project):
    rule_project.write({".kiro/steering/.md": "Hidden name.\n", ".kiro/steering/md.md": "Also md.\n"})
    found = discover(rule_project)
    assert [(r.id, r.body) for r in found.rules] == [("md", "Hidden name.\n"), ("md-2", "Also md.\n")]


class _InCi:
    """A third-party matcher judging a condition of its own on every rule (default rank):
    passed while the prompt asks something, failed for a greeting."""

    @hookimpl
    def pi_rules_match(self, rule, context):
        if context.facts.prompt == "hello":
            return [Verdict("ci", False, ("not in CI",))]
        return [Verdict("ci", True, ("running in CI",))]


def test_a_kiro_manual_verdict_is_ranked_before_a_third_party_matchers(rule_project):
    rule_project.write({".kiro/steering/deploy.md": "---\ninclusion: manual\n---\nDeploy steps.\n"})
    engine = rule_project.engine(plugins=[("in-ci", _InCi())])
    evaluation = engine.evaluate(Facts(cwd=str(rule_project.cwd), prompt="how do I #deploy?"))
    assert [(o.rule.id, o.status, o.reasons) for o in evaluation.outcomes] == [
        ("deploy", "on-demand", ("the prompt names #deploy", "running in CI"))]
    missing = engine.evaluate(Facts(cwd=str(rule_project.cwd), prompt="hello"))
    assert [(o.rule.id, o.status, o.reasons) for o in missing.outcomes] == [
        ("deploy", "inactive", ("manual steering file: name #deploy in the prompt to include it", "not in CI"))]


# -- windsurf -------------------------------------------------------------------------------

def test_windsurf_files_above_the_working_directory_get_a_cwd_only_warning(rule_project):
    rule_project.write({".windsurf/rules/a.md": "---\ntrigger: always_on\n---\nA.\n",
                        ".devin/rules/b.md": "---\ntrigger: always_on\n---\nB.\n",
                        ".windsurfrules": "Legacy.\n", "sub/x.txt": "x"})
    git_init(rule_project.cwd)
    found = discover(rule_project, rule_project.cwd / "sub")
    assert found.rules == ()
    assert sorted((w.code, w.path) for w in found.warnings if w.plugin == "windsurf") == [
        ("cwd-only", str(rule_project.cwd / ".devin/rules")),
        ("cwd-only", str(rule_project.cwd / ".windsurf/rules")),
        ("cwd-only", str(rule_project.cwd / ".windsurfrules"))]


def test_a_windsurf_description_from_a_heading_drops_its_closing_hashes(rule_project):
    rule_project.write({".windsurf/rules/py.md": "---\ntrigger: model_decision\n---\n# Python style #\nPEP 8.\n"})
    assert [r.description for r in discover(rule_project).rules] == ["Python style"]


def test_windsurf_globs_are_ignored_under_every_trigger_but_glob(rule_project):
    rule_project.write({
        ".windsurf/rules/a.md": "---\ntrigger: always_on\nglobs: src/**\n---\nA.\n",
        ".windsurf/rules/b.md": "---\ntrigger: model_decision\nglobs: src/**\ndescription: B\n---\nB.\n",
        ".windsurf/rules/c.md": "---\ntrigger: glob\nglobs: src/**\n---\nC.\n",
    })
    found = discover(rule_project)
    assert [(r.id, r.always_apply, r.globs, r.load) for r in found.rules] == [
        ("a", True, (), "pinned"), ("b", False, (), "on-demand"), ("c", False, ("src/**",), "pinned")]


def test_windsurf_globs_without_a_trigger_and_a_glob_trigger_without_globs_say_how_to_fix_them(rule_project):
    rule_project.write({".windsurf/rules/a.md": "---\nglobs: 5\n---\nA.\n",
                        ".windsurf/rules/b.md": "---\ntrigger: glob\n---\nB.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert errors(found) == [
        ("invalid-value", "a.md", 'globs must be a comma-separated string or a list of glob strings, got the number 5; '
                                  'write globs: "src/**/*.ts, docs/**" or one quoted pattern per list item'),
        ("invalid-value", "b.md", 'trigger: glob needs globs naming the files it applies to; add globs: "src/**/*.ts" '
                                  '(or a list), or choose another trigger')]


# -- cline ----------------------------------------------------------------------------------

def test_an_untrusted_project_with_only_cline_rules_is_said_to_hold_rules(rule_project):
    # What serve's trust_status reports as project_rules: lstat of each importer's markers.
    from rules_hosts.session.trust import has_project_rules, project_markers

    markers = project_markers(rule_project.engine().hooks.importers())
    assert not has_project_rules(str(rule_project.cwd), markers)
    for name in (".clinerules", ".cline/rules/a.md"):
        project = rule_project.cwd / name.split("/")[0]
        rule_project.write({name: "Rule.\n"})
        assert has_project_rules(str(rule_project.cwd), markers), name
        shutil.rmtree(project) if project.is_dir() else project.unlink()


def test_a_cline_rules_folder_alone_owns_the_directory(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({".cline/rules/a.md": "Current layout.\n", "sub/x.txt": "x"})
    for cwd in (rule_project.cwd, rule_project.cwd / "sub"):
        assert [(r.id, r.always_apply) for r in discover(rule_project, cwd).rules] == [("a", True)], cwd


def test_a_plain_file_or_a_fifo_at_cline_rules_is_no_cline_format(rule_project):
    git_init(rule_project.cwd)
    rule_project.write({".cline/rules": "not a folder\n", ".clinerules/up.md": "Above.\n"})
    (rule_project.cwd / "pkg/.cline").mkdir(parents=True)
    os.mkfifo(rule_project.cwd / "pkg/.cline/rules")
    found = discover(rule_project)
    assert ([r.relative_path for r in found.rules], found.errors) == (["up.md"], ())
    # From pkg, whose .cline/rules is a FIFO, the walk goes on up to the owner.
    found = discover(rule_project, rule_project.cwd / "pkg")
    assert ([r.relative_path for r in found.rules], found.errors) == (["up.md"], ())


def test_a_broken_clinerules_link_is_reported_by_the_cline_importer(rule_project):
    (rule_project.cwd / ".clinerules").symlink_to("nowhere")
    found = discover(rule_project)
    assert [(e.kind, e.plugin, e.message) for e in found.errors] == [
        ("read-failure", "cline", "broken symbolic link; point it at an existing file or delete it")]


def test_bad_cline_keys_are_reported_with_their_fix(rule_project):
    rule_project.write({".clinerules/a.md": "---\ndescription: 5\n---\nA.\n",
                        ".clinerules/b.md": "---\npaths: [5]\n---\nB.\n",
                        ".clinerules/c.md": "---\npaths: 5\n---\nC.\n",
                        ".clinerules/d.md": "---\nagents: 5\n---\nD.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert errors(found) == [
        ("invalid-value", "a.md", "description must be a string, got a number; quote it"),
        ("invalid-value", "b.md", 'paths entries must be glob strings; quote each one, e.g. - "src/**"'),
        ("invalid-value", "c.md", "paths must be a list of glob strings, got a number"),
        ("invalid-value", "d.md", BAD_AGENTS)]


# -- roo ------------------------------------------------------------------------------------

def ids(found):
    return [r.id for r in found.rules]


def test_roo_skips_thumbs_db_as_its_loader_does(rule_project):
    rule_project.write({".roo/rules/Thumbs.db": "not a rule", ".roo/rules/a.md": "A.\n"})
    assert ids(discover(rule_project)) == ["a"]


def test_roo_orders_by_file_name_lower_cased_and_modes_by_name(rule_project):
    # Roo sorts a folder's files by basename().toLowerCase(): "_b.md" < "a.md" < "C.md".
    rule_project.write({".roo/rules/a.md": "A.\n", ".roo/rules/C.md": "C.\n", ".roo/rules/_b.md": "B.\n",
                        ".roo/rules-code/z.md": "Code.\n", ".roo/rules-docs/d.md": "Docs.\n"})
    (rule_project.home / ".roo/rules-code").mkdir(parents=True)
    (rule_project.home / ".roo/rules-code/y.md").write_text("Home code.\n")
    (rule_project.home / ".roo/rules-docs").mkdir(parents=True)
    (rule_project.home / ".roo/rules-docs/x.md").write_text("Home docs.\n")
    found = discover(rule_project)
    assert [(r.id, r.source, r.extra.get("agents")) for r in found.rules] == [
        ("_b", "project", None), ("a", "project", None), ("C", "project", None),
        ("z", "project", ("code",)), ("d", "project", ("docs",)),
        ("y", "global", ("code",)), ("x", "global", ("docs",))]


def test_a_roorules_file_comes_before_the_mode_folders_and_applies_to_every_agent(rule_project):
    rule_project.write({".roorules": "General.\n", ".roo/rules-code/a.md": "Code.\n"})
    engine = rule_project.engine()
    main = engine.evaluate(rule_project.facts())
    assert [(o.rule.id, o.status) for o in main.outcomes] == [("project/roorules", "active"), ("a", "inactive")]
    code = engine.evaluate(rule_project.facts(agent="code"))
    assert [(o.rule.id, o.status) for o in code.outcomes] == [("project/roorules", "active"), ("a", "active")]


def test_an_unlistable_global_roo_folder_is_reported_and_the_project_rules_stay(rule_project, monkeypatch):
    from importer_helpers import deny_listing

    rule_project.write({".roo/rules/a.md": "A.\n"})
    (rule_project.home / ".roo/rules").mkdir(parents=True)
    deny_listing(monkeypatch, rule_project.home / ".roo/rules")
    found = discover(rule_project)
    assert ids(found) == ["a"]
    assert [(e.kind, e.path) for e in found.errors] == [("source-unreadable", str(rule_project.home / ".roo/rules"))]


def test_a_roo_folder_linked_out_of_the_git_root_is_not_even_listed_for_modes(rule_project, tmp_path):
    outside = tmp_path / "outside"
    (outside / "rules-code").mkdir(parents=True)
    (outside / "rules-code/x.md").write_text("Outside.\n")
    git_init(rule_project.cwd)
    (rule_project.cwd / ".roo").symlink_to(outside)
    rule_project.write({".roorules-docs": "Docs.\n"})
    found = discover(rule_project)
    assert ids(found) == ["project/roorules-docs"]
    # Only the folders named without listing the link: the general one and cwd's own mode.
    assert [(e.kind, e.path) for e in found.errors] == [
        ("source-unreadable", str(rule_project.cwd / ".roo/rules")),
        ("source-unreadable", str(rule_project.cwd / ".roo/rules-docs"))]


# -- .agent(s), .omp, .xcsh ----------------------------------------------------------------

def test_an_untrusted_project_with_only_agent_folders_or_rules_md_is_said_to_hold_rules(rule_project):
    from rules_hosts.session.trust import has_project_rules, project_markers

    markers = project_markers(rule_project.engine().hooks.importers())
    assert not has_project_rules(str(rule_project.cwd), markers)
    for name in (".agent/rules/a.md", ".agents/rules/a.md", ".omp/RULES.md", ".xcsh/rules/a.md", ".xcsh/RULES.md"):
        rule_project.write({name: "Rule.\n"})
        assert has_project_rules(str(rule_project.cwd), markers), name
        shutil.rmtree(rule_project.cwd / name.split("/")[0])
    rule_project.write({".omp/settings.json": "{}", ".agents/notes.md": "Not rules.\n"})
    assert not has_project_rules(str(rule_project.cwd), markers)


def test_bad_agents_rule_keys_are_reported_with_their_fix(rule_project):
    rule_project.write({".agents/rules/a.md": "---\nenabled: x\n---\nA.\n",
                        ".agents/rules/b.md": "---\nglobs: [5]\n---\nB.\n",
                        ".agents/rules/c.md": "---\ntrigger: glob\n---\nC.\n",
                        ".agents/rules/d.md": "---\nagents: 5\n---\nD.\n",
                        ".agents/rules/e.md": "---\ndescription: 5\n---\nE.\n",
                        ".agents/rules/f.md": "---\nglobs: 5\n---\nF.\n"})
    found = discover(rule_project)
    assert found.rules == ()
    assert errors(found) == [
        ("invalid-value", "a.md", "enabled must be true or false, got 'x'; write enabled: false, unquoted"),
        ("invalid-value", "b.md", 'globs entries must be glob strings; quote each one, e.g. - "src/**"'),
        ("invalid-value", "c.md", 'trigger: glob needs globs; add globs: "src/**/*.ts" (comma-separated or a list)'),
        ("invalid-value", "d.md", BAD_AGENTS),
        ("invalid-value", "e.md", "description must be a string, got a number; quote it"),
        ("invalid-value", "f.md", "globs must be a glob string or a list of them, got a number")]


def test_agents_rules_folders_hold_only_visible_md_and_mdc_files(rule_project):
    rule_project.write({".agents/rules/a.md": "A.\n", ".agents/rules/b.mdc": "B.\n",
                        ".agents/rules/notes.txt": "Not a rule.\n", ".agents/rules/.swap.md": "Not a rule.\n"})
    assert [r.id for r in discover(rule_project).rules] == ["a", "b"]


def test_trigger_agent_is_read_as_model_decision(rule_project):
    rule_project.write({".agents/rules/a.md": "---\ntrigger: Agent\ndescription: When deploying\n---\nA.\n"})
    found = discover(rule_project)
    assert [(r.id, r.load, r.always_apply) for r in found.rules] == [("a", "on-demand", False)]


def test_user_agent_rules_come_before_user_agents_rules_whatever_the_file_names(rule_project):
    for path in (".agent/rules/z.md", ".agents/rules/a.md"):
        (rule_project.home / path).parent.mkdir(parents=True, exist_ok=True)
        (rule_project.home / path).write_text("Mine.\n")
    assert [r.id for r in discover(rule_project).rules] == ["z", "a"]


def test_an_unlistable_omp_folder_and_a_broken_rules_md_are_reported_by_the_agents_importer(rule_project, monkeypatch):
    from importer_helpers import deny_listing

    rule_project.write({".omp/x": "x", "pkg/.xcsh/y": "y"})
    (rule_project.cwd / "pkg/.xcsh/RULES.md").symlink_to("nowhere")
    deny_listing(monkeypatch, rule_project.cwd / ".omp")
    git_init(rule_project.cwd)
    found = discover(rule_project, rule_project.cwd / "pkg")
    assert sorted((e.kind, e.plugin, e.message) for e in found.errors) == [
        ("read-failure", "agents", "broken symbolic link; point it at an existing file or delete it"),
        ("source-unreadable", "agents", "cannot list this folder (Permission denied); its RULES.md is not loaded")]

