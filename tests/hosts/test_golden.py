"""Golden files for every rendered form. Refresh on purpose with:

    python -m pytest --update-goldens tests/hosts/test_golden.py   (or PI_RULES_UPDATE_GOLDEN=1)

then review the diff of tests/golden/ like any other change.
"""

from __future__ import annotations

import pytest

from suite_helpers import run_in
from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

from golden_files import check_golden as assert_golden


@pytest.fixture
def demo(tmp_path, monkeypatch):
    project, home = tmp_path / "project", tmp_path / "home"
    make_rules(
        project,
        {
            ".pi/rules/typescript.md": rule_text(
                "Use `const` by default.\n\nExported functions declare their return types.",
                description="TypeScript style",
                globs=["src/**/*.ts", "!src/**/*.test.ts"], match="touched", keywords=["typescript"],
            ),
            ".pi/rules/testing.md": rule_text(
                "One test file per module.", description="Tests", globs=["**/*.test.ts"], enforcement="recommend"
            ),
            ".pi/rules/testing-copy.md": rule_text(
                "One test file per module.", description="Tests (copy)", globs=["**/*.test.ts"]
            ),
            ".pi/rules/security.md": rule_text(
                "Never log secrets.", description="Secrets", alwaysApply=True, enforcement="enforce", priority=10
            ),
            ".pi/rules/api/design.md": rule_text(
                "Handlers return data or error.", description="REST conventions", globs=["src/api/**"], load="on-demand"
            ),
            ".pi/rules/release.md": rule_text("Only fixes.", description="Release discipline", branch="release/*"),
            ".pi/rules/editing.md": rule_text(
                "Keep diffs minimal.", description="Edits", tools=["edit", "write"], model="*sonnet*"
            ),
            ".pi/rules/big.md": rule_text("x" * 400, description="A long rule", globs=["src/**"], priority=-1),
            ".pi/rules/quiet.md": rule_text("Shh.", description="Muted in the report", globs=["**"]),
            ".pi/rules/broken.md": "---\ndescription: Broken\nversion: 1\nglob: [src/**]\n---\nbody\n",
            "src/app.ts": "x",
            "src/app.test.ts": "x",
            "src/api/users.ts": "x",
        },
    )
    make_rules(home / ".pi/agent/rules", {"typescript.md": rule_text("Global TS rule.", description="Global TS", globs=["**/*.ts"], match="touched")})
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "60")
    monkeypatch.delenv("PI_RULES_DISABLE_PLUGINS", raising=False)
    return project, tmp_path


FACTS = [
    "--touched", "src/app.ts", "--touched", "src/api/users.ts", "--model", "claude-sonnet-4",
    "--tool", "edit", "--no-branch", "--mute", "quiet",
]


MUTE_ALL_PINNED = [a for rule in ("security", "big", "quiet", "testing", "testing-copy") for a in ("--mute", rule)]


def run(capsys, demo, *args: str) -> tuple[int, str]:
    project, tmp = demo
    code, out, _ = run_in(capsys, project, *args)
    return code, out.replace(str(tmp), "<tmp>")


@pytest.mark.parametrize(
    "name, args, expected_code",
    [
        ("section.md", ["render", *FACTS], 0),
        ("section-index-only.md", ["render", "--touched", "src/api/x.js", "--no-branch", *MUTE_ALL_PINNED], 0),
        ("report.txt", ["report", *FACTS], 0),
        ("report.json", ["--json", "report", *FACTS], 0),
        ("explain.txt", ["explain", "src/app.ts", "--mute", "quiet"], 0),
        ("explain.json", ["--json", "explain", "src/app.ts"], 0),
        ("show.txt", ["show", "typescript"], 0),
        ("show.json", ["--json", "show", "typescript"], 0),
        ("check.txt", ["check"], 1),
        ("check.json", ["--json", "check"], 1),
        ("list.txt", ["list"], 0),
        ("list.json", ["--json", "list"], 0),
        ("read.txt", ["read", "api/design.md"], 0),
    ],
)
def test_rendered_form_matches_golden(capsys, demo, name, args, expected_code):
    code, out = run(capsys, demo, *args)
    assert code == expected_code
    assert_golden(name, out)


def test_render_prints_nothing_when_no_rule_is_active(capsys, demo):
    code, out = run(capsys, demo, "--untrusted", "render", "--no-branch")
    assert (code, out) == (0, "")
