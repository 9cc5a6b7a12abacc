"""Discovery (rules_core.engine.discovery), pinned where mutation testing found it unpinned
(issue 32).

Each test is a project on disk (a real git repository where the git root matters) and what
``Engine.discover`` answers for it. docs/mutation.md lists the mutants these kill and the ones
left.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rules_core import deadline as deadline_module
from rules_core.discovery.ignore import MAX_IGNORE_BYTES, MAX_WILDCARD_LINES
from rules_core.engine import discovery
from rules_core.engine.core import Engine
from rules_core.model import ImporterInfo, ParseResult, Rule, RuleFile
from rules_core.plugins.hookspecs import hookimpl
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text
from suite_helpers import StepClock, settle_racy_clock

CLAUDE_RULE = "---\npaths: src/**\n---\nPrefer small functions.\n"


def _engine(home: str | None, **env: str) -> Engine:
    return Engine(fresh_manager(), home=home, env={"HOME": home or "", **env})


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _cwd_only(found) -> list[tuple[str, str]]:
    return [(w.path, w.plugin) for w in found.warnings if w.code == "cwd-only"]


@pytest.mark.parametrize(("home_of", "root_kept"), [
    (lambda repo: str(repo.parent / "elsewhere"), True),
    (lambda repo: str(repo), False),  # the home folder is the repository: no root
    (lambda repo: str(repo) + "/", False),  # spelled with a trailing slash, the same folder
    (lambda repo: str(repo / "me"), False),  # the repository holds the home folder
    (lambda repo: str(repo) + "-sibling", True),  # shares a prefix of letters, not a folder
    (lambda repo: str(repo) + "/../repo-sibling", True),  # compared once normalised
    (lambda repo: "me", True),  # a relative home names no folder: ignored
    (lambda repo: None, True),
])
def test_a_repository_holding_the_home_folder_is_no_projects_root(tmp_path, home_of, root_kept):
    repo = _repo(tmp_path / "repo")
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / ".claude" / "rules" / "style.md").write_text(CLAUDE_RULE)
    (repo / "sub").mkdir()
    found = _engine(home_of(repo)).discover(str(repo / "sub"))
    # The cwd-only warning is only given below a git root: it shows whether the root was kept.
    assert _cwd_only(found) == ([(str(repo / ".claude" / "rules"), "claude")] if root_kept else [])
    assert found.errors == ()


def test_the_git_root_is_remembered_until_forgotten(tmp_path):
    repo = _repo(tmp_path / "repo")
    (repo / ".claude" / "rules").mkdir(parents=True)
    sub = repo / "sub"
    sub.mkdir()
    engine = _engine(str(tmp_path / "home"))
    expected = [(str(repo / ".claude" / "rules"), "claude")]
    assert _cwd_only(engine.discover(str(sub))) == expected
    _repo(sub)  # the folder becomes its own repository: git would now stop there
    engine.discovery.tree_changed()
    assert _cwd_only(engine.discover(str(sub))) == expected  # remembered
    engine.discovery.forget_git_roots()
    assert _cwd_only(engine.discover(str(sub))) == []


def test_cwd_only_names_the_nearest_holder_of_each_enabled_importer_in_order(tmp_path):
    repo = _repo(tmp_path / "repo")
    for folder in (repo, repo / "a"):
        (folder / ".claude" / "rules").mkdir(parents=True)
    (repo / ".github").mkdir()
    (repo / ".github" / "copilot-instructions.md").write_text("Be brief.\n")
    cwd = repo / "a" / "b"
    cwd.mkdir()
    # roo reads .roo and .roorules from cwd: cwd has its own .roo (no warning for it), and
    # the .roorules above it is still named.
    (cwd / ".roo").mkdir()
    (repo / ".roo").mkdir()
    (repo / ".roorules").write_text("Root.\n")
    home = str(tmp_path / "home")
    found = _engine(home).discover(str(cwd))
    warnings = [w for w in found.warnings if w.code == "cwd-only"]
    assert [(w.path, w.plugin) for w in warnings] == [
        (str(repo / "a" / ".claude" / "rules"), "claude"),
        (str(repo / ".github" / "copilot-instructions.md"), "copilot"),
        (str(repo / ".roorules"), "roo"),
    ]
    assert warnings[0].message == (
        f"claude reads .claude/rules only from the working directory, so these rules are not loaded here; "
        f"run from {repo / 'a'} (pi-rules --cwd {repo / 'a'} check) or start the agent there")
    # An importer not enabled is not looked at.
    only_copilot = _engine(home, PI_RULES_IMPORT="copilot").discover(str(cwd))
    assert _cwd_only(only_copilot) == [(str(repo / ".github" / "copilot-instructions.md"), "copilot")]


def test_cwd_only_warnings_are_remembered_with_the_tree_walk(tmp_path):
    repo = _repo(tmp_path / "repo")
    cwd = repo / "sub"
    cwd.mkdir()
    engine = _engine(str(tmp_path / "home"))
    assert _cwd_only(engine.discover(str(cwd))) == []
    (repo / ".claude" / "rules").mkdir(parents=True)
    again = engine.discover(str(cwd))
    assert _cwd_only(again) == [] and again.errors == ()  # not looked at again
    engine.discovery.tree_changed()
    assert _cwd_only(engine.discover(str(cwd))) == [(str(repo / ".claude" / "rules"), "claude")]


@pytest.mark.parametrize(("files", "left_out"), [(3, "1 rule file"), (4, "2 rule files")])
def test_over_the_file_cap_names_how_many_rule_files_did_not_load(rule_project, monkeypatch, files, left_out):
    monkeypatch.setattr(discovery, "MAX_RULE_FILES", 2)
    rule_project.write({f".pi/rules/r{i}.md": rule_text(alwaysApply=True) for i in range(files)})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [r.id for r in found.rules] == ["r0", "r1"]
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == [(
        "source-unreadable", str(rule_project.cwd),
        f"the sources list {files} rule files, over the limit of 2 per discovery; the rules first in discovery "
        f"order loaded, the other {left_out} did not — remove or move rule files", "engine")]


def test_invisible_characters_are_listed_five_at_most_with_their_first_place(rule_project):
    hidden = "\u200b\u200c\u200d\u2060\ufeff\u202e"
    rule_project.write({
        ".pi/rules/r.md": rule_text(f"Line one.\nSee{hidden} here.", alwaysApply=True),
        ".pi/rules/s.md": rule_text(f"{hidden[:5]}Five.", alwaysApply=True),  # exactly five: no "more"
        ".pi/rules/t.md": rule_text("Clean body.", description="Hidden\u200b here", alwaysApply=True),
    })
    found = rule_project.engine().discover(str(rule_project.cwd))
    warnings = [w for w in found.warnings if w.code == "invisible-characters"]
    assert [(w.path, w.plugin, w.line, w.column, w.message) for w in warnings] == [(
        str(rule_project.cwd / ".pi/rules/r.md"), "native", 7, 4,  # after four lines of front matter
        "the rule holds invisible characters (U+200B, U+200C, U+200D, U+202E, U+2060 and 1 more) a reader "
        "cannot see but a model reads; they are shown as escapes in the section — remove them unless you "
        "put them there on purpose"), (
        str(rule_project.cwd / ".pi/rules/s.md"), "native", 6, 1,
        "the rule holds invisible characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) a reader "
        "cannot see but a model reads; they are shown as escapes in the section — remove them unless you "
        "put them there on purpose"), (
        str(rule_project.cwd / ".pi/rules/t.md"), "native", 2, 20,
        "the rule holds invisible characters (U+200B) a reader "
        "cannot see but a model reads; they are shown as escapes in the section — remove them unless you "
        "put them there on purpose")]


def test_an_invisible_first_character_and_a_linked_rule_get_their_places(rule_project):
    rule_project.write({
        ".claude/rules/first.md": "\u200bStarts hidden.\n",  # no front matter: index 0 of the file
        "shared/linked.md": rule_text("Linked\u200b.", alwaysApply=True),
    })
    (rule_project.cwd / ".pi" / "rules").mkdir(parents=True)
    os.symlink("../../shared/linked.md", rule_project.cwd / ".pi" / "rules" / "linked.md")
    found = rule_project.engine().discover(str(rule_project.cwd))
    places = {w.path: (w.line, w.column) for w in found.warnings if w.code == "invisible-characters"}
    assert places == {
        str(rule_project.cwd / ".claude/rules/first.md"): (1, 1),
        # The link is not followed a second time (it could have been swapped): the whole file.
        str(rule_project.cwd / ".pi/rules/linked.md"): (None, None),
    }


def test_ids_count_per_stem_and_a_repeated_relative_path_is_referred_to_by_url(rule_project):
    rule_project.write({
        ".pi/rules/x.md": rule_text(alwaysApply=True),
        ".pi/rules/a/x.md": rule_text(alwaysApply=True),
        ".pi/rules/x-2.md": rule_text(alwaysApply=True),
        ".claude/rules/x.md": "Body.\n",
    })
    rule_project.write_global({"x.md": rule_text(alwaysApply=True)})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert found.errors == ()
    assert [(r.id, r.index, r.reference, r.file.source) for r in found.rules] == [
        ("x", 0, "a/x.md", "project"),
        ("x-2", 1, "x-2.md", "project"),
        ("x-3", 2, "x.md", "project"),
        # The same relative path again: only the rule's URL tells it apart.
        ("x-4", 3, "rule://x-4", "project"),
        ("x-5", 4, "rule://x-5", "global"),
    ]


def test_links_are_bounded_by_the_git_root_or_else_the_project_directory(tmp_path):
    outside = tmp_path / "out.md"
    outside.write_text(rule_text(alwaysApply=True))
    solo = tmp_path / "solo"
    repo = _repo(tmp_path / "repo")
    (repo / "shared.md").write_text(rule_text(alwaysApply=True))
    for rules, up in ((solo / ".pi" / "rules", "../../../"), (repo / "proj" / ".pi" / "rules", "../../../../")):
        rules.mkdir(parents=True)
        os.symlink(up + "out.md", rules / "out.md")
    os.symlink("../../../shared.md", repo / "proj" / ".pi" / "rules" / "shared.md")
    engine = _engine(str(tmp_path / "home"))
    alone = engine.discover(str(solo))
    assert alone.rules == ()
    assert [(e.kind, e.message) for e in alone.errors] == [(
        "read-failure", f"symbolic link {solo}/.pi/rules/out.md -> ../../../out.md ({outside}) leads outside the "
        f"project directory {solo}; not read — point the link inside the project directory or copy what it "
        "points at there")]
    in_repo = engine.discover(str(repo / "proj"))
    assert [r.id for r in in_repo.rules] == ["shared"]  # above cwd, inside the git root: read
    assert [(e.kind, e.message) for e in in_repo.errors] == [(
        "read-failure", f"symbolic link {repo}/proj/.pi/rules/out.md -> ../../../../out.md ({outside}) leads "
        f"outside the git root {repo}; not read — point the link inside the git root or copy what it points at "
        "there")]


class _UnlistableImporter:
    """A third-party importer whose ``cwd_only`` is not a sequence, beside one that is
    fine: a bug in one plugin's declaration must not cost the other rules."""

    @hookimpl
    def pi_rules_importers(self) -> list[ImporterInfo]:
        return [ImporterInfo("broken", default=True, summary="", cwd_only=None),  # type: ignore[arg-type]
                ImporterInfo("fine", default=True, summary="")]


