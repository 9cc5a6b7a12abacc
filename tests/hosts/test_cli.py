"""The command line (CONTRACT §3): commands, exit codes, JSON shapes, hostile input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rules_hosts.cli import main
from suite_helpers import run_in_project
from rules_core.rule_tests.pytest_plugin import rule_text

RULE_KEYS = {"id", "relativePath", "path", "source", "plugin", "description", "load", "priority", "enforcement"}


@pytest.fixture
def project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    rule_project.write(
        {
            ".pi/rules/style.md": rule_text("Style body.", globs=["src/**"], match="touched"),
            ".pi/rules/docs/guide.md": rule_text("Guide body.", globs=["docs/**"], load="on-demand"),
        }
    )
    return rule_project


run = run_in_project  # the shared helper (tests/suite_helpers.py)


def test_report_json_has_the_contract_shape(capsys, project):
    code, out, _ = run(capsys, project, "--json", "report", "--touched", "src/a.py", "--no-branch")
    data = json.loads(out)
    assert code == 0 and set(data) == {
        "rules", "errors", "budget", "section", "sectionTokens", "warnings", "overflow", "pinned", "shellTouched",
        "catalogue",
    }
    style = next(r for r in data["rules"] if r["id"] == "style")
    assert set(style) == RULE_KEYS | {"status", "reasons", "cause", "tokens", "delivery", "room", "duplicateOf"}
    assert (style["status"], style["reasons"], style["cause"]) == ("active", ["touched src/a.py"], None)
    assert data["budget"] == {"used": style["tokens"], "limit": 2000}
    assert data["section"].startswith("# Rules\n")


def test_list_json_has_rule_keys_without_evaluation(capsys, project):
    code, out, _ = run(capsys, project, "--json", "list")
    data = json.loads(out)
    assert code == 0 and set(data) == {"rules", "errors"}
    assert all(set(r) == RULE_KEYS | {"conditions"} for r in data["rules"])  # conditions: issue 34


def test_check_exits_1_on_any_error_and_0_when_clean(capsys, project):
    project.write({"src/a.ts": "x", "docs/a.md": "x"})  # live globs: no dead-glob warning
    assert run(capsys, project, "check")[:2] == (0, "ok: 2 rules, no errors\n")
    project.write({".pi/rules/bad.md": "no frontmatter\n"})
    code, out, _ = run(capsys, project, "check")
    assert code == 1 and out == "missing-frontmatter .pi/rules/bad.md: " + out.split(": ", 1)[1]
    code, out, _ = run(capsys, project, "--json", "check")
    assert code == 1 and json.loads(out)["errors"][0]["kind"] == "missing-frontmatter"


def test_show_and_unknown_id(capsys, project):
    code, out, _ = run(capsys, project, "show", "style")
    assert code == 0 and out.endswith("\n\nStyle body.\n") and "conditions: globs src/**; match touched" in out
    assert run(capsys, project, "show", "nope")[:2] == (1, "Unknown rule: nope\n")


@pytest.mark.parametrize(
    "name",
    ["/etc/passwd", "../style.md", "docs/../style.md", "C:\\x.md", "\\\\server\\share", "missing.md", "docs\\..\\style.md", ""],
)
def test_read_refuses_and_says_unknown_rule(capsys, project, name):
    code, out, _ = run(capsys, project, "read", name)
    assert code == 1 and out.startswith("Unknown rule: ")


def test_read_returns_the_body_by_relative_path(capsys, project):
    assert run(capsys, project, "read", "docs/guide.md")[:2] == (0, "Guide body.\n")


def test_render_shows_on_demand_index(capsys, project):
    code, out, _ = run(capsys, project, "render", "--touched", "docs/x.md", "--no-branch")
    assert code == 0
    assert out.endswith(
        "## Reference rules available on demand\n\n"
        "- docs/guide.md — A test rule (fetch with the read_rule tool)\n"
    )


def test_untrusted_reads_no_project_rules(capsys, project):
    code, out, _ = run(capsys, project, "--untrusted", "--json", "list")
    assert json.loads(out)["rules"] == []


def test_max_tokens_env_is_honoured(capsys, project, monkeypatch):
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "7tokens")
    _, out, _ = run(capsys, project, "--json", "report", "--no-branch")
    assert json.loads(out)["budget"]["limit"] == 7


def test_missing_cwd_is_a_clean_error(capsys):
    assert main(["--cwd", "/no/such/dir", "list"]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_control_characters_in_names_are_escaped(capsys, project):
    project.write({".pi/rules/evil\x1b[31m.md": "no frontmatter\n"})
    code, out, _ = run(capsys, project, "check")
    assert "\x1b" not in out and "evil\\x1b[31m.md" in out
    _, out, _ = run(capsys, project, "--json", "check")
    assert "\x1b" not in out and json.loads(out)["errors"][0]["path"].endswith("evil\x1b[31m.md")


def test_branch_defaults_to_live_git(capsys, project):
    subprocess.run(["git", "init", "-q", "-b", "release/1.0", str(project.cwd)], check=True)
    subprocess.run(["git", "-C", str(project.cwd), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    project.write({".pi/rules/rel.md": rule_text(branch="release/*")})
    _, out, _ = run(capsys, project, "--json", "report")
    rel = next(r for r in json.loads(out)["rules"] if r["id"] == "rel")
    assert rel["status"] == "active" and rel["reasons"] == ["branch release/1.0"]
    _, out, _ = run(capsys, project, "--json", "report", "--no-branch")
    assert next(r for r in json.loads(out)["rules"] if r["id"] == "rel")["status"] == "inactive"


def test_python_dash_m_and_console_script_entry_point(project):
    from importlib.metadata import entry_points

    assert [ep.value for ep in entry_points(group="console_scripts", name="pi-rules")] == ["rules_hosts.cli:main"]
    for package in ("rules_hosts", "rules_core"):  # rules_core: the CONTRACT §3 alias
        done = subprocess.run([sys.executable, "-m", package, "--cwd", str(project.cwd), "list"],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0 and "style" in done.stdout
        failing = subprocess.run([sys.executable, "-m", package, "--cwd", str(project.cwd / "nope"), "list"],
                                 capture_output=True, text=True, check=False)
        assert failing.returncode == 2  # the alias passes the exit code through


def test_read_accepts_rule_urls_by_id_and_lists_names_when_unknown(capsys, project):
    assert run(capsys, project, "read", "rule://guide")[:2] == (0, "Guide body.\n")
    code, out, _ = run(capsys, project, "read", "rule://nope")
    assert (code, out) == (1, "Unknown rule: rule://nope\nAvailable: guide, style\n")
    code, out, _ = run(capsys, project, "read", "rule://../style")
    assert code == 1 and out.startswith("Unknown rule: rule://../style\n")
