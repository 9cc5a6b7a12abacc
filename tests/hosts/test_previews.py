"""``--host`` previews (CONTRACT §7, docs/export.md "Previews"): what an agent pi-rules
does not drive loads by itself, in its order, under its caps — on real trees."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_core.rule_tests.pytest_plugin import rule_text
from suite_helpers import run_in
from tests.golden_files import check_golden


@pytest.fixture
def project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    return rule_project


run = run_in  # the shared helper (tests/suite_helpers.py)


def _golden_report(capsys, cwd, host: str, touched: str, golden: str) -> str:
    code, out, _ = run(capsys, cwd, "report", "--host", host, "--touched", touched)
    assert code == 0
    check_golden(golden, out)
    return out


def _chain(project) -> None:
    """A 40 KiB AGENTS.md chain: 20 KiB at the root, 10 KiB in packages, 10 KiB in the app."""
    project.write({
        "AGENTS.md": "# Root\n" + "r" * (20 * 1024 - 7),
        "packages/AGENTS.md": "# Packages\n" + "p" * (10 * 1024 - 11),
        "packages/app/AGENTS.md": "# App\n" + "a" * (10 * 1024 - 6),
        "packages/app/src/AGENTS.md": "# Below cwd\n",
        ".pi/rules/style.md": rule_text("pi-rules' own rule.", alwaysApply=True),
    })


def test_codex_names_the_file_its_32_kib_budget_cuts(capsys, project):
    _chain(project)
    code, out, _ = run(capsys, project.cwd / "packages/app", "report", "--host", "codex")
    assert code == 0
    check_golden("preview-codex.txt", out)
    assert "warning: Codex cuts AGENTS.md: Codex keeps 2048 of its 10240 bytes" in out


def test_codex_preview_json_and_render_follow_codex_budget(capsys, project):
    _chain(project)
    app = project.cwd / "packages/app"
    data = json.loads(run(capsys, app, "--json", "report", "--host", "codex")[1])
    states = {f["relativePath"]: (f["state"], f["loadedSize"]) for f in data["files"]}
    assert states == {"../../AGENTS.md": ("loaded", 20480), "../AGENTS.md": ("loaded", 10240),
                      "AGENTS.md": ("cut", 2048), "src/AGENTS.md": ("not-loaded", 0)}
    assert data["warnings"] == [next(w for w in data["warnings"] if w.startswith("Codex cuts AGENTS.md:"))]
    context = json.loads(run(capsys, app, "--json", "render", "--host", "codex")[1])["context"]
    # Codex's budget counts the files' bytes; it joins the parts with a blank line.
    assert len(context.encode()) == 32 * 1024 + 2 * len("\n\n")
    assert context.startswith("# Root\n") and context.endswith("a" * 10)
    assert run(capsys, app, "render", "--host", "codex")[1] == context + "\n"  # the text ends its last line
    assert "pi-rules' own rule." not in context
    # positive control: the same tree without a preview host does send pi-rules' own rule
    assert "pi-rules' own rule." in run(capsys, app, "render")[1]


def test_codex_under_its_budget_cuts_nothing(capsys, project):
    project.write({"AGENTS.md": "# Root\nSmall.\n", "AGENT.md": "# Other name\n"})
    code, out, _ = run(capsys, project.cwd, "--json", "report", "--host", "codex")
    data = json.loads(out)
    assert [f["state"] for f in data["files"]] == ["loaded"] and data["warnings"] == []


def test_cursor_lists_a_manual_rule_as_not_loaded(capsys, project):
    project.write({
        ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\nAlways.\n",
        ".cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts\nalwaysApply: false\n---\nTypeScript.\n",
        ".cursor/rules/deploy.mdc": "---\ndescription: Use when deploying\nalwaysApply: false\n---\nDeploy.\n",
        ".cursor/rules/manual.mdc": "---\ndescription:\nglobs:\nalwaysApply: false\n---\nOnly when mentioned.\n",
        "AGENTS.md": "# Agents\nShared.\n",
    })
    out = _golden_report(capsys, project.cwd, "cursor", "src/a.ts", "preview-cursor.txt")
    assert "  not loaded  .cursor/rules/manual.mdc  (21 B)\n              Manual rule" in out
    context = run(capsys, project.cwd, "render", "--host", "cursor", "--touched", "src/a.ts")[1]
    assert "Only when mentioned." not in context and "Deploy." not in context
    assert "Always." in context and "TypeScript." in context and "Shared." in context


def test_copilot_follows_vs_code_apply_to_not_rule_spec(capsys, project):
    project.write({
        ".github/copilot-instructions.md": "Repository-wide.\n",
        ".github/instructions/py.instructions.md": '---\napplyTo: "*.py"\n---\nPython.\n',
        ".github/instructions/all.instructions.md": '---\napplyTo: "*"\n---\nEverywhere.\n',
        ".github/instructions/none.instructions.md": "---\ndescription: Release notes\n---\nOnly when attached.\n",
    })
    _golden_report(capsys, project.cwd, "copilot", "pkg/Deep/MOD.PY", "preview-copilot.txt")
    data = json.loads(run(capsys, project.cwd, "--json", "report", "--host", "copilot", "--touched",
                          "pkg/Deep/MOD.PY")[1])
    states = {f["relativePath"]: f["state"] for f in data["files"]}
    assert states[".github/instructions/py.instructions.md"] == "loaded"  # **/ prepended, no case
    assert states[".github/instructions/all.instructions.md"] == "loaded"  # `*` is always in VS Code
    assert states[".github/instructions/none.instructions.md"] == "manual"
    # positive control: pi-rules' own reading (RULE-SPEC) of the same files differs on all three
    plain = json.loads(run(capsys, project.cwd, "--json", "report", "--touched", "pkg/Deep/MOD.PY")[1])
    status = {r["relativePath"]: r["status"] for r in plain["rules"]}
    assert status["py.instructions.md"] == "inactive" and status["all.instructions.md"] == "inactive"
    assert status["none.instructions.md"] == "active"


def test_gemini_loads_every_gemini_md_at_start_framed_with_its_path(capsys, project):
    project.write({"GEMINI.md": "# Root\nRoot text.\n", "lib/GEMINI.md": "# Lib\nLib text.\n"})
    out = run(capsys, project.cwd, "render", "--host", "gemini")[1]
    assert out == ("--- Context from: GEMINI.md ---\n# Root\nRoot text.\n--- End of Context from: GEMINI.md ---\n\n"
                   "--- Context from: lib/GEMINI.md ---\n# Lib\nLib text.\n--- End of Context from: lib/GEMINI.md ---\n")


def test_kiro_manual_steering_is_loaded_only_when_the_prompt_names_it(capsys, project):
    project.write({".kiro/steering/guide.md": "---\ninclusion: manual\n---\nGuide.\n",
                   ".kiro/steering/base.md": "Base.\n"})
    data = json.loads(run(capsys, project.cwd, "--json", "report", "--host", "kiro")[1])
    assert {f["relativePath"]: f["state"] for f in data["files"]} == {
        ".kiro/steering/base.md": "loaded", ".kiro/steering/guide.md": "manual"}
    data = json.loads(run(capsys, project.cwd, "--json", "report", "--host", "kiro", "--prompt", "see #guide")[1])
    assert {f["relativePath"]: f["state"] for f in data["files"]}[".kiro/steering/guide.md"] != "manual"


def test_windsurf_cuts_a_rule_file_at_6000_characters(capsys, project):
    project.write({".windsurf/rules/big.md": "---\ntrigger: always_on\n---\n" + "w" * 7000 + "\n",
                   ".windsurf/rules/ask.md": "---\ntrigger: manual\n---\nAsk.\n"})
    data = json.loads(run(capsys, project.cwd, "--json", "report", "--host", "windsurf")[1])
    files = {f["relativePath"]: f for f in data["files"]}
    assert files[".windsurf/rules/big.md"]["state"] == "cut" and files[".windsurf/rules/big.md"]["loadedSize"] == 6000
    assert files[".windsurf/rules/ask.md"]["state"] == "manual"
    assert data["warnings"][0].startswith("Windsurf cuts .windsurf/rules/big.md: Windsurf keeps 6000 of its 7001")


def test_preview_hosts_are_listed_and_an_untrusted_project_previews_nothing(capsys, project):
    _chain(project)
    data = json.loads(run(capsys, project.cwd, "--json", "plugins")[1])
    assert {"codex", "cursor", "copilot", "gemini", "kiro", "windsurf"} <= {h["name"] for h in data["hosts"]}
    data = json.loads(run(capsys, project.cwd, "--untrusted", "--json", "report", "--host", "codex")[1])
    assert data["files"] == []


def test_map_with_a_preview_host_draws_only_what_the_agent_loads(capsys, project):
    project.write({
        "src/a.ts": "x",
        ".cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts\nalwaysApply: false\n---\nTypeScript.\n",
        ".cursor/rules/manual.mdc": "---\ndescription:\nalwaysApply: false\n---\nOnly when mentioned.\n",
        ".pi/rules/own.md": rule_text("pi-rules' own rule.", alwaysApply=True),
    })
    data = json.loads(run(capsys, project.cwd, "map", "--format", "json", "--host", "cursor")[1])
    ids = {r["id"] for folder in data["folders"] for r in folder["rules"]}
    assert ids == {"ts"}
    src = next(f for f in data["folders"] if f["path"] == "src")
    assert [(r["id"], r["status"], r["kind"]) for r in src["rules"]] == [("ts", "active", "path")]
    # positive control: without the preview, pi-rules' own rule and the manual one (its index) are drawn
    plain = json.loads(run(capsys, project.cwd, "map", "--format", "json")[1])
    assert {"own", "manual", "ts"} <= {r["id"] for folder in plain["folders"] for r in folder["rules"]}


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "previews"


def test_vs_codes_own_instructions_as_vs_code_attaches_them(capsys, project):
    """VS Code's own repository (fixtures/previews/vscode/SOURCE): its TypeScript file
    applies by `applyTo`, its IDisposable file has no `applyTo`, so VS Code attaches it only
    by hand — while pi-rules' own reading (RULE-SPEC) always applies it."""
    shutil.copytree(FIXTURES / "vscode" / ".github", project.cwd / ".github")
    touched = "src/vs/base/common/lifecycle.ts"
    data = json.loads(run(capsys, project.cwd, "--json", "report", "--host", "copilot", "--touched", touched)[1])
    assert {f["relativePath"]: f["state"] for f in data["files"]} == {
        ".github/instructions/disposable.instructions.md": "manual",
        ".github/instructions/typescript.instructions.md": "loaded"}
    plain = json.loads(run(capsys, project.cwd, "--json", "report", "--touched", touched)[1])
    assert {r["relativePath"]: r["status"] for r in plain["rules"]} == {
        "disposable.instructions.md": "active", "typescript.instructions.md": "active"}
