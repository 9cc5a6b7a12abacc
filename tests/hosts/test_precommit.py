"""Where teams run linters (issue 15, item 6): the pre-commit hook, run by the real
pre-commit on a temporary repository, and the composite GitHub Action, whose scripts run
here as the runner would run them.

Both install pi-rules from a copy of this working tree (committed to a temporary git
repository, as pre-commit and `uses:` see a revision). That install never reaches the
package index: pip runs with PIP_NO_INDEX=1 and takes setuptools, pluggy, … from the
wheelhouse `.ci/install-wheelhouse` builds in the install step (issue 32: no test needs
the network beyond 127.0.0.1). A missing wheelhouse or wheel fails the test, naming the fix.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

import pytest
import yaml

from session_guard import WHEELHOUSE
from suite_helpers import git

from rules_core.rule_tests.pytest_plugin import rule_text

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rules_core", "rules_plugins", "rules_importers", "rules_hosts")
SOURCE_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "action.yml")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}
# What pip says when a requirement is not in the wheelhouse.
NOT_IN_WHEELHOUSE = ("No matching distribution found", "Could not find a version that satisfies")
BROKEN = "---\ndescription: d\nversion: 1\nglob: ['src/**']\n---\nBody.\n"


def _hook() -> dict[str, Any]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert isinstance(hooks, list)
    return next(hook for hook in hooks if hook["id"] == "pi-rules-check")


def _action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


# -- .pre-commit-hooks.yaml ------------------------------------------------------------------


def test_the_hook_runs_check_once_on_the_whole_project():
    hook = _hook()
    assert hook["id"] == "pi-rules-check" and hook["language"] == "python"
    assert hook["entry"] == "pi-rules check" and hook["pass_filenames"] is False


RULE_FILES = [
    ".pi/rules/style.md", "packages/a/.pi/rules/x.md", ".pi/rules.toml", ".pi/rules.test.yaml",
    ".github/copilot-instructions.md", ".github/instructions/ts.instructions.md", ".claude/rules/a.md",
    ".claude/CLAUDE.md", ".cursor/rules/a.mdc", "web/.cursor/rules/a.mdc", ".cursorrules",
    ".windsurf/rules/a.md", ".windsurfrules", ".devin/rules/a.md", ".clinerules", ".clinerules/a.md",
    ".cline/rules/a.md", ".agent/rules/a.md", ".agents/rules/a.md", ".omp/RULES.md", ".xcsh/rules/a.md",
    ".kiro/steering/a.md", ".continue/rules/a.md", ".roo/rules/a.md", ".roo/rules-code/a.md", ".roorules",
    ".amazonq/rules/a.md", ".junie/guidelines.md", ".augment/rules/a.md", ".rules", ".trae/rules/a.md",
    "AGENTS.md", "pkg/AGENTS.md", "AGENTS.override.md", "AGENT.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md",
]
OTHER_FILES = ["src/app.py", "README.md", "docs/rules.md", ".github/workflows/ci.yml", "MY_AGENTS.md", "x.rules.md"]


@pytest.mark.parametrize("path", RULE_FILES)
def test_the_hook_runs_when_a_rule_file_changes(path):
    # pre-commit matches `files` with re.search on the '/'-separated path.
    assert re.search(_hook()["files"], path)


@pytest.mark.parametrize("path", OTHER_FILES)
def test_the_hook_stays_quiet_for_other_files(path):
    assert not re.search(_hook()["files"], path)


# -- the real pre-commit -----------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    git(cwd, *args)


@pytest.fixture(scope="module")
def source_repo(tmp_path_factory) -> Path:
    """This working tree's package, committed to a fresh repository (uncommitted work
    included, which `pre-commit try-repo` on the tree itself would leave out)."""
    repo = tmp_path_factory.mktemp("pi-rules-source")
    for name in SOURCE_FILES:
        shutil.copy2(ROOT / name, repo / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, repo / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pi-rules")
    return repo


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _offline_pip() -> dict[str, str]:
    """pip (and so pre-commit's and the action's installs) with the wheelhouse as its only
    source: no index, and no pip configuration of the machine's (which may name one)."""
    if not any(WHEELHOUSE.glob("*.whl")):
        pytest.fail(f"no wheelhouse at {WHEELHOUSE}: run `bash .ci/install-wheelhouse` (.ci/run's install step)")
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE), "PIP_CONFIG_FILE": os.devnull}


