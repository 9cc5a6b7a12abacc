"""``CLAUDE.md`` holding just ``@AGENTS.md`` (and ``GEMINI.md`` holding ``@./AGENTS.md``) is
the most common memory file there is: the text must reach the model once, whichever host
asks."""

from __future__ import annotations

import subprocess

import pytest

from rules_core.model import Facts

AGENTS = "# AGENTS.md\n\nRun `pnpm test` before every commit.\n"
CLAUDE = "# CLAUDE.md\n\n@AGENTS.md\n"
GEMINI = "# GEMINI.md\n\n@./AGENTS.md\n"
POINTER = "(AGENTS.md reaches you as a rule of its own)"


@pytest.fixture
def repo(rule_project):
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    rule_project.write({"AGENTS.md": AGENTS, "CLAUDE.md": CLAUDE, "GEMINI.md": GEMINI, "src/app.ts": ""})
    return rule_project


def _evaluate(project, **facts):
    return project.engine().evaluate(Facts(cwd=str(project.cwd), max_tokens=20000, **facts))


def _bodies(evaluation) -> dict[str, str]:
    return {o.rule.id: o.rule.body for o in evaluation.outcomes}


def test_the_agents_text_reaches_the_model_once(repo):
    evaluation = _evaluate(repo)
    bodies = _bodies(evaluation)
    assert bodies["project/CLAUDE"] == f"# CLAUDE.md\n\n{POINTER}\n"
    assert bodies["project/GEMINI"] == f"# GEMINI.md\n\n{POINTER}\n"
    assert evaluation.section.count("Run `pnpm test` before every commit.") == 1


def test_without_the_agents_md_importer_the_import_is_copied(repo):
    repo.env["PI_RULES_IMPORT"] = "claude-md,gemini-md"
    bodies = _bodies(_evaluate(repo))
    assert bodies["project/CLAUDE"] == "# CLAUDE.md\n\n# AGENTS.md\n\nRun `pnpm test` before every commit.\n"


def test_an_agents_md_created_later_turns_the_copy_into_a_pointer(rule_project):
    subprocess.run(["git", "init", "-q", str(rule_project.cwd)], check=True)
    rule_project.write({"CLAUDE.md": CLAUDE})
    engine = rule_project.engine()
    facts = Facts(cwd=str(rule_project.cwd))
    first = {r.id: r for r in engine.discover(str(rule_project.cwd)).rules}
    assert list(first) == ["project/CLAUDE"]
    rule_project.write({"AGENTS.md": AGENTS})
    engine.invalidate_scans()
    bodies = _bodies(engine.evaluate(facts))
    assert bodies["project/CLAUDE"] == f"# CLAUDE.md\n\n{POINTER}\n"


def test_claude_code_reads_an_imported_agents_md_through_claude_md(repo):
    outcomes = {o.rule.id: o for o in _evaluate(repo, host="claude-code").outcomes}
    assert outcomes["project/AGENTS"].status == "inactive"
    assert outcomes["project/AGENTS"].reasons == (
        "Claude Code reads this file through the @import in CLAUDE.md; pi-rules leaves it out so it is not "
        "sent twice",
    )
    assert outcomes["project/CLAUDE"].status == "inactive"
    assert outcomes["project/GEMINI"].status == "active"  # Claude Code does not read GEMINI.md


def test_claude_code_still_gets_an_agents_md_that_claude_md_shadows_without_importing(repo):
    repo.write({"CLAUDE.md": "# CLAUDE.md\n\nOur own instructions.\n"})
    outcomes = {o.rule.id: o for o in _evaluate(repo, host="claude-code").outcomes}
    assert outcomes["project/AGENTS"].status == "active"


def test_an_import_inside_code_does_not_count_as_claude_reading_it(repo):
    repo.write({"CLAUDE.md": "# CLAUDE.md\n\n```\n@AGENTS.md\n```\n"})
    outcomes = {o.rule.id: o for o in _evaluate(repo, host="claude-code").outcomes}
    assert outcomes["project/AGENTS"].status == "active"


def test_pi_reads_agents_md_and_gets_claude_md_with_the_pointer_only(repo):
    evaluation = _evaluate(repo, host="pi")
    statuses = {o.rule.id: o.status for o in evaluation.outcomes}
    assert statuses["project/AGENTS"] == "inactive" and statuses["project/CLAUDE"] == "active"
    assert "Run `pnpm test`" not in evaluation.section