def test_a_malformed_importer_declaration_is_left_out_and_named_and_the_rules_stay(tmp_path):
    repo = _repo(tmp_path / "repo")
    make_rules(repo / "sub", {".pi/rules/a.md": rule_text("Kept.", alwaysApply=True)})
    (repo / ".claude" / "rules").mkdir(parents=True)  # a cwd-only path above cwd: the warnings still run
    home = str(tmp_path / "home")
    engine = Engine(fresh_manager([("broken", _UnlistableImporter())]), home=home, env={"HOME": home})
    cwd = str(repo / "sub")
    found = engine.discover(cwd)
    assert [r.body for r in found.rules] == ["Kept."]
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == [(
        "source-unreadable", cwd,
        "importer 'broken' is left out: its cwd_only is not a sequence of strings — report it to its "
        "plugin's authors, or block the plugin with -p no:NAME", "broken")]
    assert "fine" in {info.name for info in engine.hooks.importers()}  # its neighbour is kept
    assert any(w.code == "cwd-only" for w in found.warnings)


def test_a_failure_inside_discovery_is_an_internal_error_naming_where(tmp_path, monkeypatch):
    """The last net: a bug anywhere in discovery is one error naming where, never a traceback."""
    repo = _repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    home = str(tmp_path / "home")

    def broken(context, importers):
        raise TypeError("'NoneType' object is not iterable")

    monkeypatch.setattr(discovery, "cwd_only_warnings", broken)
    engine = Engine(fresh_manager(), home=home, env={"HOME": home})
    cwd = f"{repo}/sub/../sub"  # reported as given
    found = engine.discover(cwd)
    line = broken.__code__.co_firstlineno + 1
    assert found.rules == ()
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == [(
        "source-unreadable", cwd,
        f"pi-rules internal error (TypeError: 'NoneType' object is not iterable at {__file__}:{line}); "
        "no rules were evaluated — please report this", "engine")]