def _fail_install(output: str, what: str) -> None:
    stale = next((m for m in NOT_IN_WHEELHOUSE if m in output), None)
    fix = f" (a requirement is not in {WHEELHOUSE}: run `bash .ci/install-wheelhouse`)" if stale else ""
    pytest.fail(f"{what} failed{fix}:\n{output}")


def _pre_commit(home: Path, cwd: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, **GIT_ENV, **_offline_pip(), "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PI_RULES_DISABLE_PLUGINS", None)
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
    )
    output = result.stdout + result.stderr
    if result.returncode not in (0, 1) or "An unexpected error has occurred" in output:
        log = home / "pre-commit.log"
        output += log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        _fail_install(output, f"pre-commit ({result.returncode})")
    return result.returncode, output


def _target(tmp_path: Path, files: Mapping[str, str]) -> Path:
    repo = tmp_path / "target"
    repo.mkdir()
    _git(repo, "init", "-q")
    for relative, text in files.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    return repo


def test_pre_commit_fails_on_a_broken_rule_and_passes_once_it_is_fixed(source_repo, pre_commit_home, tmp_path):
    repo = _target(tmp_path, {".pi/rules/bad.md": BROKEN, "src/app.py": ""})
    code, output = _pre_commit(pre_commit_home, repo, "try-repo", str(source_repo), "pi-rules-check", "--all-files")
    assert code == 1 and "pi-rules check" in output and "Failed" in output, output
    assert "unknown-key .pi/rules/bad.md: unknown key 'glob' — did you mean 'globs'?" in output
    (repo / ".pi/rules/bad.md").write_text(rule_text("Body.", globs=["src/**"]), encoding="utf-8")
    _git(repo, "add", "-A")
    code, output = _pre_commit(pre_commit_home, repo, "try-repo", str(source_repo), "pi-rules-check", "--all-files")
    assert code == 0 and "Passed" in output, output


def test_pre_commit_skips_the_hook_when_no_rule_file_is_staged(source_repo, pre_commit_home, tmp_path):
    repo = _target(tmp_path, {".pi/rules/bad.md": BROKEN})
    _git(repo, "commit", "-q", "-m", "a broken rule, already committed")
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("x = 1\n", encoding="utf-8")
    _git(repo, "add", "src/app.py")
    code, output = _pre_commit(pre_commit_home, repo, "try-repo", str(source_repo), "pi-rules-check")
    assert code == 0 and "Skipped" in output, output


# -- action.yml ---------------------------------------------------------------------------------


def _steps() -> list[dict[str, Any]]:
    action = _action()
    assert action["runs"]["using"] == "composite"
    return action["runs"]["steps"]


def _check_step() -> dict[str, Any]:
    found = [s for s in _steps() if "pi-rules check --format github" in s.get("run", "")]
    assert len(found) == 1
    return found[0]


def test_the_action_declares_its_inputs():
    inputs = _action()["inputs"]
    assert set(inputs) >= {"working-directory", "version", "args"}
    assert inputs["working-directory"]["default"] == "."
    assert all(not spec.get("required", False) for spec in inputs.values())


def test_every_action_step_names_its_shell_and_takes_inputs_only_through_the_environment():
    for step in _steps():
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], "an input inside a script can inject shell code"


def test_the_action_passes_inputs_in_variables_the_env_lint_does_not_flag():
    # `check` warns about unknown PI_RULES_* variables; the action's own must not be one.
    for step in _steps():
        assert not any(re.match(r"pi_?rules?_", name, re.IGNORECASE) for name in step.get("env", {}))


