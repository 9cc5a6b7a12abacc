"""Each importer reads as its own tool reads (issue 33; docs/importers.md, "Glob dialects"
and "Damaged bytes"): Continue's globs are minimatch's, a damaged byte is U+FFFD with a
warning where the tool reads that way, Continue's empty ``globs``/``regex`` are absent."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rules_core.globs.matching import GlobError, compile_glob
from rules_importers.dialects import MINIMATCH, PICOMATCH, translate

from importer_helpers import cli  # noqa: F401 - pytest fixture
from importer_helpers import git_init, statuses

DATA = Path(__file__).parent.parent / "data" / "minimatch.jsonl"


def _recorded() -> tuple[dict, dict[str, list[dict]]]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    by_pattern: dict[str, list[dict]] = defaultdict(list)
    for line in lines[1:]:
        row = json.loads(line)
        by_pattern[row["pattern"]].append(row)
    return json.loads(lines[0]), dict(by_pattern)


HEADER, RECORDED = _recorded()


def _engine(glob: str, path: str) -> bool | None:
    try:
        return compile_glob(glob).match(path)
    except GlobError:
        return None


# -- the minimatch dialect, against minimatch's own answers --------------------------------


def test_the_recording_is_the_minimatch_continue_ships():
    # Continue's core/package-lock.json pins minimatch 10.2.5 (commit d0a3c0b6).
    assert HEADER["minimatch"] == "10.2.5"
    assert len(RECORDED) >= 150 and sum(map(len, RECORDED.values())) >= 8000


@pytest.mark.parametrize("pattern", sorted(RECORDED))
def test_a_translated_continue_glob_matches_what_minimatch_matches(pattern):
    """Every recorded answer agrees (with ``dot: true``: pi-rules matches dot files in
    every dialect, asserted below); a glob the translation cannot carry says so."""
    done = translate(MINIMATCH, pattern)
    wrong = [(r["path"], r["match_dot"]) for r in RECORDED[pattern] if _engine(done.glob, r["path"]) != r["match_dot"]]
    if any("cannot translate" in why for why in done.why):
        assert wrong, "a construct marked untranslatable must really differ (else drop the note)"
    else:
        assert wrong == []


def test_the_translation_is_needed():
    """Positive control: read as picomatch, many recorded globs answer differently."""
    differ = [p for p, rows in RECORDED.items() if any(_engine(p, r["path"]) != r["match_dot"] for r in rows)]
    assert len(differ) >= 10
    assert "src/**/[!.]*.ts" in differ


def test_dot_files_are_the_one_deliberate_difference():
    """Continue calls minimatch without ``dot``: ``*`` and ``**`` skip dot files there.
    pi-rules matches them (docs/importers.md, "Where pi-rules deliberately differs")."""
    differing = [(p, r) for p, rows in RECORDED.items() for r in rows if r["match"] != r["match_dot"]]
    assert len(differing) >= 5
    for pattern, row in differing:
        assert any(part.startswith(".") for part in row["path"].split("/")), row
        done = translate(MINIMATCH, pattern)
        if not done.why or not any("cannot translate" in why for why in done.why):
            assert _engine(done.glob, row["path"]) == row["match_dot"] != row["match"]


@given(st.text(alphabet="ab[]!^()|+*?@{},./\\-", max_size=24))
@settings(max_examples=300, deadline=None)
def test_translating_any_text_never_raises_and_keeps_plain_globs(text):
    done = translate(MINIMATCH, text)
    _engine(done.glob, "a/b")  # compiles or is a GlobError, never another exception
    if not set(text) & set("[()|+\\"):
        assert done.glob == text and done.why == ()
    assert translate(PICOMATCH, text).glob == text


# -- Continue on a real tree ----------------------------------------------------------------


def _continue(project, files: dict[str, str]) -> None:
    git_init(project.cwd)
    for name, text in files.items():
        path = project.cwd / ".continue" / "rules" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_negated_class_applies_as_in_continue_and_check_says_why(rule_project, cli):
    _continue(rule_project, {"ts.md": '---\nglobs: "src/**/[!.]*.ts"\n---\nTS rule\n'})
    code, out = cli(rule_project, "report", "--json", "--touched", "src/utils/helper.ts")
    assert {r["id"]: r["status"] for r in json.loads(out)["rules"]}["ts"] == "active"
    code, out = cli(rule_project, "report", "--json", "--touched", "src/utils/.helper.ts")
    assert {r["id"]: r["status"] for r in json.loads(out)["rules"]}["ts"] == "inactive"
    code, out = cli(rule_project, "check", "--json")
    [warning] = [w for w in json.loads(out)["warnings"] if w["code"] == "glob-dialect"]
    assert warning["path"].endswith(".continue/rules/ts.md")
    assert "'src/**/[!.]*.ts'" in warning["message"] and "'src/**/[^.]*.ts'" in warning["message"]
    assert code == 0


def test_the_same_glob_in_a_picomatch_tool_is_read_as_picomatch_without_a_warning(rule_project, cli):
    """Claude Code's ``.claude/rules`` keep the spec's picomatch reading: no translation,
    no warning (and the glob, the set {!, .}, does not match helper.ts)."""
    git_init(rule_project.cwd)
    rule_project.write({})
    path = rule_project.cwd / ".claude" / "rules" / "ts.md"
    path.parent.mkdir(parents=True)
    path.write_text('---\npaths: "src/**/[!.]*.ts"\n---\nTS rule\n')
    code, out = cli(rule_project, "report", "--json", "--touched", "src/utils/helper.ts")
    assert {r["id"]: r["status"] for r in json.loads(out)["rules"]}["ts"] == "inactive"
    code, out = cli(rule_project, "check", "--json")
    assert [w for w in json.loads(out)["warnings"] if w["code"] == "glob-dialect"] == []


@pytest.mark.parametrize("front, expected", [
    ('globs: ""\n', "active"),  # no condition: always, as in Continue
    ('regex: ""\n', "active"),
    ('globs: ""\nregex: ""\n', "active"),
    ('globs: ""\nalwaysApply: false\n', "on-demand"),  # false with neither: the agent requests it
    ('globs: "src/**"\nregex: ""\n', "inactive"),  # the glob alone decides; nothing touched
])
def test_empty_globs_and_regex_are_absent(rule_project, front, expected):
    _continue(rule_project, {"r.md": f"---\n{front}---\nBody.\n"})
    found, evaluation = statuses(rule_project)
    assert evaluation.errors == ()
    assert found["r"][0] == expected


# -- damaged bytes -------------------------------------------------------------------------


LOSSY = {  # importer: a file its tool reads with Node's or Rust's lossy decoding
    "agents-md": "AGENTS.md",
    "claude-md": "CLAUDE.md",
    "gemini-md": "GEMINI.md",
    "continue": ".continue/rules/r.md",
    "cursor": ".cursor/rules/r.mdc",
    "windsurf": ".windsurf/rules/r.md",
    "cline": ".clinerules/r.md",
    "kiro": ".kiro/steering/r.md",
    "roo": ".roo/rules/r.md",
}


@pytest.mark.parametrize("importer", sorted(LOSSY))
def test_an_invalid_byte_loads_as_a_replacement_character_with_a_warning(rule_project, cli, importer):
    git_init(rule_project.cwd)
    path = rule_project.cwd / LOSSY[importer]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"---\nalwaysApply: true\ntrigger: always_on\ninclusion: always\n---\nproject\xff doc\n"
                     if importer in {"cursor", "windsurf", "kiro"} else b"project\xff doc\n")
    code, out = cli(rule_project, "check", "--json")
    result = json.loads(out)
    assert result["errors"] == []
    [warning] = [w for w in result["warnings"] if w["code"] == "invalid-utf8"]
    assert warning["path"] == str(path)
    offset = path.read_bytes().index(b"\xff")
    assert f"byte {offset}" in warning["message"] and "U+FFFD" in warning["message"]
    assert code == 0
    code, out = cli(rule_project, "render")
    assert "project\ufffd doc" in out


@pytest.mark.parametrize("path", [".pi/rules/n.md", ".github/instructions/n.instructions.md", ".claude/rules/n.md"])
def test_native_and_spec_imports_keep_the_spec_strictness(rule_project, cli, path):
    git_init(rule_project.cwd)
    target = rule_project.cwd / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"---\ndescription: d\nalwaysApply: true\n---\nbad \xff\n")
    code, out = cli(rule_project, "check", "--json")
    [error] = json.loads(out)["errors"]
    assert (error["kind"], error["path"]) == ("read-failure", str(target))
    assert "not valid UTF-8 (byte 45)" in error["message"]
    assert code == 1


def test_two_damaged_sequences_are_counted(rule_project, cli):
    git_init(rule_project.cwd)
    (rule_project.cwd / "AGENTS.md").write_bytes(b"a\xffb\xfe\xfdc\n")
    code, out = cli(rule_project, "check", "--json")
    [warning] = [w for w in json.loads(out)["warnings"] if w["code"] == "invalid-utf8"]
    assert "byte 1 and 2 more" in warning["message"]