def test_a_stem_met_three_times_counts_up_from_two(rule_project):
    rule_project.write({f".pi/rules/{folder}/x.md": rule_text(alwaysApply=True) for folder in ("a", "b", "c")})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [(r.id, r.reference) for r in found.rules] == [("x", "a/x.md"), ("x-2", "b/x.md"), ("x-3", "c/x.md")]


@pytest.mark.parametrize(("cap", "files", "loaded", "left_out"), [
    (80, 3, 3, None),  # exactly at the cap after two: not over, the third still read
    (100, 3, 3, None),  # the last file tips it over: nothing is left out, no error
    (100, 4, 3, "1 rule file"),
    (100, 5, 3, "2 rule files"),
])
def test_the_character_cap_stops_only_when_a_file_is_left_out(rule_project, monkeypatch, cap, files, loaded, left_out):
    monkeypatch.setattr(discovery, "MAX_RULE_BYTES_TOTAL", cap)
    rule_project.write({f".pi/rules/r{n}.md": rule_text("x" * 40, alwaysApply=True) for n in range(files)})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [len(r.body) for r in found.rules] == [40] * loaded
    assert [(e.kind, e.path, e.message, e.plugin) for e in found.errors] == ([] if left_out is None else [(
        "source-unreadable", str(rule_project.cwd),
        f"the rules read so far hold over {cap} characters, the limit per discovery; the rules first in discovery "
        f"order loaded, the other {left_out} did not — remove or move rule files", "engine")])