def test_the_action_runs_check_with_the_github_format_in_the_working_directory():
    step = _check_step()
    assert step["working-directory"] == "${{ inputs.working-directory }}"
    assert step["env"] == {"RULES_CHECK_ARGS": "${{ inputs.args }}"}


def test_the_install_step_takes_the_action_copy_or_the_version_asked_for():
    install = _steps()[0]["run"]
    assert '"$GITHUB_ACTION_PATH"' in install and "pi-rules==$RULES_INSTALL_VERSION" in install
    assert '>> "$GITHUB_PATH"' in install


def _resolve(env: Mapping[str, str], inputs: Mapping[str, str]) -> dict[str, str]:
    """The step's ``env`` with ``${{ inputs.NAME }}`` replaced as the runner would."""
    defaults = {name: str(spec.get("default", "")) for name, spec in _action()["inputs"].items()}
    values = {**defaults, **inputs}
    return {k: re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], v) for k, v in env.items()}


def _run_step(step: dict[str, Any], workspace: Path, inputs: Mapping[str, str], extra_env: Mapping[str, str],
              tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run a step's script as GitHub runs `shell: bash`: `bash --noprofile --norc -eo
    pipefail FILE`, in the step's working directory below the workspace."""
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    directory = _resolve({"d": step.get("working-directory", ".")}, inputs)["d"]
    env = {**os.environ, **_resolve(step.get("env", {}), inputs), **extra_env}
    for name in ("PI_RULES_DISABLE_PLUGINS", "PI_RULES_IMPORT", "PI_RULES_MAX_TOKENS"):
        env.pop(name, None)
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=workspace / directory, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "workspace"
    for relative, text in {".pi/rules/bad.md": BROKEN, "packages/app/.pi/rules/ok.md": rule_text(globs=["src/**"]),
                           "packages/app/src/a.py": ""}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def _home(tmp_path: Path) -> str:
    """A home of the test's own: not /nonexistent, which pi-rules running as root would
    create (its entry-point cache goes under ~/.cache)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return str(home)


def _installed_here(tmp_path: Path) -> dict[str, str]:
    script = shutil.which("pi-rules")
    if script is None:
        pytest.skip("pi-rules is not installed in this environment (pip install -e .)")
    return {"PATH": f"{Path(script).parent}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": _home(tmp_path)}


def test_the_check_step_turns_each_error_into_an_annotation(workspace, tmp_path):
    result = _run_step(_check_step(), workspace, {}, _installed_here(tmp_path), tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ")) for line in lines), (lines, result.stderr)
    assert any(line.startswith("::error file=.pi/rules/bad.md,") and "pi-rules unknown-key" in line
               for line in lines)


def test_the_check_step_honours_the_working_directory_and_args(workspace, tmp_path):
    step = _check_step()
    result = _run_step(step, workspace, {"working-directory": "packages/app"}, _installed_here(tmp_path), tmp_path)
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    result = _run_step(step, workspace, {"args": "--untrusted"}, _installed_here(tmp_path), tmp_path)
    assert (result.returncode, result.stdout) == (0, ""), result.stderr


def test_the_install_step_then_the_check_step_as_the_runner_runs_them(source_repo, workspace, tmp_path):
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    github_path = tmp_path / "github-path"
    github_path.write_text("")
    install = _run_step(_steps()[0], workspace, {"python": sys.executable}, {
        "RUNNER_TEMP": str(runner_temp), "GITHUB_ACTION_PATH": str(source_repo), "GITHUB_PATH": str(github_path),
        **_offline_pip(),
    }, tmp_path)
    if install.returncode != 0:
        _fail_install(install.stdout + install.stderr, "the install step")
    bin_dir = github_path.read_text().strip()
    assert Path(bin_dir, "pi-rules").exists()
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": _home(tmp_path)}
    result = _run_step(_check_step(), workspace, {}, env, tmp_path)
    assert result.returncode == 1 and result.stdout.startswith("::error file=.pi/rules/bad.md,"), result
