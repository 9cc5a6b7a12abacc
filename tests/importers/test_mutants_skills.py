"""The ``skills`` importer pinned where mutation testing found it unpinned (issue 32).

What a user sees, through the CLI run in process on a real tree: ``report --json`` (each
skill's description, status and reasons, the errors), ``check --json`` (each warning and
where it points) and ``read``. docs/mutation.md ("Skills") lists the mutants these kill
and the ones left, explained.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rules_core.rule_tests.pytest_plugin import RuleProject, make_rules
from rules_hosts.session.trust import has_project_rules, project_markers
from importer_helpers import SkillProject, deny_listing
from suite_helpers import git_init

# A line no YAML reader accepts (an unclosed quote), so a skill holding it is read by the
# last, loose reading of top-level ``key: value`` lines (_skills_read._loose), as skill
# clients that split on the first colon read it.
BROKEN = 'compatibility: "node 20\n'


class Project(SkillProject):
    def skill(self, folder: str, frontmatter: str, body: str = "Body.\n") -> Path:
        return self.write(f"{folder}/SKILL.md", f"---\n{frontmatter}---\n{body}")

    def rules(self, *args: str) -> dict[str, dict[str, Any]]:
        return {r["id"]: r for r in self.json("report", *args)["rules"]}

    def warnings(self) -> list[tuple[str, str, str, int | None, int | None]]:
        found = [(Path(w["path"]).parent.name, w["code"], w["message"], w.get("line"), w.get("column"))
                 for w in self.json("check")["warnings"] if w["code"].startswith("skill-")]
        return sorted(found, key=lambda w: w[:3])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Project:
    return Project(tmp_path, monkeypatch, capsys)


# -- the importer's declaration (skills.pi_rules_importers) ------------------------------------

def test_plugins_lists_the_skills_importer_on_by_default_with_its_summary(project: Project) -> None:
    importers = {i["name"]: i for i in project.json("plugins")["importers"]}
    assert (importers["skills"]["default"], importers["skills"]["summary"]) == (True, (
        "Agent Skills: <folder>/SKILL.md in .agents/skills, .claude/skills, .cursor/skills, .gemini/skills, "
        ".kiro/skills (cwd, ancestors, folders below cwd), ~/.agents/skills, ~/.claude/skills (global)"))


@pytest.mark.parametrize("marker", [".agents", ".claude", ".cursor", ".gemini", ".kiro"])
def test_an_untrusted_project_holding_only_skills_is_said_to_hold_rules(tmp_path: Path, marker: str) -> None:
    """What ``serve``'s ``trust_status`` says of it, from the skills importer's markers alone."""
    rules = RuleProject(tmp_path / "project", tmp_path / "home")
    rules.cwd.mkdir()
    rules.home.mkdir()
    skills = [info for info in rules.engine().hooks.importers() if info.name == "skills"]
    assert not has_project_rules(str(rules.cwd), project_markers(skills))  # positive control
    rules.write({f"{marker}/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: d\n---\nB.\n"})
    assert has_project_rules(str(rules.cwd), project_markers(skills))


# -- the loose reading (_skills_read._loose) ---------------------------------------------------

def test_the_loose_reading_folds_indented_lines_and_skips_comments(project: Project) -> None:
    project.skill(".agents/skills/folded", "description: Use this\n  when: asked,\n\tand more\n  # a note\n"
                  "\n# a comment\nname: folded\n" + BROKEN)
    report = project.json("report")
    assert report["errors"] == []
    rule = next(r for r in report["rules"] if r["id"] == "folded")
    assert (rule["description"], rule["status"]) == ("Use this when: asked, and more", "on-demand")
    # It has frontmatter, and its name (read after the comments) is its folder's: no warning;
    # a loosely read skill is linted as any other.
    assert project.warnings() == []
    project.skill(".agents/skills/misnamed", "name: other\ndescription: d\n" + BROKEN)
    assert [w[:3] for w in project.warnings()] == [
        ("misnamed", "skill-name", "name 'other' differs from its folder 'misnamed' (they must be equal)")]


@pytest.mark.parametrize("style", [">", "|", ">-", "|-"])
def test_the_loose_reading_takes_a_block_value_from_the_lines_below(project: Project, style: str) -> None:
    project.skill(".agents/skills/block", f"name: block\ndescription: {style}\n  Folded: text\n" + BROKEN)
    assert project.rules()["block"]["description"] == "Folded: text"


def test_the_loose_reading_strips_matching_quotes_only(project: Project) -> None:
    project.skill(".agents/skills/single", "name: 'single'\ndescription: 'Quoted: yes'\n" + BROKEN)
    project.skill(".agents/skills/double", 'name: "double"\ndescription: "Twice: quoted"\n' + BROKEN)
    project.skill(".agents/skills/half", 'name: half\ndescription: "half: open\n' + BROKEN)
    project.skill(".agents/skills/empty", 'name: empty\ndescription: ""\n' + BROKEN, "# From the heading\n\nB.\n")
    project.skill(".agents/skills/exes", "name: exes\ndescription: X marks the spot X\n" + BROKEN)
    rules = project.rules()
    assert {name: rules[name]["description"] for name in ("single", "double", "half", "empty", "exes")} == {
        "single": "Quoted: yes", "double": "Twice: quoted", "half": '"half: open',
        "empty": "From the heading", "exes": "X marks the spot X"}
    assert [w for w in project.warnings() if w[0] in ("single", "double")] == []  # names equal their folders


def test_the_loose_reading_makes_true_and_false_booleans(project: Project) -> None:
    project.skill(".agents/skills/hidden", "name: hidden\ndescription: d\ndisable-model-invocation: true\n" + BROKEN)
    project.skill(".agents/skills/shown", "name: shown\ndescription: d\ndisable-model-invocation: false\n" + BROKEN)
    project.skill(".agents/skills/yes", "name: yes\ndescription: true\n" + BROKEN)
    project.skill(".agents/skills/no", "name: no\ndescription: false\n" + BROKEN)
    report = project.json("report")
    rules = {r["id"]: r for r in report["rules"]}
    assert rules["hidden"]["status"] == "inactive"
    assert rules["hidden"]["reasons"][0].startswith("disable-model-invocation: true — only the user starts")
    assert rules["shown"]["status"] == "on-demand"
    errors = sorted((Path(e["path"]).parent.name, e["kind"], e["message"]) for e in report["errors"])
    assert errors == [(name, "invalid-value", "description must be text, got bool; write description: \"…\" in quotes")
                      for name in ("no", "yes")]


def test_a_first_line_indented_is_not_read_loosely(project: Project) -> None:
    path = project.skill(".agents/skills/indented", "  name: indented\ndescription: d\n" + BROKEN)
    errors = project.json("report")["errors"]
    assert [(e["path"], e["kind"]) for e in errors] == [(str(path), "yaml-syntax")]


# -- shadowed skills: the reason and the warning (skills._why, _skills_lint._check) -----------

PROJECT_WINS = "a project skill shadows a user skill of the same name, as the Agent Skills specification says"
NEAREST_WINS = "the nearest folder first, and in one folder .agents before .claude, .cursor, .gemini, .kiro"


def test_each_shadowed_skill_says_which_rule_chose_the_winner(project: Project) -> None:
    project.skill(".agents/skills/alone", "name: alone\ndescription: A name no other skill has.\n")  # listed first
    winners = {
        "deploy": project.skill(".agents/skills/deploy", "name: deploy\ndescription: Ship the project.\n"),
        "lint": project.skill("~/.agents/skills/lint", "name: lint\ndescription: Lint, the shared way.\n"),
        "fmt": project.skill(".agents/skills/fmt", "name: fmt\ndescription: Format, the shared way.\n"),
    }
    project.skill("~/.claude/skills/deploy", "name: deploy\ndescription: Ship, as the user does.\n")
    project.skill("~/.claude/skills/lint", "name: lint\ndescription: Lint, Claude's way.\n")
    project.skill(".claude/skills/fmt", "name: fmt\ndescription: Format, Claude's way.\n")
    rules = project.rules()
    shadowed = {rules[i]["relativePath"]: (rules[i]["status"], rules[i]["reasons"]) for i in rules
                if rules[i]["status"] == "inactive"}
    assert shadowed == {
        name: ("inactive", [f"shadowed by the skill of the same name at {winners[name]}, found first ({why})"])
        for name, why in (("deploy", PROJECT_WINS), ("lint", NEAREST_WINS), ("fmt", NEAREST_WINS))}
    assert [w for w in project.warnings() if w[1] == "skill-shadowed"] == [
        (name, "skill-shadowed", f"skill {name!r} is also at {winners[name]}, found first; this one is not offered "
         "— rename one of them or remove the copy", None, None) for name in ("deploy", "fmt", "lint")]


def test_a_skill_without_frontmatter_is_warned_with_the_lines_to_add(project: Project) -> None:
    project.write(".agents/skills/bare/SKILL.md", "# Bare\n\nNo frontmatter.\n")
    assert project.warnings() == [("bare", "skill-no-frontmatter", "SKILL.md has no frontmatter; the specification "
                                   "requires one with name and description — start the file with ---, name: bare, "
                                   "description: …, ---", None, None)]


# -- where a missing-file warning points (_skills_lint._place) --------------------------------

def _missing(path: str) -> str:
    return f"the body names {path}, which is not in the skill's folder; add the file or fix the reference"


def test_a_missing_file_warning_points_at_its_first_mention_in_the_body(project: Project) -> None:
    # Named in the frontmatter too, and again after a horizontal rule: the body's first
    # mention is the place.
    project.skill(".agents/skills/fm", "name: fm\ndescription: Runs scripts/run.sh for you.\n",
                  "Run `scripts/run.sh` now.\n\n---\n\nThen `scripts/run.sh` again.\n")
    # No frontmatter: the first mention is the second character of the file.
    project.write(".agents/skills/bare/SKILL.md", "`scripts/x.sh` first.\n\n---\n\nAgain `scripts/x.sh`.\n")
    # An empty frontmatter block, and a horizontal rule below the first mention.
    project.write(".agents/skills/empty/SKILL.md", "---\n---\nUse `scripts/y.sh`.\n\n---\n\nAnd `scripts/y.sh`.\n")
    # The frontmatter's last character is the (one-letter) file name.
    project.skill(".agents/skills/short", "name: short\ndescription: Use x\n", "See [x](x).\n")
    found = {(w[0], w[2]): (w[3], w[4]) for w in project.warnings() if w[1] == "skill-missing-file"}
    assert found == {
        ("fm", _missing("scripts/run.sh")): (5, 6),
        ("bare", _missing("scripts/x.sh")): (1, 2),
        ("empty", _missing("scripts/y.sh")): (3, 6),
        ("short", _missing("x")): (5, 6),
    }


# -- what read_rule returns: the body and the folder's other files (_skills_read) -------------

def _listing(out: str) -> list[str]:
    return [line[2:] for line in out.split("read one when the instructions above call for it):\n\n", 1)[1]
            .splitlines() if line.startswith("- ")]


def test_read_lists_the_folder_as_deep_as_three_folders_never_through_links_or_hidden_ones(
        project: Project) -> None:
    skill = project.skill(".agents/skills/deep", "name: deep\ndescription: d\n", "Deep body.  \n").parent
    for relative in ("a/b/c/three.md", "a/b/c/d/four.md", "a/two.md", "sub/SKILL.md", "top.md",
                     ".hidden/h.md", ".git/g", "node_modules/m.js", "__pycache__/p.pyc", ".venv/v.py"):
        (skill / relative).parent.mkdir(parents=True, exist_ok=True)
        (skill / relative).write_text("x\n")
    (skill / "linked").symlink_to(skill / "a", target_is_directory=True)
    (skill / "broken").symlink_to(skill / "gone.md")
    code, out = project.run("read", "deep")
    assert code == 0
    assert out.startswith("Deep body.\n\n---\n\nThis skill's folder is .agents/skills/deep (from the repository "
                          "root); its other files (not loaded — read one when the instructions above call for it):\n\n")
    assert _listing(out) == ["a/b/c/three.md", "a/two.md", "broken", "linked", "sub/SKILL.md", "top.md"]


def test_read_names_forty_files_and_counts_the_rest(project: Project) -> None:
    skill = project.skill("~/.claude/skills/many", "name: many\ndescription: d\n").parent
    for index in range(45):
        (skill / f"f{44 - index:02d}.md").write_text("x\n")
    code, out = project.run("read", "many")
    assert code == 0
    assert "This skill's folder is ~/.claude/skills/many; its other files" in out
    assert _listing(out) == [f"f{index:02d}.md" for index in range(40)] + ["… and 5 more"]
    assert out.endswith("- f39.md\n- … and 5 more\n\n")  # the body ends with a newline, and read adds one


def test_read_stops_listing_after_two_thousand_entries(project: Project) -> None:
    skill = project.skill(".agents/skills/huge", "name: huge\ndescription: d\n").parent
    for index in range(1999):
        (skill / f"f{index:04d}").write_text("")
    (skill / "zz").mkdir()
    (skill / "zz" / "late.md").write_text("x\n")
    # SKILL.md, 1,999 files and zz: 2,001 entries seen before zz would be opened.
    assert _listing(project.run("read", "huge")[1])[-1] == "… and 1959 more"
    (skill / "f0000").unlink()  # 2,000 seen: still stops
    assert _listing(project.run("read", "huge")[1])[-1] == "… and 1958 more"
    (skill / "f0001").unlink()  # 1,999 seen: zz is opened, and its file counted
    assert _listing(project.run("read", "huge")[1])[-1] == "… and 1958 more"


# -- the specification's limits, each at its edge (_skills_lint) ------------------------------

def test_each_limit_of_the_specification_is_allowed_and_one_more_is_warned(project: Project) -> None:
    at, over = "a" * 64, "b" * 65
    project.skill(f".agents/skills/{at}", f"name: {at}\ndescription: {'d' * 1024}\ncompatibility: {'c' * 500}\n",
                  "x" * 20_000)  # 20,000 UTF-16 units: 5,000 tokens
    (project.cwd / f".agents/skills/{at}/notes.md").write_text("Not part of the body.\n")
    project.skill(f".agents/skills/{over}", f"name: {over}\ndescription: {'d' * 1025}\ncompatibility: {'c' * 501}\n",
                  "x" * 20_001)
    project.skill(".agents/skills/anonymous", "description: Has no name.\n")
    project.skill(".agents/skills/silent", "name: silent\n")
    assert [w[:3] for w in project.warnings()] == [
        ("anonymous", "skill-name", "no name; the specification requires one equal to the folder: name: anonymous"),
        (over, "skill-body-size", "the body is ~5001 tokens; the specification recommends under 5000 — move detail "
         "to references/ files the body links to"),
        (over, "skill-compatibility", "compatibility is 501 characters; the specification allows 500 — keep it to "
         "the environment the skill needs"),
        (over, "skill-description", "description is 1025 characters; the specification allows 1024"),
        (over, "skill-name", f"name {over!r} is 65 characters (at most 64)"),
        ("silent", "skill-description", "no description; the specification requires one (what the skill does and "
         "when to use it) — it is all the model sees until the skill is read"),
    ]


def test_a_name_breaking_every_rule_gets_one_warning_listing_each(project: Project) -> None:
    name = "Pdf_" + "x" * 62
    project.skill(".agents/skills/pdf", f"name: {name}\ndescription: d\n")
    assert [w[1:3] for w in project.warnings()] == [("skill-name", (
        f"name {name!r} is 66 characters (at most 64); may hold only lower-case letters, digits and single hyphens, "
        "not at either end; differs from its folder 'pdf' (they must be equal)"))]


# -- one skill's rule (skills.pi_rules_parse) -------------------------------------------------

def test_a_skill_names_itself_in_its_reason_and_its_fallback_description(project: Project) -> None:
    project.skill(".agents/skills/ship", "name: ship-it\ndisable-model-invocation: true\n")
    project.skill(".agents/skills/plain", "license: MIT\n", "No heading here.\n")
    project.skill(".agents/skills/spaced", 'name: spaced\ndescription: "Use  when\\t the\\n  user asks "\n')
    rules = project.rules()
    assert (rules["ship"]["description"], rules["ship"]["reasons"]) == ("the ship-it skill", [
        "disable-model-invocation: true — only the user starts this skill (/ship-it); it is never offered to the "
        "model"])
    assert rules["plain"]["description"] == "the plain skill"
    assert rules["spaced"]["description"] == "Use when the user asks"


def test_a_binary_skill_and_an_empty_paths_key_are_errors_saying_what_to_do(project: Project) -> None:
    binary = project.skill(".agents/skills/binary", "name: binary\ndescription: d\n", "Body\x00with a NUL.\n")
    empty = project.skill(".agents/skills/nopaths", "name: nopaths\ndescription: d\npaths: []\n")
    report = project.json("report")
    assert sorted((e["path"], e["kind"], e["message"]) for e in report["errors"]) == sorted([
        (str(binary), "read-failure", "SKILL.md contains NUL bytes, so it is binary, not markdown; save it as text"),
        (str(empty), "invalid-value", 'paths names no glob; remove the key or write paths: "src/**/*.ts"'),
    ])
    assert {r["id"] for r in report["rules"]} == set()


# -- where skills are found and how they are named (_skills_find) -----------------------------

def test_shared_names_are_named_by_folder_and_only_walked_ones_shadow(project: Project) -> None:
    below = project.cwd / "pkg"
    below.mkdir()
    for folder in ("pkg/.claude/skills/review", ".agents/skills/review", "pkg/.agents/skills/review",
                   "pkg/a/.agents/skills/review", "pkg/b/.cursor/skills/review", "~/.agents/skills/review"):
        project.skill(folder, f"name: review\ndescription: Review, from {folder}.\n")
    rules = {r["id"]: r for r in project.json("report", "--touched", "a/x.ts", cwd=below)["rules"]}
    proj = project.cwd.name
    assert {i: (r["status"], r["description"]) for i, r in rules.items()} == {
        "review": ("on-demand", "Review, from pkg/.agents/skills/review."),  # cwd's, .agents first
        f"{proj}/pkg/.claude/skills/review": ("inactive", "Review, from pkg/.claude/skills/review."),
        f"{proj}/.agents/skills/review": ("inactive", "Review, from .agents/skills/review."),
        f"{proj}/pkg/a/.agents/skills/review": ("on-demand", "Review, from pkg/a/.agents/skills/review."),
        f"{proj}/pkg/b/.cursor/skills/review": ("inactive", "Review, from pkg/b/.cursor/skills/review."),
        "~/.agents/skills/review": ("inactive", "Review, from ~/.agents/skills/review."),
    }
    winner = str(below / ".agents/skills/review/SKILL.md")
    shadowed = {i for i, r in rules.items() if r["reasons"] and r["reasons"][0].startswith(f"shadowed by the "
                                                                                         f"skill of the same name at {winner}")}
    assert shadowed == {f"{proj}/pkg/.claude/skills/review", f"{proj}/.agents/skills/review", "~/.agents/skills/review"}
    assert rules[f"{proj}/pkg/b/.cursor/skills/review"]["reasons"] == [
        "no touched path lies under b/ (this rule belongs to that folder)"]  # not shadowed


def test_a_link_is_checked_without_its_query_and_only_the_first_200_are(project: Project) -> None:
    project.skill(".agents/skills/query", "name: query\ndescription: d\n", "See [it](ref.md?a=1?b=2#top), [two](part.md#a#b).\n")
    links = "".join(f"[f{index}](missing/f{index:03d}.md)\n" for index in range(201))
    project.skill(".agents/skills/many", "name: many\ndescription: d\n", links)
    found = [w[:3] for w in project.warnings() if w[1] == "skill-missing-file"]
    assert [w for w in found if w[0] == "query"] == [
        ("query", "skill-missing-file", _missing(name)) for name in ("part.md", "ref.md")]
    assert sorted(w[2] for w in found if w[0] == "many") == [_missing(f"missing/f{index:03d}.md") for index in range(200)]


def test_links_outside_the_folder_or_not_to_files_are_not_checked_and_each_file_once(project: Project) -> None:
    skill = project.skill(".agents/skills/refs", "name: refs\ndescription: d\n", (
        "[a](/abs.md) [b](~/home.md) [c]($HOME/env.md) [d]({baseDir}/tpl.md) [e](mailto:me@example.com)\n"
        "[f](./docs/../../out.md) [g](..) [h](dup.md) [h again](dup.md#part) [i](<angle.md> \"Title\")\n"
        "[j](./link.md) `scripts/dup.md` `assets/ok.png`\n")).parent
    (skill / "link.md").symlink_to(skill / "gone.md")  # a link is a file the skill names, even a broken one
    (skill / "assets").mkdir()
    (skill / "assets" / "ok.png").write_bytes(b"png")
    assert [(w[2], w[3], w[4]) for w in project.warnings()] == [
        (_missing("angle.md"), 6, 74), (_missing("dup.md"), 6, 38), (_missing("scripts/dup.md"), 7, 17)]


def test_a_skills_root_reads_its_first_500_folders_hidden_ones_too_and_says_so(project: Project) -> None:
    root = project.cwd / ".claude" / "skills"
    for index in range(500):
        (root / f"f{index:03d}").mkdir(parents=True)  # no SKILL.md: shared assets, not skills
    project.skill(".claude/skills/.system", "name: .system\ndescription: A hidden skill.\n")
    project.skill(".claude/skills/f000", "name: f000\ndescription: The first.\n")
    project.skill(".claude/skills/f498", "name: f498\ndescription: The 500th folder, after 497 without a skill.\n")
    project.skill(".claude/skills/zzz", "name: zzz\ndescription: The 502nd folder.\n")
    for index in range(500):
        (project.cwd / ".kiro" / "skills" / f"k{index:03d}").mkdir(parents=True)  # exactly 500: no error
    report = project.json("report")
    assert sorted(r["id"] for r in report["rules"]) == [".system", "f000", "f498"]
    assert [(e["path"], e["kind"], e["message"]) for e in report["errors"]] == [
        (str(root), "source-unreadable", "holds 502 folders; only the first 500 (by name) are read as skills")]


def test_skills_roots_that_are_no_folder_or_lead_out_of_the_project(project: Project, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "SKILL.md").write_text("---\nname: evil\ndescription: Not this project's.\n---\nB\n")
    (project.cwd / ".agents").mkdir()
    (project.cwd / ".agents" / "skills").symlink_to(outside, target_is_directory=True)
    (project.cwd / ".claude").mkdir()
    (project.cwd / ".claude" / "skills").symlink_to(tmp_path / "gone")
    (project.cwd / ".cursor").mkdir()
    (project.cwd / ".cursor" / "skills").write_text("a file, not a folder\n")
    project.skill(".kiro/skills/fine", "name: fine\ndescription: Still read.\n")
    report = project.json("report")
    assert [r["id"] for r in report["rules"]] == ["fine"]
    errors = {e["path"]: (e["kind"], e["message"]) for e in report["errors"]}
    assert sorted(errors) == [str(project.cwd / ".agents/skills"), str(project.cwd / ".claude/skills")]
    kind, message = errors[str(project.cwd / ".agents/skills")]
    assert kind == "source-unreadable" and message.endswith("; skills are read only inside the project")
    assert errors[str(project.cwd / ".claude/skills")][0] == "read-failure"


def test_skills_in_a_dotfiles_repository_at_home_stay_the_users(project: Project) -> None:
    # The engine never takes the home folder (or an ancestor) as a project's root, so the
    # home folder is never walked as a project folder: its skills are global only.
    git_init(project.home)
    work = project.home / "work"
    work.mkdir()
    project.skill("~/.agents/skills/mine", "name: mine\ndescription: The user's own.\n")
    rules = {r["id"]: r for r in project.json("report", cwd=work)["rules"]}
    assert {i: r["source"] for i, r in rules.items()} == {"mine": "global"}


def test_linked_skill_folders_and_a_linked_user_root_are_read(project: Project, tmp_path: Path) -> None:
    project.skill("shared/review", "name: review\ndescription: Linked in from the repository.\n")
    (project.cwd / ".agents" / "skills").mkdir(parents=True)
    (project.cwd / ".agents" / "skills" / "review").symlink_to(project.cwd / "shared" / "review")
    dotfiles = tmp_path / "dotfiles" / "skills"
    (dotfiles / "notes").mkdir(parents=True)
    (dotfiles / "notes" / "SKILL.md").write_text("---\nname: notes\ndescription: From the dotfiles.\n---\nB\n")
    (project.home / ".claude").mkdir()
    (project.home / ".claude" / "skills").symlink_to(dotfiles, target_is_directory=True)  # the user's own choice
    report = project.json("report")
    assert report["errors"] == []
    assert sorted((r["id"], r["source"]) for r in report["rules"]) == [("notes", "global"), ("review", "project")]


def test_nested_skills_sharing_a_name_keep_it_for_the_shallowest(project: Project) -> None:
    project.skill("a/b/.agents/skills/tidy", "name: tidy\ndescription: Deep.\n")
    project.skill("z/.agents/skills/tidy", "name: tidy\ndescription: Shallow.\n")
    rules = project.rules("--touched", "a/b/x.ts", "--touched", "z/x.ts")
    assert {i: (r["status"], r["description"]) for i, r in rules.items()} == {
        "tidy": ("on-demand", "Shallow."), f"{project.cwd.name}/a/b/.agents/skills/tidy": ("on-demand", "Deep.")}


def test_a_shadowed_skill_says_so_even_when_only_the_user_may_start_it(project: Project) -> None:
    winner = project.skill(".agents/skills/ship", "name: ship\ndescription: Ship.\n")
    project.skill(".claude/skills/ship", "name: ship\ndescription: Ship too.\ndisable-model-invocation: true\n")
    rules = project.rules()
    assert rules[f"{project.cwd.name}/.claude/skills/ship"]["reasons"] == [
        f"shadowed by the skill of the same name at {winner}, found first ({NEAREST_WINS})"]


def test_a_heading_gives_the_description_without_its_closing_hashes(project: Project) -> None:
    project.skill(".agents/skills/heading", "name: heading\n", "# Deploy the site #\n\nSteps.\n")
    project.skill(".agents/skills/typed", "name: typed\ndescription: d\npaths: 5\n")
    report = project.json("report")
    assert [r["description"] for r in report["rules"] if r["id"] == "heading"] == ["Deploy the site"]
    assert [(Path(e["path"]).parent.name, e["kind"], e["message"]) for e in report["errors"]] == [(
        "typed", "invalid-value", 'paths must be a comma-separated string or a list of glob strings, got the number '
        '5; write paths: "src/**/*.ts, docs/**" or one quoted pattern per list item')]  # no "names no glob" too


def test_skill_warnings_follow_other_formats_rules(project: Project) -> None:
    project.write(".claude/rules/style.md", "Use tabs.\n")  # the claude importer's rule comes first
    project.write("AGENTS.md", "Be brief.\n")
    project.skill(".agents/skills/nameless", "description: d\n")
    assert [w[:2] for w in project.warnings()] == [("nameless", "skill-name")]
    # Skills rank between the other formats' rules and the memory files (docs/importers.md).
    assert [r["plugin"] for r in project.json("report")["rules"]] == ["claude", "skills", "agents-md"]


def test_a_file_added_to_a_skills_subfolder_is_listed_by_the_next_read(project: Project) -> None:
    skill = project.skill(".agents/skills/grow", "name: grow\ndescription: d\n").parent
    (skill / "references").mkdir()
    (skill / "references" / "a.md").write_text("A.\n")
    assert _listing(project.run("read", "grow")[1]) == ["references/a.md"]
    (skill / "references" / "b.md").write_text("B.\n")  # SKILL.md itself unchanged
    assert _listing(project.run("read", "grow")[1]) == ["references/a.md", "references/b.md"]


def test_text_values_are_trimmed_and_true_may_be_written_as_text(project: Project) -> None:
    project.skill(".agents/skills/quoted", 'name: " ship "\ndescription: d\ndisable-model-invocation: " True "\n')
    project.skill(".agents/skills/yes", 'name: yes\ndescription: d\ndisable-model-invocation: "yes"\n')
    rules = project.rules()
    assert rules["quoted"]["reasons"] == [
        "disable-model-invocation: true — only the user starts this skill (/ship); it is never offered to the model"]
    assert (rules["yes"]["status"], rules["yes"]["reasons"]) == ("on-demand", [])


def test_user_skills_follow_the_users_own_selection(tmp_path: Path) -> None:
    rules = RuleProject(tmp_path / "project", tmp_path / "home")
    rules.write({".agents/skills/ours/SKILL.md": "---\nname: ours\ndescription: The project's.\n---\nB\n"})
    make_rules(rules.home, {".agents/skills/mine/SKILL.md": "---\nname: mine\ndescription: The user's.\n---\nB\n"})
    git_init(rules.cwd)
    engine = rules.engine()
    assert sorted(r.id for r in engine.discover(str(rules.cwd)).rules) == ["mine", "ours"]  # positive control
    # The user's own settings import Cursor's files only (the engine's discovery wing takes
    # the settings' two selections as they are resolved).
    chosen = engine.discovery.discover(str(rules.cwd), True, None, frozenset({"cursor"}))
    assert [r.id for r in chosen.rules] == ["ours"]


def test_a_folder_that_cannot_be_listed(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = project.skill(".agents/skills/half", "name: half\ndescription: d\n").parent
    for relative in ("a/kept.md", "z/hidden-by-error.md"):
        (skill / relative).parent.mkdir()
        (skill / relative).write_text("x\n")
    project.skill(".claude/skills/locked", "name: locked\ndescription: d\n")
    deny_listing(monkeypatch, skill / "z")  # read first (the last folder by name): the others are still listed
    assert _listing(project.run("read", "half")[1]) == ["a/kept.md"]
    deny_listing(monkeypatch, project.cwd / ".claude" / "skills")
    report = project.json("report")
    assert [r["id"] for r in report["rules"]] == ["half"]
    assert [(e["path"], e["kind"], e["message"]) for e in report["errors"]] == [(
        str(project.cwd / ".claude" / "skills"), "source-unreadable",
        "cannot list this skills folder (Permission denied); fix its permissions or remove it")]


def test_skill_warnings_are_the_skills_plugins(tmp_path: Path) -> None:
    from rules_core.lint.check import lint

    rules = RuleProject(tmp_path / "project", tmp_path / "home")
    rules.write({".agents/skills/nameless/SKILL.md": "---\ndescription: d\n---\nB\n"})
    engine = rules.engine()
    found = lint(engine, engine.discover(str(rules.cwd)), cwd=str(rules.cwd))
    assert [(w.code, w.plugin) for w in found if w.code.startswith("skill-")] == [("skill-name", "skills")]


def test_oh_my_pis_repair_comes_before_the_loose_reading(project: Project) -> None:
    # "Use when: …" breaks strict YAML; oh-my-pi's repair quotes it and keeps the list,
    # which the loose reading would fold into one "- src/**" text.
    project.skill(".agents/skills/repaired", "name: repaired\ndescription: Use when: editing\npaths:\n  - src/**\n")
    rule = project.rules("--touched", "src/a.ts")["repaired"]
    assert (rule["status"], rule["description"]) == ("on-demand", "Use when: editing")


def test_errors_of_a_skill_are_the_skills_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = RuleProject(tmp_path / "project", tmp_path / "home")
    rules.write({".agents/skills/binary/SKILL.md": "---\nname: binary\ndescription: d\n---\nB\x00\n",
                 ".agents/skills/broken/SKILL.md": "---\n- a list, not a mapping\n---\nB\n"})
    (rules.cwd / ".claude").mkdir()
    (rules.cwd / ".claude" / "skills").symlink_to(tmp_path / "gone")
    (rules.cwd / ".cursor").mkdir()
    (rules.cwd / ".cursor" / "skills").symlink_to(tmp_path, target_is_directory=True)  # out of the project
    (rules.cwd / ".agents" / "skills" / "pipe").mkdir()
    os.mkfifo(rules.cwd / ".agents" / "skills" / "pipe" / "SKILL.md")
    for index in range(501):
        (rules.cwd / ".kiro" / "skills" / f"k{index:03d}").mkdir(parents=True)
    (rules.cwd / ".gemini" / "skills").mkdir(parents=True)
    deny_listing(monkeypatch, rules.cwd / ".gemini" / "skills")
    git_init(rules.cwd)
    found = rules.engine().discover(str(rules.cwd))
    assert sorted((e.plugin, e.kind, os.path.basename(os.path.dirname(e.path))) for e in found.errors) == [
        ("skills", "read-failure", ".claude"), ("skills", "read-failure", "binary"), ("skills", "read-failure", "pipe"),
        ("skills", "source-unreadable", ".cursor"), ("skills", "source-unreadable", ".gemini"),
        ("skills", "source-unreadable", ".kiro"), ("skills", "yaml-syntax", "broken")]
    fifo = next(e for e in found.errors if e.path.endswith("pipe/SKILL.md"))
    assert fifo.message == "not a regular file (FIFO, socket or device); SKILL.md must be a plain file"


def test_working_in_home_reads_its_skills_once_as_the_projects(project: Project) -> None:
    # Found by mutation testing: each user skill was listed twice (as cwd's and as the
    # user's), discovery kept the second, and it was "shadowed" by itself — never offered.
    project.skill("~/.agents/skills/mine", "name: mine\ndescription: The user's own.\n")
    project.skill("~/.claude/skills/theirs", "name: theirs\ndescription: Also the user's.\n", "Other body.\n")
    report = project.json("report", cwd=project.home)
    assert [(r["id"], r["source"], r["status"]) for r in report["rules"]] == [
        ("mine", "project", "on-demand"), ("theirs", "project", "on-demand")]
    assert "- mine — The user's own." in report["section"]
    assert [w for w in project.json("check", cwd=project.home)["warnings"] if w["code"] == "skill-shadowed"] == []


def test_in_one_folder_agents_skills_come_before_claudes(project: Project) -> None:
    for folder in ("pkg/.claude/skills/alpha", "pkg/.agents/skills/zulu", ".claude/skills/able", ".agents/skills/zed",
                   "~/.claude/skills/aardvark", "~/.agents/skills/zebra"):
        project.skill(folder, f"name: {folder.rsplit('/', 1)[1]}\ndescription: d\n", f"{folder}\n")
    assert [r["id"] for r in project.json("report", "--touched", "pkg/x.ts")["rules"]] == [
        "zed", "able", "zulu", "alpha", "zebra", "aardvark"]


def test_a_user_skills_paths_are_relative_to_cwd(project: Project) -> None:
    project.skill("~/.agents/skills/tsx", 'name: tsx\ndescription: d\npaths: "src/**/*.tsx"\n')
    assert project.rules("--touched", "src/app/page.tsx")["tsx"]["status"] == "on-demand"
    assert project.rules("--touched", "lib/page.tsx")["tsx"]["status"] == "inactive"