def test_an_oversized_ignore_file_is_named_for_a_trusted_project_only(rule_project):
    rule_project.write({
        ".gitignore": "".join(f"*x{i}*y*\n" for i in range(1200)),
        "pkg/.pi/rules/a.md": rule_text(alwaysApply=True),  # a nested rule folder: the tree is walked
    })
    _repo(rule_project.cwd)
    engine = rule_project.engine()
    found = engine.discover(str(rule_project.cwd))
    assert [(w.code, w.path, w.message, w.plugin) for w in found.warnings] == [(
        "ignore-file-skipped", str(rule_project.cwd / ".gitignore"),
        f"this ignore file is over the limits pi-rules applies to a repository's ignore files "
        f"({MAX_IGNORE_BYTES // 1024} KiB, {MAX_WILDCARD_LINES} wildcard lines), so nothing in it is ignored when "
        "pi-rules walks the tree — shorten it, or move generated lines elsewhere", "engine")]
    untrusted = engine.discover(str(rule_project.cwd), trusted=False)
    assert untrusted.warnings == () and untrusted.rules == ()


def test_the_deadline_says_how_many_rule_files_were_not_read_one_or_more(tmp_path, monkeypatch):
    seen: dict[int, str] = {}
    for files in range(1, 16):
        project, home = tmp_path / f"p{files}", tmp_path / "home"
        home.mkdir(exist_ok=True)
        for n in range(files):
            (project / ".pi" / "rules").mkdir(parents=True, exist_ok=True)
            (project / ".pi" / "rules" / f"r{n:02d}.md").write_text(rule_text(alwaysApply=True))
        monkeypatch.setattr(deadline_module.time, "monotonic", StepClock(0.1))  # the same reading whatever the speed
        engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home), "PI_RULES_DEADLINE_MS": "1000"})
        found = engine.discover(str(project))
        cut = [e for e in found.errors if "time budget" in e.message]
        if cut:
            (error,) = cut
            assert (error.kind, error.path, error.plugin) == ("source-unreadable", str(project), "engine")
            seen[files - len(found.rules)] = error.message.split(":", 1)[0]
    # The cut falls at the same clock reading, so each added file is one more not read.
    assert seen[1] == "1 rule file not read"
    assert seen[2] == "2 rule files not read"


