"""The peers' own unit tests as pi-rules' tests (issue 33; docs/importers.md, "The peers'
tests as the oracle").

Each case in tests/fixtures/peer_cases/*.yaml rebuilds one unit test of another tool's
loader as a real tree, runs ``pi-rules report --json`` (and ``check --json`` when the case
expects a lint warning) on it, and asserts what the peer's test asserts. A case naming a
``difference`` asserts pi-rules' own, documented behaviour instead, and the difference
must be a heading in docs/importers.md, "Where pi-rules deliberately differs".

Case keys: ``source`` (repo, file, test, commit), ``files`` (project-relative path → text;
``~/`` puts it in the home folder; ``bytes: true`` writes each text as Latin-1 bytes, for
damaged files), ``dirs`` (empty folders), ``git`` (default true), ``cwd`` (a sub folder),
``touched``, ``expect`` and ``difference``. ``expect`` keys: ``active``, ``on_demand``,
``inactive`` (rule file paths), ``absent`` (paths that load no rule), ``rules`` (the
number of rules), ``section_contains``, ``section_lacks``, ``section_order`` (texts in
this order), ``warnings``/``errors`` (codes/kinds in report's JSON), ``check_warnings``.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from importer_helpers import cli  # noqa: F401 - pytest fixture

CASES_DIR = Path(__file__).parent.parent / "fixtures" / "peer_cases"
DOCS = Path(__file__).parent.parent.parent / "docs" / "importers.md"
DIFFERS = "## Where pi-rules deliberately differs"
SOURCE_KEYS = {"repo", "file", "test", "commit"}
CASE_KEYS = {"name", "source", "files", "bytes", "dirs", "git", "cwd", "touched", "expect", "difference"}
EXPECT_KEYS = {"active", "on_demand", "inactive", "absent", "rules", "section_contains", "section_lacks",
               "section_order", "warnings", "errors", "check_warnings"}


def _load() -> list[tuple[str, dict]]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")):
            cases.append((f"{path.stem}:{case['name']}", case))
    return cases


CASES = _load()


def _differences() -> set[str]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split(DIFFERS, 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^### (.+)$", section, flags=re.M))


def test_every_case_names_its_source_and_every_loader_is_here():
    assert len(CASES) >= 40
    repos = set()
    for name, case in CASES:
        assert set(case) <= CASE_KEYS, name
        assert set(case.get("expect", {})) <= EXPECT_KEYS and case.get("expect"), name
        assert set(case["source"]) == SOURCE_KEYS, name
        assert re.fullmatch(r"[0-9a-f]{40}", case["source"]["commit"]), name
        repos.add(case["source"]["repo"])
    assert {"continuedev/continue", "google-gemini/gemini-cli", "openai/codex", "microsoft/vscode",
            "dyoshikawa/rulesync"} <= repos
    assert len({name for name, _ in CASES}) == len(CASES)


def test_every_difference_is_documented_and_every_documented_one_is_asserted():
    named = {case["difference"] for _, case in CASES if "difference" in case}
    assert named and named <= _differences()
    assert _differences() <= named | {"Dot files in Continue's globs", "VS Code's applyTo matcher"}


@pytest.mark.parametrize("name, case", CASES, ids=[name for name, _ in CASES])
def test_peer_case(rule_project, cli, name, case):
    root, home = rule_project.cwd, rule_project.home
    if case.get("git", True):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    for folder in case.get("dirs", ()):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for relative, text in (case.get("files") or {}).items():
        path = home / relative[2:] if relative.startswith("~/") else root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("latin-1" if case.get("bytes") else "utf-8"))
    project = SimpleNamespace(cwd=root / case.get("cwd", "."), home=home)
    project.cwd.mkdir(parents=True, exist_ok=True)
    touched = [arg for path in case.get("touched", ()) for arg in ("--touched", path)]
    _, out = cli(project, "report", "--json", *touched)
    report = json.loads(out)
    expect = case["expect"]
    status = {_relative(rule["path"], root, home): rule["status"] for rule in report["rules"]}
    for key, wanted in (("active", "active"), ("on_demand", "on-demand"), ("inactive", "inactive")):
        for path in expect.get(key, ()):
            assert status.get(path) == wanted, (path, status)
    for path in expect.get("absent", ()):
        assert path not in status, (path, status)
    if "rules" in expect:
        assert len(status) == expect["rules"], status
    section = report["section"]
    for text in expect.get("section_contains", ()):
        assert text in section, section
    for text in expect.get("section_lacks", ()):
        assert text not in section, section
    order = [section.find(text) for text in expect.get("section_order", ())]
    assert all(at >= 0 for at in order) and order == sorted(order), section
    if "warnings" in expect:
        assert sorted(w["code"] for w in report["warnings"]) == sorted(expect["warnings"])
    if "errors" in expect:
        assert sorted(e["kind"] for e in report["errors"]) == sorted(expect["errors"])
    if "check_warnings" in expect:
        _, out = cli(project, "check", "--json")
        codes = [w["code"] for w in json.loads(out)["warnings"]]
        assert sorted(codes) == sorted(expect["check_warnings"])


def _relative(path: str, root: Path, home: Path) -> str:
    if path.startswith(str(home) + "/"):
        return "~/" + path[len(str(home)) + 1:]
    return str(Path(path).relative_to(root)) if path.startswith(str(root) + "/") else path
