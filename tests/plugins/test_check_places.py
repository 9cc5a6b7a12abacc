"""Every error and warning that has a place in its file carries it (issue 34): the line
and column of ``check --format github`` and ``sarif`` are the offending key, value or
byte, not ``line=1``. One real rule file (tests/fixtures/places, its SOURCE says where
each comes from) per code; a warning about the whole file keeps line 1 and no column
(docs/lint.md, "Where an annotation lands").

Goldens: tests/golden/places-github.txt (every project's annotations, in code order) and
tests/golden/places/<code>.sarif.json, refreshed with ``PI_RULES_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from golden_files import GOLDEN, check_golden
from rules_hosts.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "places"
CODES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
# code -> (the file, what its annotated line holds); None: the file as a whole (line 1, no column).
# A settings file's places are lines only: tomllib keeps no positions, a line scan finds the key.
LINE_ONLY = {"unknown-host"}
EXPECTED: dict[str, tuple[str, str | None]] = {
    "double-frontmatter": (".cursor/rules/posthog-feature-flags.mdc", "---"),
    "glob-dialect": (".continue/rules/react-components.md", "[!.]"),
    "ignored-key": (".windsurf/rules/api-standards.md", "applyTo:"),
    "invalid-utf8": ("AGENTS.md", "\ufffdercel AI SDK"),
    "invalid-value": (".pi/rules/legacy-v3-code.md", "- path:"),
    "manual-attach": (".github/instructions/feature-change-guidelines.instructions.md", None),
    "skill-name": (".claude/skills/pdf-tools/SKILL.md", "name: pdf"),
    "unknown-host": (".pi/rules.toml", "[hosts.claude-cod]"),
    "unknown-key": (".pi/rules/legacy-v3-code.md", "glob:"),
    "yaml-syntax": (".github/instructions/testing-guidelines.instructions.md", "applyTo: **/*.test.ts"),
}
_ANNOTATION = re.compile(r"::(error|warning) file=([^,]*),line=(\d+)(?:,col=(\d+))?,title=pi-rules ([a-z0-9-]+)::")


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_IMPORT", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


def _project(tmp_path: Path, code: str) -> Path:
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / code, project, symlinks=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def _check(capsys, project: Path, form: str) -> str:
    main(["--cwd", str(project), "check", "--format", form])
    return capsys.readouterr().out


def _stable(project: Path, text: str) -> str:
    tmp = project.parent
    text = text.replace(tmp.as_uri(), "file://<tmp>").replace(str(tmp), "<tmp>")
    return re.sub(r'("name": "pi-rules",\n\s*"version": )"[^"]*"', r'\1"<version>"', text)


def test_every_code_has_a_fixture_and_an_expectation():
    assert CODES == sorted(EXPECTED)


@pytest.mark.parametrize("code", CODES)
def test_the_annotation_points_at_the_offending_line(capsys, clean_env, tmp_path, code):
    project = _project(tmp_path, code)
    github = _check(capsys, project, "github")
    found = [m for m in _ANNOTATION.finditer(github) if m.group(5) == code]
    assert len(found) == 1, github
    _, file, line, column, _ = found[0].groups()
    name, holds = EXPECTED[code]
    assert file == name
    if holds is None:  # a warning about the whole file
        assert (line, column) == ("1", None)
        return
    text = (project / name).read_bytes().decode("utf-8", errors="replace").split("\n")[int(line) - 1]
    assert holds in text
    if code in LINE_ONLY:
        assert column is None
    else:
        assert column is not None and 1 <= int(column) <= len(text)
    # SARIF says the same place.
    sarif = json.loads(_check(capsys, project, "sarif"))
    [region] = [r["locations"][0]["physicalLocation"]["region"] for r in sarif["runs"][0]["results"]
                if r["ruleId"] == code]
    assert region == {"startLine": int(line), **({"startColumn": int(column)} if column else {})}


def test_the_rendered_bytes_match_the_goldens(capsys, clean_env, tmp_path):
    annotations = []
    for code in CODES:
        project = _project(tmp_path / code, code)
        annotations.append(f"# {code}\n{_stable(project, _check(capsys, project, 'github'))}")
        check_golden(f"{code}.sarif.json", _stable(project, _check(capsys, project, "sarif")), GOLDEN / "places")
    check_golden("places-github.txt", "".join(annotations))