def test_an_untrusted_discovery_never_asks_where_the_repository_ends(tmp_path):
    """An untrusted project is not even asked for its git root: nothing is remembered, so
    a trusted discovery afterwards asks git afresh (the folder has since become its own
    repository, so the claude rules above it are no longer a cwd-only warning)."""
    repo = _repo(tmp_path / "repo")
    (repo / ".claude" / "rules").mkdir(parents=True)
    home = str(tmp_path / "home")
    above = [(str(repo / ".claude" / "rules"), "claude")]
    for first_trusted, expected in ((True, above), (False, [])):  # the first: the control
        sub = repo / f"sub-{first_trusted}"
        sub.mkdir()
        engine = _engine(home)
        first = engine.discover(str(sub), trusted=first_trusted)
        assert _cwd_only(first) == (above if first_trusted else [])
        _repo(sub)
        assert _cwd_only(engine.discover(str(sub))) == expected


def test_an_invisible_character_met_twice_is_placed_at_its_first(rule_project):
    rule_project.write({".claude/rules/twice.md": "One \u200b.\nTwo.\nThree \u200b.\n"})
    engine = rule_project.engine()
    first = engine.discover(str(rule_project.cwd))
    assert [(w.code, w.line, w.column) for w in first.warnings] == [("invisible-characters", 1, 5)]
    again = engine.discover(str(rule_project.cwd))  # a warm pass reuses the ids: the warning stays
    assert again.rules == first.rules and again.warnings == first.warnings


def test_an_invisible_character_brought_by_an_import_is_warned_about_without_a_place(rule_project):
    """CLAUDE.md's ``@path`` import puts another file's text in the rule: the memory file
    itself holds no invisible character, so the warning names the file without a line."""
    rule_project.write({"CLAUDE.md": "Read this:\n@notes.md\n", "notes.md": "Hidden\u200b note.\n"})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert found.errors == ()
    assert [r.file.path for r in found.rules] == [str(rule_project.cwd / "CLAUDE.md")]
    assert [(w.code, w.path, w.line, w.column) for w in found.warnings] == [
        ("invisible-characters", str(rule_project.cwd / "CLAUDE.md"), None, None)]


def test_cwd_only_warnings_are_remembered_per_working_directory(tmp_path):
    repo = _repo(tmp_path / "repo")
    (repo / "a" / ".claude" / "rules").mkdir(parents=True)
    (repo / "b").mkdir()
    engine = _engine(str(tmp_path / "home"))
    below_a = repo / "a" / "deeper"
    below_a.mkdir()
    assert _cwd_only(engine.discover(str(below_a))) == [(str(repo / "a" / ".claude" / "rules"), "claude")]
    assert _cwd_only(engine.discover(str(repo / "b"))) == []  # another folder: its own answer


def test_a_repository_at_the_filesystem_root_is_no_projects_bound(tmp_path, monkeypatch):
    """git answering ``/`` (a repository at the root of a container's filesystem) bounds
    nothing: the project is cwd alone, and a link out of it is refused — with or without a
    home folder. (git's answer is planted: a real ``/.git`` would change this machine.)"""
    outside = tmp_path / "out.md"
    outside.write_text(rule_text("Outside.", alwaysApply=True))
    project = tmp_path / "proj"
    (project / ".pi" / "rules").mkdir(parents=True)
    os.symlink("../../../out.md", project / ".pi" / "rules" / "out.md")
    monkeypatch.setattr(discovery, "find_git_root", lambda cwd: "/")
    for home in (None, str(tmp_path / "home")):
        found = _engine(home).discover(str(project))
        assert found.rules == ()
        assert [(e.kind, e.message.split(";")[0]) for e in found.errors] == [(
            "read-failure", f"symbolic link {project}/.pi/rules/out.md -> ../../../out.md ({outside}) leads outside "
            f"the project directory {project}")]
    monkeypatch.setattr(discovery, "find_git_root", lambda cwd: str(tmp_path))  # the control: a real bound
    assert [r.body for r in _engine(None).discover(str(project)).rules] == ["Outside."]


