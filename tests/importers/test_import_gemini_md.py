"""The ``gemini-md`` importer: Gemini CLI's GEMINI.md context files read in place — where
they are read, what they become, their memory imports and what a user is told."""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import pytest

from importer_helpers import FIXTURES, by_id, copy_fixture, discover, git_init, plugin_errors, status
from importer_helpers import cli, record  # noqa: F401 - pytest fixtures

NAME = "gemini-md"
mine = partial(by_id, plugin=NAME)
errors = partial(plugin_errors, plugin=NAME)


def ids(project, cwd: Path | None = None, **kwargs) -> list[str]:
    return [r.id for r in discover(project, cwd, **kwargs).rules if r.file.plugin == NAME]


def messages(project) -> list[str]:
    return [e.message for e in errors(project)]


def body(project, rule_id: str = "project/GEMINI") -> str:
    return mine(project)[rule_id].body


@pytest.fixture
def repo(rule_project):
    """The real-world-shaped fixture: a git repository and a home folder."""
    copy_fixture(rule_project, "gemini-md", git=True)
    shutil.copytree(FIXTURES / "gemini-md" / ".home", rule_project.home, dirs_exist_ok=True)
    return rule_project


@pytest.fixture
def project(rule_project):
    git_init(rule_project.cwd)
    return rule_project


# -- the fixture repository -------------------------------------------------------------------


def test_fixture_context_files_load_root_then_nested_shallow_first_then_global(repo):
    assert ids(repo) == [
        "project/GEMINI",
        "project/examples/astro-islands/GEMINI",
        "project/packages/core/GEMINI",
        "project/packages/react/GEMINI",
        "project/packages/styles/GEMINI",
        "project/packages/translations/GEMINI",
        "~/.gemini/GEMINI",
    ]
    assert errors(repo) == []


def test_fixture_root_imports_each_package_file_in_its_list_item(repo):
    text = body(repo)
    assert "- `core`: # Firebase UI Core\n\nThis document provides context for the `@invertase/firebaseui-core`" in text
    assert "- `translations`: # Firebase UI Translations\n" in text
    assert "@./packages" not in text
    assert '@import "@firebase-ui/styles/tailwind";' in text  # fenced in the imported file: kept as code


def test_fixture_nested_package_is_also_its_own_folder_scoped_rule(repo):
    rule_id = "project/packages/core/GEMINI"
    assert status(repo, rule_id, touched=["packages/core/src/index.ts"])[0] == "active"
    assert status(repo, rule_id, touched=["packages/react/src/index.ts"])[0] == "inactive"
    assert status(repo, "project/GEMINI")[0] == "active"


def test_fixture_example_imports_its_agents_file_and_leaves_prose_mentions(repo):
    # agents-md loads the nested AGENTS.md as a rule of its own: the import points to it,
    # and the text is kept inlined for a delivery that does not carry that rule.
    rule = mine(repo)["project/examples/astro-islands/GEMINI"]
    assert rule.body.endswith("## Imported Context\n\n(examples/astro-islands/AGENTS.md reaches you as a rule of "
                              "its own)\n")
    assert rule.inlined.endswith("## Imported Context\n\n# OutSystems Astro Islands Development Instructions\n\n"
                                 "## Components\n\n- For any JSX based libraries, the @jsxImportSource directive "
                                 "must be at the top of the file.\n  - Preact:\n\n```js\n/** @jsxImportSource "
                                 "preact */\n```\n")
    assert rule.points_to == (str(repo.cwd / "examples/astro-islands/AGENTS.md"),)


def test_fixture_global_context_file_is_a_global_rule(repo, cli):
    rule = mine(repo)["~/.gemini/GEMINI"]
    assert (rule.source, rule.always_apply, rule.description) == ("global", True, "Language")
    code, out = cli(repo, "--json", "list")
    rows = {r["id"]: r for r in json.loads(out)["rules"] if r["plugin"] == NAME}
    assert code == 0 and rows["~/.gemini/GEMINI"]["path"] == str(repo.home / ".gemini/GEMINI.md")


