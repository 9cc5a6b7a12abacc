"""The Continue importer (``rules_importers/continue_rules.py``), pinned where mutation
testing found it unpinned (issue 32).

What a user sees: ``pi-rules plugins --json``, the rules discovery makes of
``.continue/rules``, and the status and reasons of a rule with ``regex`` — which touched
files are searched, what each one that was not searched (fully) says, what a cut search
says, which files are read again. docs/mutation.md ("Continue") lists the mutants these
kill and the ones left, explained.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

import rules_importers.continue_rules as continue_rules
from rules_core import deadline as deadline_module
from rules_core import hookimpl
from rules_core.model import Facts, Verdict
from rules_core.rule_tests.pytest_plugin import rule_text  # noqa: F401 - the rule_project fixture's module

from importer_helpers import cli  # noqa: F401 - pytest fixture
from importer_helpers import BAD_AGENTS, discover, status, text_with_front
from suite_helpers import StepClock, count_listings

RULES = Path(".continue") / "rules"


@pytest.fixture(autouse=True)
def fresh_verdicts():
    """Regex verdicts are remembered per file version; each test starts without them."""
    continue_rules._seen.clear()
    yield
    continue_rules._seen.clear()


def write_rules(project, files: dict) -> None:
    project.write({str(RULES / name): text for name, text in files.items()})


def regex_rule(patterns: list[str], front: str = "") -> str:
    return text_with_front(front + "regex: " + json.dumps(patterns) + "\n")


class _Opens:
    """``os.open`` as it is, counting the opens of each path (a spy, not a stand-in)."""

    def __init__(self, monkeypatch, refuse: str | None = None) -> None:
        self.paths: list[str] = []
        real = os.open

        def spy(path, flags, *args, **kwargs):
            self.paths.append(os.fsdecode(path))
            if refuse is not None and os.fsdecode(path) == refuse:
                raise PermissionError(13, "Permission denied", path)  # what a non-root user meets
            return real(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", spy)

    def of(self, path: Path) -> int:
        return self.paths.count(str(path))


# -- the importer's entry: plugins --json, damaged bytes, a file named ".md" -------------------


def test_plugins_lists_continue_with_its_summary_on_by_default(rule_project, cli):
    importers = {i["name"]: i for i in json.loads(cli(rule_project, "--json", "plugins")[1])["importers"]}
    assert (importers["continue"]["summary"], importers["continue"]["default"]) == (
        "Continue: .continue/rules/**/*.md, ~/.continue/rules (global)", True)


def test_a_damaged_byte_in_a_continue_rule_is_read_as_a_replacement_character(rule_project):
    rule_project.write({".continue/rules/a.md": b"caf\xff\n"})
    found = discover(rule_project)
    assert [r.body for r in found.rules if r.file.plugin == "continue"] == ["caf\ufffd\n"]
    assert [w.code for w in found.warnings if w.plugin == "continue"] == ["invalid-utf8"]
    assert [e for e in found.errors if e.plugin == "continue"] == []


def test_a_rule_file_named_just_md_gets_the_id_md(rule_project):
    write_rules(rule_project, {".md": "Dot.\n", "b.md": "B.\n"})
    assert [(r.id, r.relative_path) for r in discover(rule_project).rules] == [("md", ".md"), ("b", "b.md")]


def test_a_heading_describes_the_rule_without_its_closing_run(rule_project):
    write_rules(rule_project, {"x.md": "# Style guide ##\n\nBe brief.\n"})
    assert discover(rule_project).rules[0].description == "Style guide"


def test_a_description_that_is_not_text_is_invalid_value_with_the_fix(rule_project):
    write_rules(rule_project, {"x.md": text_with_front("description: 7\n")})
    found = discover(rule_project)
    assert found.rules == () and [(e.kind, e.message) for e in found.errors] == [
        ("invalid-value", 'description must be text, got the number 7; write description: "…" in quotes')]


def test_a_bad_agents_key_in_a_continue_rule_is_invalid_value(rule_project):
    write_rules(rule_project, {"x.md": text_with_front("agents: 5\n")})
    found = discover(rule_project)
    assert found.rules == () and [(e.plugin, e.kind, e.message) for e in found.errors] == [
        ("continue", "invalid-value", BAD_AGENTS)]


def test_working_in_home_lists_the_shared_folder_once(rule_project, monkeypatch):
    shared = rule_project.home / RULES
    shared.mkdir(parents=True)
    (shared / "mine.md").write_text("Answer briefly.\n")
    engine = rule_project.engine()
    listed = count_listings(monkeypatch)
    found = engine.discover(str(rule_project.home), True)
    assert [(r.id, r.source) for r in found.rules] == [("mine", "project")]
    assert listed.count(str(shared)) == 1


# -- which touched files are searched, and what each says ---------------------------------------


def test_a_touched_file_not_there_or_a_folder_is_no_match_and_says_nothing_more(rule_project):
    rule_project.write({"src/keep.txt": "plain\n"})
    write_rules(rule_project, {"x.md": regex_rule(["NEEDLE"])})
    assert status(rule_project, "x", touched=["new.ts", "src"]) == (
        "inactive", ("no touched file's content matches regex /NEEDLE/",))


def test_exactly_max_files_touched_files_are_all_searched_and_no_more_is_said(rule_project):
    names = [f"f{i:02d}.txt" for i in range(continue_rules.MAX_FILES)]
    rule_project.write({name: "plain\n" for name in names})
    write_rules(rule_project, {"x.md": regex_rule(["NEEDLE"])})
    assert status(rule_project, "x", touched=names) == ("inactive", ("no touched file's content matches regex /NEEDLE/",))
    rule_project.write({names[-1]: "NEEDLE\n"})  # positive control: the last one is searched
    assert status(rule_project, "x", touched=names)[0] == "active"


def test_a_file_that_cannot_be_opened_is_no_match_and_named(rule_project, monkeypatch):
    rule_project.write({"secret.ts": "NEEDLE\n", "open.ts": "NEEDLE\n"})
    write_rules(rule_project, {"x.md": regex_rule(["NEEDLE"])})
    _Opens(monkeypatch, refuse=str(rule_project.cwd / "secret.ts"))
    assert status(rule_project, "x", touched=["secret.ts"]) == (
        "inactive", ("no touched file's content matches regex /NEEDLE/",
                     "secret.ts not read: it could not be opened as a plain file"))
    assert status(rule_project, "x", touched=["open.ts"])[0] == "active"  # positive control


def test_a_file_that_is_not_utf8_is_searched_with_its_damaged_bytes_replaced(rule_project):
    rule_project.write({"latin.txt": b"caf\xe9 NEEDLE\n"})
    write_rules(rule_project, {"x.md": regex_rule(["caf\ufffd NEEDLE"])})
    assert status(rule_project, "x", touched=["latin.txt"]) == (
        "active", ("touched latin.txt matches regex /caf\ufffd NEEDLE/",))


def test_a_working_directory_written_with_dot_dots_searches_the_same_files(rule_project):
    rule_project.write({"a.ts": "NEEDLE\n", "sub/x.txt": "x\n"})
    write_rules(rule_project, {"x.md": regex_rule(["NEEDLE"], 'globs: "*.ts"\n')})
    facts = Facts(cwd=f"{rule_project.cwd}/sub/..", touched=("a.ts",))
    judged = next(o for o in rule_project.engine().evaluate(facts).outcomes if o.rule.id == "x")
    assert (judged.status, judged.reasons) == ("active", ("touched a.ts", "touched a.ts matches regex /NEEDLE/"))


# -- the reasons' place among other matchers' -------------------------------------------------


class _Review:
    """A third-party matcher judging every Continue rule, ranked 20 (with the tools)."""

    def __init__(self, ok: bool) -> None:
        self.ok = ok

    @hookimpl
    def pi_rules_match(self, rule, context):
        if rule.file.plugin != "continue":
            return []
        return [Verdict("review", self.ok, ("reviewed" if self.ok else "not reviewed",), 20)]


@pytest.mark.parametrize("touched, ok, expected", [
    ("a.ts", True, ("active", ("touched a.ts matches regex /NEEDLE/", "reviewed"))),
    ("b.ts", False, ("inactive", ("no touched file's content matches regex /NEEDLE/", "not reviewed"))),
])
def test_the_regex_reason_comes_right_after_the_paths_before_other_matchers(rule_project, touched, ok, expected):
    rule_project.write({"a.ts": "NEEDLE\n", "b.ts": "plain\n"})
    write_rules(rule_project, {"x.md": regex_rule(["NEEDLE"])})
    evaluation = rule_project.engine(plugins=[("review", _Review(ok))]).evaluate(
        rule_project.facts(touched=[touched]))
    assert [(o.status, o.reasons) for o in evaluation.outcomes if o.rule.id == "x"] == [expected]


# -- the rule's search budget -------------------------------------------------------------------


def test_the_searches_a_spent_budget_skips_add_up_over_the_files(rule_project, monkeypatch):
    # Each clock reading is 0.1 s of the rule's 0.25 s: the first file gets two of its
    # three patterns searched, the second none: 1 + 3 searches not run.
    monkeypatch.setattr(deadline_module.time, "monotonic", StepClock(0.1))
    rule_project.env["PI_RULES_DEADLINE_MS"] = "off"  # only the rule's own budget counts
    rule_project.write({"a.txt": "plain\n", "b.txt": "plain\n"})
    write_rules(rule_project, {"x.md": regex_rule(["one", "two", "three"])})
    assert status(rule_project, "x", touched=["a.txt", "b.txt"]) == ("inactive", (
        "no touched file's content matches regex /one/, /two/, /three/",
        "4 searches (pattern × file) not run: the rule's search budget (0.25 s) or the call's deadline "
        "(PI_RULES_DEADLINE_MS) ran out — use fewer or simpler patterns"))


def test_two_slow_patterns_on_one_file_are_both_named(rule_project, monkeypatch):
    monkeypatch.setattr(continue_rules, "RULE_SEARCH_SECONDS", 1000.0)  # each gets its full time
    rule_project.write({"long.txt": "a b " * 2000 + "!\n"})
    write_rules(rule_project, {"slow.md": regex_rule(["(\\w+\\s?)+$", "(\\w+ ?)+$"])})
    tail = ("s on long.txt (catastrophic backtracking?), so it counts as no match — simplify its nested or "
            "overlapping repetitions")
    assert status(rule_project, "slow", touched=["long.txt"]) == ("inactive", (
        "no touched file's content matches regex /(\\w+\\s?)+$/, /(\\w+ ?)+$/",
        f"regex /(\\w+\\s?)+$/ took over 0.1 {tail}; regex /(\\w+ ?)+$/ took over 0.1 {tail}"))


# -- what is remembered -------------------------------------------------------------------------


def test_an_unchanged_file_is_searched_once_and_a_cut_search_again(rule_project, monkeypatch):
    rule_project.write({"a.ts": "plain\n"})
    write_rules(rule_project, {"x.md": regex_rule(["NEEDLE", "OTHER"])})
    opens = _Opens(monkeypatch)
    for _ in range(2):
        assert status(rule_project, "x", touched=["a.ts"])[0] == "inactive"
    assert opens.of(rule_project.cwd / "a.ts") == 1
    # A search the budget cut (the second pattern never ran) is not remembered: searched again.
    continue_rules._seen.clear()
    monkeypatch.setattr(deadline_module.time, "monotonic", StepClock(0.2))
    rule_project.env["PI_RULES_DEADLINE_MS"] = "off"
    for _ in range(2):
        assert "1 searches (pattern × file) not run" in status(rule_project, "x", touched=["a.ts"])[1][1]
    assert opens.of(rule_project.cwd / "a.ts") == 3


def test_the_remembered_verdicts_never_exceed_their_cap(rule_project):
    # 64 rules × 16 files, and one more rule that claims one file: one verdict past the cap.
    names = [f"f{i:02d}.txt" for i in range(continue_rules.MAX_FILES)]
    rule_project.write({name: "plain\n" for name in names})
    per_file = continue_rules._SEEN_CAP // continue_rules.MAX_FILES
    write_rules(rule_project, {f"r{i:02d}.md": regex_rule([f"NEEDLE{i}"]) for i in range(per_file)}
                | {"last.md": regex_rule(["f00"], 'globs: "f00.txt"\n')})
    rule_project.write({"f00.txt": "f00\n"})
    result = {o.rule.id: o.status for o in rule_project.engine().evaluate(rule_project.facts(touched=names)).outcomes}
    assert result["last"] == "active" and {result[f"r{i:02d}"] for i in range(per_file)} == {"inactive"}
    assert 0 < len(continue_rules._seen) <= continue_rules._SEEN_CAP


# -- reading a file: nothing hangs, no link is followed -----------------------------------------
# ``_head`` opens the file the containment check resolved; between the two, the repository
# can swap in a FIFO or a link. A race cannot be staged through the engine, so these call
# ``_head`` on what the swap would leave.


def test_a_fifo_swapped_in_is_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    answered = threading.Event()
    unblocked: list[bool] = []

    def watchdog() -> None:  # a blocking open would wait for a writer forever: be that writer
        if not answered.wait(10):
            unblocked.append(True)
            os.close(os.open(fifo, os.O_WRONLY))

    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    assert continue_rules._head(str(fifo)) is None
    answered.set()
    guard.join()
    assert unblocked == []


def test_a_link_swapped_in_is_not_followed(tmp_path):
    target = tmp_path / "secret.txt"
    target.write_text("NEEDLE\n")
    os.symlink(target, tmp_path / "link.txt")
    assert continue_rules._head(str(target)) == "NEEDLE\n"  # positive control
    assert continue_rules._head(str(tmp_path / "link.txt")) is None