def test_an_unchanged_evaluation_is_the_last_one_and_a_new_error_is_not_lost(rule_project):
    """Nothing changed: the engine hands back the last evaluation itself. A rule file that
    fails to parse changes no rule, only the errors — and the next evaluation shows it."""
    rule_project.write({".pi/rules/a.md": rule_text("Kept.", alwaysApply=True)})
    engine = rule_project.engine()
    facts = rule_project.facts()
    first = engine.evaluate(facts)
    assert engine.evaluate(facts) is first
    assert first.errors == ()
    rule_project.write({".pi/rules/bad.md": "---\nalwaysApply: [\n---\nBroken.\n"})
    after = engine.evaluate(facts)
    assert [o.rule.body for o in after.outcomes] == ["Kept."]
    assert [(e.kind, e.path) for e in after.errors] == [("yaml-syntax", str(rule_project.cwd / ".pi/rules/bad.md"))]


class _PlainParser:
    """A third-party schema answering for ``plain.md`` with a rule it did not compile."""

    @hookimpl(tryfirst=True)
    def pi_rules_parse(self, rule_file, text, extra_keys):  # noqa: ANN001, ANN201 - the hookspec's
        if not rule_file.path.endswith("/plain.md"):
            return None
        return ParseResult(Rule(file=rule_file, description="Plain", body=text, globs=("src/**",),
                                model="*sonnet*", branch="main"))


def test_a_rule_a_plugin_did_not_compile_is_compiled_before_matching(rule_project):
    rule_project.write({".pi/rules/plain.md": "TypeScript only.\n"})
    engine = rule_project.engine([("plain", _PlainParser())])
    statuses = {
        (touched, model, branch): [(o.rule.id, o.status) for o in engine.evaluate(
            rule_project.facts(touched=[touched], model=model, branch=branch)).outcomes]
        for touched, model, branch in (("src/app.ts", "claude-sonnet-4", "main"), ("docs/a.md", "claude-sonnet-4", "main"),
                                       ("src/app.ts", "gpt-5", "main"), ("src/app.ts", "claude-sonnet-4", "dev"))
    }
    assert {key: value[0][1] for key, value in statuses.items()} == {
        ("src/app.ts", "claude-sonnet-4", "main"): "active",  # the only one meeting all three
        ("docs/a.md", "claude-sonnet-4", "main"): "inactive",
        ("src/app.ts", "gpt-5", "main"): "inactive",
        ("src/app.ts", "claude-sonnet-4", "dev"): "inactive",
    }


class _CountParses:
    """Counts the parses that reach the schemas (answers none itself)."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl(tryfirst=True)
    def pi_rules_parse(self, rule_file, text, extra_keys):  # noqa: ANN001, ANN201 - the hookspec's
        self.calls += 1


def test_parses_above_cwd_inside_the_git_root_are_kept_for_the_next_process(tmp_path, monkeypatch):
    """The kept parses are bounded by the git root, not cwd: a new engine (a new process)
    below the root parses neither the root's CLAUDE.md (which imports a file beside it,
    outside cwd) nor cwd's own rule — and an untrusted discovery reads neither."""
    repo = _repo(tmp_path / "repo")
    make_rules(repo, {"CLAUDE.md": "Root memory: @notes.md\n", "notes.md": "noted.\n",
                      "sub/.pi/rules/a.md": rule_text("Sub.", alwaysApply=True)})
    settle_racy_clock(monkeypatch)
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    cwd = str(repo / "sub")

    def parses(trusted: bool = True) -> tuple[int, list[str]]:
        counter = _CountParses()
        found = Engine(fresh_manager([("count", counter)]), home=str(home), env=env).discover(cwd, trusted=trusted)
        return counter.calls, sorted(r.body.strip() for r in found.rules)

    assert parses(trusted=False) == (0, [])  # untrusted: no project file read
    assert parses() == (2, ["Root memory: noted.", "Sub."])  # the control: the first process parses both
    assert parses() == (0, ["Root memory: noted.", "Sub."])
    assert parses(trusted=False) == (0, [])


def test_discovery_asked_without_a_selection_reads_the_import_variable(tmp_path):
    """``Discoverer.discover`` without the settings' importers falls back on
    ``PI_RULES_IMPORT``, with its errors (``Engine.discover`` always passes its own)."""
    project = make_rules(tmp_path / "proj", {".github/copilot-instructions.md": "Copilot.\n",
                                            ".claude/rules/c.md": "Claude.\n"})
    home = str(tmp_path / "home")
    bodies = {}
    for chosen in ("copilot", "claude", "copilot,nonesuch"):
        found = _engine(home, PI_RULES_IMPORT=chosen).discovery.discover(str(project))
        bodies[chosen] = ([r.body.strip() for r in found.rules], [(e.kind, e.path) for e in found.errors])
    assert bodies == {
        "copilot": (["Copilot."], []),
        "claude": (["Claude."], []),
        # An unknown name: the value is refused, named, and the defaults (all) read.
        "copilot,nonesuch": (["Copilot.", "Claude."], [("invalid-value", "PI_RULES_IMPORT")]),
    }