def test_fixture_untrusted_project_reads_only_the_global_file(repo):
    assert ids(repo, trusted=False) == ["~/.gemini/GEMINI"]


def test_fixture_import_none_reads_nothing(repo, record):
    repo.env["PI_RULES_IMPORT"] = "none"
    record.clear()
    assert ids(repo) == []
    assert [p for p in record if p.endswith("GEMINI.md")] == []


# -- where it reads ---------------------------------------------------------------------------


def test_ancestors_up_to_the_git_root_apply_always_from_a_package(project):
    project.write({"GEMINI.md": "# Root\n", "app/GEMINI.md": "# App\n"})
    assert ids(project, project.cwd / "app") == ["project/GEMINI", "project/app/GEMINI"]
    assert mine(project, project.cwd / "app")["project/app/GEMINI"].always_apply


def test_only_gemini_md_is_read(project):
    project.write({"GEMINI.md": "# G\n", ".gemini/GEMINI.md": "# not a project file\n", "gemini.md": "# lower\n"})
    assert ids(project) == ["project/GEMINI"]


# -- Gemini's import syntax -------------------------------------------------------------------


def test_relative_imports_same_folder_parent_and_subfolder(project):
    project.write({"app/GEMINI.md": "@./a.md @../top.md @sub/b.md\n", "app/a.md": "A\n", "top.md": "T\n",
                   "app/sub/b.md": "B\n"})
    assert body(project, "project/app/GEMINI") == "A T B\n"


def test_a_home_path_is_not_gemini_syntax_and_stays_text(project):
    project.write({"GEMINI.md": "Mine: @~/notes.md\n"})
    assert body(project) == "Mine: @~/notes.md\n" and errors(project) == []


def test_nested_imports_stop_after_five_hops(project):
    project.write({"GEMINI.md": "@./f1.md\n"} | {f"f{i}.md": f"{i} @./f{i + 1}.md\n" for i in range(1, 7)})
    assert body(project) == "1 2 3 4 5 @./f6.md\n"
    assert messages(project) == ["import @./f6.md in f5.md: not read — imports nest more than 5 levels deep; "
                                 "import the file from one nearer GEMINI.md"]


def test_circular_imports_are_cut(project):
    project.write({"GEMINI.md": "@./a.md\n", "a.md": "A @./b.md\n", "b.md": "B @./a.md\n"})
    assert body(project) == "A B @./a.md\n"
    assert "a.md is already being imported (a cycle)" in messages(project)[0]


def test_imports_in_code_are_not_read(project):
    project.write({"GEMINI.md": "`@./a.md`\n```\n@./a.md\n```\n@./a.md\n", "a.md": "A\n"})
    assert body(project) == "`@./a.md`\n```\n@./a.md\n```\nA\n"


def test_html_comments_are_kept_as_gemini_keeps_them(project):
    project.write({"GEMINI.md": "<!-- note -->\nText.\n"})
    assert body(project) == "<!-- note -->\nText.\n"


def test_import_outside_the_git_root_is_reported(project):
    (project.cwd.parent / "x.md").write_text("outside\n")
    project.write({"GEMINI.md": "@../x.md\n"})
    assert body(project) == "@../x.md\n"
    assert messages(project) == [f"import @../x.md: {project.cwd.parent}/x.md is outside the git root "
                                 f"{project.cwd}; not read — move the file inside it"]


def test_missing_import_is_an_error_of_the_importing_file(project, cli):
    project.write({"GEMINI.md": "@./docs/style.md\n"})
    code, out = cli(project, "check")
    assert (code, out) == (1, "invalid-value GEMINI.md: import @./docs/style.md: no such file docs/style.md; "
                              "create it or correct the path\n")


def test_editing_an_imported_file_is_seen_by_the_next_discovery(project):
    project.write({"GEMINI.md": "@./style.md\n", "style.md": "Tabs.\n"})
    engine = project.engine()
    engine.discover(str(project.cwd), True)
    (project.cwd / "style.md").write_text("Spaces.\n")
    again = engine.discover(str(project.cwd), True)
    assert [r.body for r in again.rules if r.file.plugin == NAME] == ["Spaces.\n"]
