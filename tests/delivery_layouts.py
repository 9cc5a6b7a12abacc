"""The delivery audit's layouts and session script (tests/delivery_audit.py): a folder of
tests/fixtures/delivery/ as a real git repository, the scripted session's steps, and
``pi-rules report`` for the facts of one step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LAYOUTS = Path(__file__).resolve().parent / "fixtures" / "delivery"
HOSTS = ("claude-code", "pi", "none")
PROMPTS = ("Carry out the scripted steps.", "Continue with the next step.")


@dataclass(frozen=True)
class Step:
    kind: str  # start, prompt, read, write, compact
    arg: str = ""  # the prompt, or the touched path relative to the project

    def __str__(self) -> str:
        return f"{self.kind} {self.arg}".strip()


@dataclass
class Project:
    name: str
    root: Path
    home: Path
    touched_paths: list[str]
    bodies: dict[str, str] = field(default_factory=dict)  # rule path -> body text

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rules_hosts", *args], cwd=self.root, env=env(self.home),
                              capture_output=True, text=True, timeout=120)


def env(home: Path) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_") or k == "PI_RULES_HOOK_SERVER"}
    values.update(HOME=str(home), XDG_STATE_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    return values


def layouts() -> list[str]:
    return sorted(p.name for p in LAYOUTS.iterdir() if (p / "SOURCE").is_file())


def make_project(name: str, tmp: Path) -> Project:
    """The layout as a real git repository with one commit (links stay links)."""
    root, home = tmp / name, tmp / "home"
    shutil.copytree(LAYOUTS / name, root, symlinks=True)
    source = (root / "SOURCE").read_text()
    (root / "SOURCE").unlink()
    home.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "layout"]):
        subprocess.run(["git", *args], cwd=root, env=env(home), check=True, capture_output=True)
    touched = [line.strip() for line in source.split("Empty placeholders", 1)[1].splitlines()[1:] if line.strip()]
    project = Project(name, root, home, touched)
    if name not in _BODIES:
        bodies = {}
        for rule in project_rules(project):
            done = project.cli("read", rule["relativePath"], "--json")
            data = json.loads(done.stdout)
            assert "content" in data, f"{name}: pi-rules read {rule['relativePath']}: {done.stdout}{done.stderr}"
            bodies[os.path.relpath(rule["path"], root)] = data["content"]
        _BODIES[name] = bodies
    project.bodies = {str(root / rel): body for rel, body in _BODIES[name].items()}
    return project


# Each layout's rule bodies, read once per test run (they do not depend on the host).
_BODIES: dict[str, dict[str, str]] = {}


def project_rules(project: Project) -> list[dict[str, Any]]:
    done = project.cli("list", "--json")
    return list(json.loads(done.stdout)["rules"])


def script(project: Project) -> list[Step]:
    """Start, a prompt, read/write/read in three packages, a prompt, an edit, a
    compaction, and the first two packages again."""
    one, two, three = project.touched_paths[:3]
    return [Step("start"), Step("prompt", PROMPTS[0]), Step("read", one), Step("write", two), Step("read", three),
            Step("prompt", PROMPTS[1]), Step("write", one), Step("compact"), Step("read", two), Step("write", three)]


def report(project: Project, host: str, touched: list[str], prompt: str) -> dict[str, Any]:
    args = ["report", "--json", "--prompt", prompt, *[a for p in touched for a in ("--touched", p)]]
    if host != "none":
        args += ["--host", host]
    done = project.cli(*args)
    assert done.returncode == 0, f"{project.name}: pi-rules {' '.join(args)}: {done.stderr}"
    return dict(json.loads(done.stdout))