def test_a_relative_or_unnormalised_working_directory_gives_absolute_normal_paths(tmp_path, monkeypatch):
    project = make_rules(tmp_path / "proj", {".pi/rules/a.md": rule_text(alwaysApply=True), "x/keep": ""})
    engine = _engine(str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    for spelling in ("proj", f"{project}/x/..", f"{project}/"):
        found = engine.discover(spelling)
        assert [r.file.path for r in found.rules] == [str(project / ".pi" / "rules" / "a.md")], spelling


def test_a_projects_import_setting_never_un_imports_the_users_own_files(tmp_path):
    """The user's own imported files follow the user's selection (``global_importers``),
    not the project's ``import = "none"``."""
    home = make_rules(tmp_path / "home", {".cursor/rules/mine.mdc": "---\nalwaysApply: true\n---\nMine.\n"})
    project = make_rules(tmp_path / "proj", {".cursor/rules/theirs.mdc": "---\nalwaysApply: true\n---\nTheirs.\n"})
    engine = _engine(str(home))
    assert sorted(r.body.strip() for r in engine.discover(str(project)).rules) == ["Mine.", "Theirs."]  # the control
    make_rules(project, {".pi/rules.toml": 'import = "none"\n'})
    assert [r.body.strip() for r in _engine(str(home)).discover(str(project)).rules] == ["Mine."]


class _ListingSource:
    """A third-party source listing one project file, ``cwd``/``relative``, as it is: it
    neither checks the trust, nor resolves the path inside the project, nor looks whether
    the file exists or another source lists it too (each a plugin's possible bug)."""

    def __init__(self, relative: str, plugin: str, order: tuple[int, int, str, str]) -> None:
        self.relative, self.plugin, self.order = relative, plugin, order

    @hookimpl
    def pi_rules_sources(self, context):  # noqa: ANN001, ANN201 - the hookspec's
        path = os.path.join(context.cwd, self.relative)
        return [RuleFile(path, os.path.dirname(path), os.path.basename(path), context.cwd, self.plugin, "v1",
                         "project", self.order)]


def test_an_untrusted_discovery_drops_a_project_file_a_plugin_listed_anyway(rule_project):
    rule_project.write({"notes/team.md": rule_text("Team.", alwaysApply=True)})
    engine = rule_project.engine([("blind", _ListingSource("notes/team.md", "blind", (50, 0, "", "team.md")))])
    assert [r.body for r in engine.discover(str(rule_project.cwd)).rules] == ["Team."]  # the control
    assert engine.discover(str(rule_project.cwd), trusted=False).rules == ()


def test_the_engines_environment_reaches_the_sources(rule_project, tmp_path):
    """Copilot's ``COPILOT_CUSTOM_INSTRUCTIONS_DIRS`` is read from the engine's environment."""
    team = make_rules(tmp_path / "team", {".github/instructions/t.instructions.md": "Team.\n"})
    assert rule_project.engine().discover(str(rule_project.cwd)).rules == ()
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = str(team)
    assert [r.body.strip() for r in rule_project.engine().discover(str(rule_project.cwd)).rules] == ["Team."]


def test_the_sources_errors_are_listed_once_each_by_path(rule_project, tmp_path):
    """Errors the sources report (not the reads): each once, ordered by path, then kind."""
    rule_project.env["COPILOT_CUSTOM_INSTRUCTIONS_DIRS"] = "relative/dir, relative/dir, /abs/../ok"
    rules = rule_project.cwd / ".pi" / "rules"
    rules.mkdir(parents=True)
    os.symlink("nowhere", rules / "broken.md")
    os.mkfifo(rules / "fifo.md")
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [(e.kind, e.path) for e in found.errors] == [
        ("read-failure", str(rules / "broken.md")),
        ("read-failure", str(rules / "fifo.md")),
        ("invalid-value", "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"),
    ]


def test_the_users_own_files_are_read_first_and_counted_once(rule_project, monkeypatch):
    monkeypatch.setattr(discovery, "MAX_RULE_FILES", 2)
    rule_project.write_global({"mine.md": rule_text("Mine.", alwaysApply=True)})
    rule_project.write({".pi/rules/theirs.md": rule_text("Theirs.", alwaysApply=True)})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [r.body for r in found.rules] == ["Theirs.", "Mine."] and found.errors == ()  # two files, at the cap
    rule_project.write({".pi/rules/more.md": rule_text("More.", alwaysApply=True)})
    found = rule_project.engine().discover(str(rule_project.cwd))
    # Over the cap: the user's own file is read first, so the project's last one is left out.
    assert [r.body for r in found.rules] == ["More.", "Mine."]
    assert [e.message.split(";")[0] for e in found.errors] == [
        "the sources list 3 rule files, over the limit of 2 per discovery"]


def test_the_deadline_never_costs_the_users_own_rules(rule_project, monkeypatch):
    rule_project.write_global({"mine.md": rule_text("Mine.", alwaysApply=True)})
    rule_project.write({".pi/rules/theirs.md": rule_text("Theirs.", alwaysApply=True)})
    monkeypatch.setattr(deadline_module.time, "monotonic", StepClock(0.1))  # 100 ms a reading: 1 ms is over at once
    rule_project.env["PI_RULES_DEADLINE_MS"] = "1"
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [r.body for r in found.rules] == ["Mine."]
    assert [e.message.split(":")[0] for e in found.errors if "time budget" in e.message] == ["1 rule file not read"]


def test_damaged_text_is_repaired_only_for_an_importer_whose_tool_reads_it(rule_project):
    """claude-md declares ``lossy_utf8`` (Claude Code reads a damaged CLAUDE.md); the
    native format does not, so the same bytes there are an error and no rule."""
    rule_project.write({"CLAUDE.md": b"Caf\xe9 rules.\n", ".pi/rules/native.md": b"---\nalwaysApply: true\n---\nCaf\xe9.\n"})
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert [(r.file.plugin, r.body) for r in found.rules] == [("claude-md", "Caf\ufffd rules.\n")]
    assert [(w.code, w.path) for w in found.warnings] == [("invalid-utf8", str(rule_project.cwd / "CLAUDE.md"))]
    assert [e.path for e in found.errors] == [str(rule_project.cwd / ".pi/rules/native.md")]


def test_a_file_gone_before_it_is_read_is_skipped_and_the_rest_read(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text("Kept.", alwaysApply=True)})
    gone = _ListingSource("gone.md", "gone", (0, 0, "", ""))  # read first, and absent
    found = rule_project.engine([("gone", gone)]).discover(str(rule_project.cwd))
    assert [r.body for r in found.rules] == ["Kept."] and found.errors == ()


def test_a_file_two_sources_list_is_one_rule_of_the_first(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text("Once.", alwaysApply=True)})
    echo = _ListingSource(".pi/rules/a.md", "echo", (99, 0, "", "a.md"))  # after the native source
    found = rule_project.engine([("echo", echo)]).discover(str(rule_project.cwd))
    assert [(r.id, r.file.plugin, r.body) for r in found.rules] == [("a", "native", "Once.")]


def test_a_project_file_is_read_inside_the_project_whatever_source_listed_it(tmp_path):
    """The read itself resolves a project file inside the project (a source may not have,
    or the file may have become a link since): a link leading out is refused, not read."""
    (tmp_path / "secret.md").write_text(rule_text("Secret.", alwaysApply=True))
    project = make_rules(tmp_path / "proj", {"notes/inside.md": rule_text("Inside.", alwaysApply=True)})
    os.symlink("inside.md", project / "notes" / "link.md")
    links = _ListingSource("notes/link.md", "links", (50, 0, "", "link.md"))
    engine = Engine(fresh_manager([("links", links)]), home=str(tmp_path / "home"),
                    env={"HOME": str(tmp_path / "home")})
    assert [r.body for r in engine.discover(str(project)).rules] == ["Inside."]  # the control: a link inside
    os.remove(project / "notes" / "link.md")
    os.symlink("../../secret.md", project / "notes" / "link.md")
    found = engine.discover(str(project))
    assert found.rules == ()
    assert [(e.kind, e.path) for e in found.errors] == [("read-failure", str(project / "notes" / "link.md"))]
    assert "leads outside the project directory" in found.errors[0].message
