"""The session runtime (RULE-SPEC §5–§6): one test per behaviour of the spec.

Golden files ``tests/golden/rules-*.txt`` hold the ``/rules`` answers; refresh on purpose
with ``PI_RULES_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import copy
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core import READ_RULE_DESCRIPTION, RuleFile, hookimpl
from rules_hosts.session.runtime import (
    TOUCHED_CUSTOM_TYPE,
    USAGE,
    Capture,
    Session,
    SessionState,
    ToolResultEffect,
    Turn,
    touched_entry,
    touched_from_entries,
)
from rules_core.rule_tests.pytest_plugin import rule_text
from golden_files import check_golden as assert_golden

RULES = {
    ".pi/rules/security.md": rule_text("Never log secrets.", description="Secrets", alwaysApply=True,
                                       enforcement="enforce"),
    ".pi/rules/typescript.md": rule_text("Use `const`.", description="TypeScript style", globs=["src/**/*.ts"],
                                         match="touched"),
    ".pi/rules/api/design.md": rule_text("Handlers return data.", description="REST conventions",
                                         globs=["src/api/**"], match="touched", load="on-demand"),
    ".pi/rules/big.md": rule_text("x" * 400, description="A long rule", globs=["docs/**"], match="touched"),
    ".pi/rules/python.md": rule_text("Type hints.", description="Python", globs=["**/*.py"], match="touched"),
    ".pi/rules/editing.md": rule_text("Small diffs.", description="Edits", tools=["edit"], model="*sonnet*"),
}
TEXT = [{"type": "text", "text": "file contents"}]


@pytest.fixture
def project(rule_project):
    rule_project.write(RULES)
    return rule_project


def make(project, engine=None, host="pi", **env) -> Session:
    engine = engine or project.engine()
    return Session(engine, str(project.cwd), trusted=True, host=host, env={"HOME": str(project.home), **env})


def turn(session: Session, prompt="", model=None, tools=(), branch=None) -> Turn:
    return session.before_agent_start(prompt, model, list(tools), branch=branch)


def touch(session: Session, path: str, tool: str = "read") -> Capture:
    return session.tool_start(tool, {"path": path})


# -- pre-execution path capture (§5) ---------------------------------------------------


@pytest.mark.parametrize("tool", ["read", "edit", "write"])
def test_read_edit_write_capture_their_path(project, tool):
    session = make(project)
    assert session.tool_start(tool, {"path": "src/a.ts"}).paths == ("src/a.ts",)
    assert session.touched == ("src/a.ts",)


@pytest.mark.parametrize("tool", ["grep", "find"])
def test_grep_and_find_capture_their_optional_path(project, tool):
    session = make(project)
    assert session.tool_start(tool, {"pattern": "x"}).paths == ()
    assert session.tool_start(tool, {"pattern": "x", "path": "src"}).paths == ("src",)


def test_bash_captures_the_paths_its_command_names(project):
    session = make(project)
    # The shell-paths plugin reads ``command``; a ``path`` argument Pi's bash does not have is ignored.
    assert session.tool_start("bash", {"command": "cat src/a.ts", "path": "src/b.ts"}).paths == ("src/a.ts",)
    assert session.tool_start("bash", {"command": "cat /etc/passwd ../x"}) == Capture()
    assert session.touched == ("src/a.ts",)


def test_unknown_tool_captures_nothing(project):
    assert make(project).tool_start("my_tool", {"path": "src/a.ts"}) == Capture()


@pytest.mark.parametrize("args", [None, [], "src/a.ts", 3, {"path": 3}, {"path": ""}, {"path": None},
                                  {"path": ["src/a.ts"]}, {"file_path": "src/a.ts"}, {"path": "a\0b"}])
def test_malformed_args_capture_nothing(project, args):
    session = make(project)
    assert session.tool_start("read", args) == Capture()
    assert session.touched == ()


@pytest.mark.parametrize("tool", [None, 3, ["read"], {"read": 1}])
def test_non_string_tool_names_capture_nothing(project, tool):
    assert make(project).tool_start(tool, {"path": "src/a.ts"}) == Capture()


def test_paths_are_normalised_and_kept_in_first_occurrence_order(project):
    session = make(project)
    touch(session, "./src/b.ts")
    touch(session, str(project.cwd / "src" / "a.ts"))
    touch(session, "/elsewhere/x.ts")
    touch(session, "src//b.ts")
    assert session.touched == ("src/b.ts", "src/a.ts", "/elsewhere/x.ts")


def test_new_path_returns_the_entry_to_persist(project):
    capture = touch(make(project), "src/a.ts")
    assert capture.entry == {"type": "custom", "customType": "pi-rules-md/touched", "data": {"paths": ["src/a.ts"]}}


def test_repeat_path_persists_nothing(project):
    session = make(project)
    touch(session, "src/a.ts")
    assert touch(session, "src/a.ts", "edit") == Capture(paths=(), entry=None)
    assert touch(session, "./src/a.ts") == Capture()


def test_entry_carries_only_the_new_paths_of_a_batch(project):
    class Multi:
        @hookimpl
        def pi_rules_capture_paths(self, host, tool, args):
            return args.get("paths") if host == "multi" else None

    session = make(project, project.engine(plugins=[("multi", Multi())]), host="multi")
    session.tool_start("any", {"paths": ["a", "b"]})
    capture = session.tool_start("any", {"paths": ["b", "c", "a", "c"]})
    assert capture.paths == ("c",)
    assert capture.entry == touched_entry(["c"])


def test_pi_table_answers_only_the_pi_host(project):
    session = make(project, host="claude-code")
    assert session.tool_start("read", {"path": "src/a.ts"}) == Capture()


def test_a_crashing_capture_plugin_is_contained(project):
    class Broken:
        @hookimpl
        def pi_rules_capture_paths(self, host, tool, args):
            raise RuntimeError("boom")

    session = make(project, project.engine(plugins=[("broken", Broken())]))
    assert touch(session, "src/a.ts").paths == ("src/a.ts",)  # the pi plugin still answers
    assert session.last_fault is None


def test_tool_start_never_invalidates_scans(project):
    engine = project.engine()
    calls = []
    engine.invalidate_scans = lambda: calls.append(1)  # type: ignore[method-assign]
    session = make(project, engine)
    for tool in ("write", "edit", "bash"):
        session.tool_start(tool, {"path": "x"})
    assert calls == []


def test_capture_json_is_plain_json(project):
    data = touch(make(project), "src/a.ts").to_json()
    assert json.loads(json.dumps(data)) == {"paths": ["src/a.ts"], "entry": touched_entry(["src/a.ts"])}


# -- persistence and rebuild (§5) ------------------------------------------------------


def test_touched_from_entries_reads_in_order_normalised_first_seen():
    entries = [touched_entry(["./b", "a"]), touched_entry(["a", "/p/c", "b/"])]
    assert touched_from_entries(entries, "/p") == ("b", "a", "c")


def test_touched_from_entries_skips_foreign_and_damaged_entries():
    entries = [
        {"type": "message", "content": "x"},
        {"type": "custom", "customType": "other", "data": {"paths": ["no"]}},
        {"type": "label", "customType": TOUCHED_CUSTOM_TYPE, "data": {"paths": ["no"]}},
        {"type": "custom", "customType": TOUCHED_CUSTOM_TYPE, "data": "paths"},
        {"type": "custom", "customType": TOUCHED_CUSTOM_TYPE, "data": {"paths": "a"}},
        {"type": "custom", "customType": TOUCHED_CUSTOM_TYPE, "data": {"paths": ["ok", 3, None, ""]}},
        {"customType": TOUCHED_CUSTOM_TYPE, "data": {"paths": ["bare"]}},
        None, 3, "x", [],
    ]
    assert touched_from_entries(entries, "/p") == ("ok", "bare")


@pytest.mark.parametrize("entries", [None, "x", 3, {"entries": []}])
def test_an_unreadable_branch_reads_as_none(entries):
    assert touched_from_entries(entries, "/p") is None


@pytest.mark.parametrize("reason", ["startup", "reload", "new", "resume", "fork"])
def test_session_start_rebuilds_touched_from_the_branch_for_every_reason(project, reason):
    session = make(project)
    touch(session, "old.ts")
    state = session.session_start(reason, [touched_entry(["src/a.ts"]), touched_entry(["src/b.ts"])])
    assert state == SessionState(True, ("src/a.ts", "src/b.ts"), (), ())
    assert session.touched == ("src/a.ts", "src/b.ts")


def test_tree_navigation_drops_paths_only_the_abandoned_branch_recorded(project):
    session = make(project)
    touch(session, "shared.ts")
    touch(session, "abandoned.ts")
    session.session_tree([touched_entry(["shared.ts"])])
    assert session.touched == ("shared.ts",)


@pytest.mark.parametrize("entries", [None, "not a branch", 42])
def test_unreadable_branch_rebuild_is_a_noop(project, entries):
    session = make(project)
    touch(session, "kept.ts")
    assert session.session_tree(entries).rebuilt is False
    assert session.session_start("startup", entries).rebuilt is False
    assert session.touched == ("kept.ts",)


def test_rebuild_writes_nothing_and_keeps_the_injected_section(project):
    session = make(project)
    touch(session, "src/a.ts")
    assert turn(session).action == "patch"
    state = session.session_tree([touched_entry(["src/a.ts"])])
    assert isinstance(state, SessionState) and state.to_json()["touched"] == ["src/a.ts"]
    assert turn(session).action == "none"  # same hash: nothing to patch after the rebuild


@pytest.mark.parametrize("reason", ["startup", "reload"])
def test_startup_and_reload_keep_mutes(project, reason):
    session = make(project)
    session.command("mute security")
    session.session_start(reason, [])
    assert session.mutes == ("security",)


@pytest.mark.parametrize("reason", ["new", "resume", "fork"])
def test_session_switch_clears_mutes_delivered_and_touched_then_rebuilds(project, reason):
    session = make(project)
    session.command("mute security")
    touch(session, "src/a.ts")
    turn(session)
    assert session.delivered
    state = session.session_start(reason, [touched_entry(["src/b.ts"])])
    assert (state.mutes, state.delivered, state.touched) == ((), (), ("src/b.ts",))


def test_switch_with_an_unreadable_branch_starts_empty(project):
    session = make(project)
    touch(session, "src/a.ts")
    assert session.session_switch(None).touched == ()


def test_mutes_are_not_persisted(project):
    session = make(project)
    session.command("mute security")
    captured = [c.entry for c in (touch(session, "src/a.ts"),) if c.entry]
    assert all(e["customType"] == TOUCHED_CUSTOM_TYPE and set(e["data"]) == {"paths"} for e in captured)
    resumed = make(project)
    resumed.session_start("resume", captured)
    assert resumed.mutes == ()


def test_resume_restores_what_a_rule_needs(project):
    first = make(project)
    entries = [c.entry for c in (touch(first, "src/a.ts"), touch(first, "src/a.ts")) if c.entry]
    resumed = make(project)
    resumed.session_start("resume", entries)
    assert "## typescript" in turn(resumed).section  # type: ignore[operator]


# -- exists-scan invalidation (§5) -----------------------------------------------------


def _counting(project):
    engine = project.engine()
    calls = []
    original = engine.invalidate_scans

    def spy():
        calls.append(1)
        original()

    engine.invalidate_scans = spy  # type: ignore[method-assign]
    return engine, calls


@pytest.mark.parametrize("tool", ["write", "edit", "bash"])
def test_write_edit_bash_results_invalidate_the_exists_scans(project, tool):
    engine, calls = _counting(project)
    effect = make(project, engine).tool_result(tool, TEXT, False)
    assert calls == [1] and effect.invalidated


@pytest.mark.parametrize("tool", ["read", "grep", "find", "ls", "custom", None, 3])
def test_other_results_keep_the_exists_scans(project, tool):
    engine, calls = _counting(project)
    assert make(project, engine).tool_result(tool, TEXT, False).invalidated is False
    assert calls == []


def test_errored_write_still_invalidates(project):
    # A failed bash may still have created files; a rescan only costs time.
    engine, calls = _counting(project)
    make(project, engine).tool_result("bash", TEXT, True)
    assert calls == [1]


def test_a_file_created_by_write_is_seen_by_exists_after_the_result(project):
    project.write({".pi/rules/cfg.md": rule_text("Config rule.", description="Config", globs=["cfg/*.toml"],
                                                  match="exists")})
    session = make(project)
    assert "## cfg" not in (turn(session).section or "")
    project.write({"cfg/a.toml": "x"})
    assert "## cfg" not in (turn(session).section or "")  # cached scan: nothing announced the file
    session.tool_result("write", TEXT, False)
    assert "## cfg" in (turn(session).section or "")


# -- mid-run attachment (§6) -----------------------------------------------------------


def _started(project, **env) -> Session:
    session = make(project, **env)
    turn(session)  # the section now holds security (always-apply)
    return session


def _block(effect: ToolResultEffect) -> str:
    assert effect.content is not None
    return effect.content[-1]["text"]


def test_attachment_appends_one_text_part_to_a_new_list(project):
    session = _started(project)
    touch(session, "src/a.ts")
    effect = session.tool_result("read", TEXT, False)
    assert effect.content is not None and effect.content[:-1] == TEXT and len(effect.content) == 2
    assert effect.content[-1]["type"] == "text"
    assert _block(effect).startswith("\n\n---\n\n## Rules newly activated by this tool result\n\n## typescript")
    assert effect.attached == ("typescript",)


def test_attachment_never_mutates_input_parts(project):
    session = _started(project)
    touch(session, "src/a.ts")
    parts = [{"type": "text", "text": "file"}, {"type": "image", "data": "..."}]
    before = copy.deepcopy(parts)
    effect = session.tool_result("edit", parts, False)
    assert parts == before and effect.content is not parts and effect.content[:2] == before  # type: ignore[index]


def test_attached_entry_has_the_section_entry_bytes(project):
    session = _started(project)
    touch(session, "src/a.ts")
    block = _block(session.tool_result("read", TEXT, False))
    entry = block.split("## Rules newly activated by this tool result\n\n", 1)[1].rstrip("\n")
    assert entry in turn(session).section  # type: ignore[operator]


@pytest.mark.parametrize("tool", ["grep", "find", "ls", "custom"])
def test_only_read_edit_write_bash_results_attach(project, tool):
    session = _started(project)
    touch(session, "src/a.ts")
    effect = session.tool_result(tool, TEXT, False)
    assert effect.content is None and effect.attached == ()
    assert "typescript" not in session.delivered


def test_bash_result_attaches_what_its_command_touched(project):
    session = _started(project)
    session.tool_start("bash", {"command": "cat > src/a.ts <<EOF\nlet x = 1\nEOF"})
    effect = session.tool_result("bash", TEXT, False)
    assert effect.attached == ("typescript",) and "typescript" in session.delivered


def test_errored_result_attaches_nothing(project):
    session = _started(project)
    touch(session, "src/a.ts")
    assert session.tool_result("read", TEXT, True) == ToolResultEffect()
    assert "typescript" not in session.delivered


@pytest.mark.parametrize("value", ["off", "OFF", "  Off\n"])
def test_pi_rules_attach_off_disables_attachment_but_not_invalidation(project, value):
    engine, calls = _counting(project)
    session = make(project, engine, PI_RULES_ATTACH=value)
    turn(session)
    touch(session, "src/a.ts", "write")
    effect = session.tool_result("write", TEXT, False)
    assert effect.content is None and calls == [1]


@pytest.mark.parametrize("value", ["on", "", "0", "disabled"])
def test_unrecognised_attach_values_keep_it_on(project, value):
    session = _started(project, PI_RULES_ATTACH=value)
    touch(session, "src/a.ts")
    assert session.tool_result("read", TEXT, False).attached == ("typescript",)


def test_rule_in_the_current_section_is_never_attached(project):
    session = _started(project)
    touch(session, "src/x.ts")
    assert session.tool_result("read", TEXT, False).attached == ("typescript",)
    assert session.tool_result("read", TEXT, False).content is None
    assert "security" not in session.tool_result("read", TEXT, False).attached


def test_a_rule_is_attached_once(project):
    session = _started(project)
    touch(session, "src/a.ts")
    session.tool_result("read", TEXT, False)
    touch(session, "src/b.ts")
    assert session.tool_result("read", TEXT, False) == ToolResultEffect()


def test_compaction_clears_delivered_but_not_mutes(project):
    session = _started(project)
    session.command("mute python")
    touch(session, "src/a.ts")
    session.tool_result("read", TEXT, False)
    state = session.compact()
    assert state.delivered == () and state.mutes == ("python",)
    # The transcript that carried the attachment is gone: it may be delivered again.
    assert session.tool_result("read", TEXT, False).attached == ("typescript",)


def test_compaction_still_spares_rules_the_injected_section_carries(project):
    session = _started(project)
    session.compact()
    touch(session, "src/a.ts")
    assert "security" not in session.tool_result("read", TEXT, False).attached


def test_session_switch_clears_the_delivered_set(project):
    session = _started(project)
    touch(session, "src/a.ts")
    session.tool_result("read", TEXT, False)
    session.session_switch([touched_entry(["src/a.ts"])])
    assert session.tool_result("read", TEXT, False).attached == ("typescript",)


def test_on_demand_rule_attaches_its_reference_line_only(project):
    session = _started(project)
    touch(session, "src/api/users.js")
    block = _block(session.tool_result("read", TEXT, False))
    assert "- api/design.md — REST conventions (fetch with the read_rule tool)" in block
    assert "Handlers return data." not in block


def test_degraded_rule_still_counts_delivered(project):
    session = _started(project, PI_RULES_MAX_TOKENS="150")  # big fits selection, not the room left
    touch(session, "docs/a.md")
    effect = session.tool_result("read", TEXT, False)
    assert _block(effect).endswith("## Rules newly activated by this tool result\n\n"
                                   "- big.md — A long rule (fetch with the read_rule tool)\n")
    assert "big" in session.delivered
    assert session.tool_result("read", TEXT, False).content is None


def test_muted_rule_is_never_attached(project):
    session = _started(project)
    session.command("mute typescript")
    touch(session, "src/a.ts")
    assert session.tool_result("read", TEXT, False).content is None


def test_reevaluation_uses_the_last_turn_facts_and_an_empty_prompt(project):
    engine = project.engine()
    seen = []
    original = engine.evaluate

    def spy(facts, discovery=None, resolved=None):  # resolved: the session's settings of this call
        seen.append(facts)
        return original(facts, discovery, resolved)

    engine.evaluate = spy  # type: ignore[method-assign]
    session = make(project, engine)
    turn(session, prompt="python please", model="claude-sonnet-4", tools=["edit"], branch="main")
    touch(session, "src/a.ts")
    session.tool_result("read", TEXT, False)
    fresh = seen[-1]
    assert (fresh.prompt, fresh.model, fresh.tools, fresh.branch, fresh.touched) == (
        "", "claude-sonnet-4", ("edit",), "main", ("src/a.ts",))


def test_reevaluation_never_patches_the_section_nor_replaces_the_trace(project):
    session = _started(project)
    last, section, report = session.last_evaluation, session.section, session.command("")
    touch(session, "src/a.ts")
    session.tool_result("read", TEXT, False)
    assert session.last_evaluation is last and session.section == section and session.command("") == report


def test_attachment_before_any_turn_uses_a_bare_evaluation(project):
    session = make(project)
    touch(session, "src/a.ts")
    assert session.tool_result("read", TEXT, False).attached == ("security", "typescript")


def test_rule_without_relative_path_is_skipped_mid_run(project):
    project.write({"elsewhere/bare.md": rule_text("Bare.", description="Bare", globs=["src/**"],
                                                  match="touched", load="on-demand")})
    cwd = str(project.cwd)

    class Bare:
        @hookimpl
        def pi_rules_sources(self, context):
            path = os.path.join(cwd, "elsewhere", "bare.md")
            return [RuleFile(path, os.path.dirname(path), "", cwd, "bare", "v1", "project", (5, 0, "", ""), "bare")]

    session = make(project, project.engine(plugins=[("bare", Bare())]))
    turn(session)
    touch(session, "src/a.ts")
    effect = session.tool_result("read", TEXT, False)
    assert "bare" not in effect.attached and "bare" not in session.delivered


@pytest.mark.parametrize("content", [None, "text", {"type": "text"}, [1], [{"text": "no type"}], [None], 3])
def test_hostile_result_shapes_attach_nothing(project, content):
    session = _started(project)
    touch(session, "src/a.ts")
    effect = session.tool_result("read", content, False)
    assert effect.content is None and session.last_fault is None
    assert "typescript" not in session.delivered


@pytest.mark.parametrize("is_error", [True, 1, "yes", {}])
def test_anything_but_a_clean_result_is_errored(project, is_error):
    session = _started(project)
    touch(session, "src/a.ts")
    assert session.tool_result("read", TEXT, is_error).content is None


def test_a_missing_is_error_counts_as_clean(project):
    session = _started(project)
    touch(session, "src/a.ts")
    assert session.tool_result("read", TEXT, None).attached == ("typescript",)


# -- before agent start: section, zero churn, status (§6) ------------------------------


def test_first_turn_patches_the_section_and_sets_the_status(project):
    session = make(project)
    result = turn(session)
    assert result.action == "patch" and result.section == result.evaluation.section  # type: ignore[union-attr]
    assert result.section.startswith("# Rules\n") and session.section == result.section  # type: ignore[union-attr]
    assert result.status == f"rules: 1 · ~{result.evaluation.section_tokens} tok"  # type: ignore[union-attr]


def test_zero_churn_same_section_no_patch(project):
    session = make(project)
    turn(session)
    again = turn(session)
    assert (again.action, again.section) == ("none", None)
    assert again.status is not None  # the status is still reported every turn


def test_a_changed_section_is_patched_again(project):
    session = make(project)
    turn(session)
    touch(session, "src/a.ts")
    result = turn(session)
    assert result.action == "patch" and "## typescript" in result.section  # type: ignore[operator]


def test_section_is_removed_when_nothing_is_active_any_more(project):
    session = make(project)
    turn(session)
    session.command("mute security")
    removed = turn(session)
    assert (removed.action, removed.section, removed.status, session.section) == ("remove", None, None, "")
    assert turn(session).action == "none"


def test_nothing_to_do_when_nothing_is_active_and_nothing_was_injected(project):
    session = make(project)
    session.command("mute security")
    assert turn(session) == Turn("none", None, None)


def test_status_counts_pinned_and_on_demand_rules(project):
    session = make(project)
    touch(session, "src/api/users.ts")
    result = turn(session)
    tokens = result.evaluation.section_tokens  # type: ignore[union-attr]
    assert result.status == f"rules: 3 · ~{tokens} tok"  # security, typescript, api/design.md


def test_section_rule_ids_join_the_delivered_set(project):
    session = make(project)
    touch(session, "src/api/users.ts")
    turn(session)
    assert session.delivered == ("security", "typescript", "design")


def test_mute_wins_over_always_apply(project):
    session = make(project)
    session.command("mute security")
    touch(session, "src/a.ts")
    assert "## security" not in turn(session).section  # type: ignore[operator]


def test_max_tokens_comes_from_the_environment(project):
    session = make(project, PI_RULES_MAX_TOKENS="0x40")
    assert turn(session).evaluation.facts.max_tokens == 64  # type: ignore[union-attr]


def test_turn_json_leaves_the_evaluation_out(project):
    data = turn(make(project)).to_json()
    assert set(data) == {"action", "section", "status"} and json.dumps(data)


from suite_helpers import git  # noqa: E402 - the shared helper


def test_branch_is_resolved_live_every_turn(project):
    project.write({".pi/rules/release.md": rule_text("Only fixes.", description="Release", branch="release/*")})
    git(project.cwd, "init", "-q", "-b", "main")
    git(project.cwd, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    session = make(project)
    assert "## release" not in session.before_agent_start("", None, []).section  # type: ignore[operator]
    git(project.cwd, "checkout", "-q", "-b", "release/1.0")
    assert "## release" in session.before_agent_start("", None, []).section  # type: ignore[operator]


def test_a_host_given_branch_wins_and_none_means_absent(project):
    project.write({".pi/rules/release.md": rule_text("Only fixes.", description="Release", branch="release/*")})
    session = make(project)
    assert "## release" in turn(session, branch="release/2").section  # type: ignore[operator]
    assert turn(session, branch=None).evaluation.facts.branch is None  # type: ignore[union-attr]


@pytest.mark.parametrize("prompt, model, tools, branch", [
    (None, 3, "edit", 4), (["x"], {"m": 1}, [1, None, "edit"], ["b"]), ("", "", None, ""),
])
def test_hostile_turn_inputs_are_ignored(project, prompt, model, tools, branch):
    session = make(project)
    result = session.before_agent_start(prompt, model, tools, branch)
    assert result.action == "patch" and session.last_fault is None


# -- /rules (§6) -------------------------------------------------------------------------


@pytest.fixture
def worked(project):
    """A session after some work: touched paths, one mute, one real cycle."""
    session = make(project)
    touch(session, "src/a.ts")
    touch(session, "src/api/users.ts")
    session.command("mute python")
    turn(session, model="claude-sonnet-4", tools=["edit"])
    return session


def _golden(name: str, text: str, project) -> None:
    assert_golden(name, text.replace(str(project.cwd.parent), "<tmp>") + "\n")


def test_bare_rules_report_matches_golden(project, worked):
    _golden("rules-report.txt", worked.command(""), project)


def test_show_matches_golden(project, worked):
    _golden("rules-show.txt", worked.command("show typescript"), project)


def test_why_matches_golden(project, worked):
    _golden("rules-why.txt", worked.command("why src/a.ts"), project)


def test_usage_matches_golden(project, worked):
    _golden("rules-usage.txt", worked.command("frobnicate"), project)


def test_report_has_budget_and_section_lines_and_the_muted_line(worked):
    report = worked.command("")
    assert "inactive: python (muted for this session)" in report
    assert "budget: " in report and "/2000 estimated tokens" in report
    assert f"section: ~{worked.last_evaluation.section_tokens} tokens" in report  # type: ignore[union-attr]


def test_bare_report_is_the_last_real_cycle(project, worked):
    report = worked.command("/rules")
    touch(worked, "docs/x.md")
    worked.tool_result("read", TEXT, False)
    worked.command("mute security")
    assert worked.command("") == report


def test_report_before_any_cycle_evaluates_the_session_state(project):
    report = make(project).command("")
    assert report.startswith("rules: 1 active") and "section: " in report


def test_mute_and_unmute_answer_one_confirmation_line(worked):
    assert worked.command("mute typescript") == "muted: typescript"
    assert worked.command("mute typescript") == "muted: typescript"  # a no-op that still answers
    assert worked.mutes == ("python", "typescript")
    assert worked.command("unmute typescript") == "unmuted: typescript"
    assert worked.mutes == ("python",)


def test_unmute_of_a_rule_that_is_not_muted_still_answers(worked):
    assert worked.command("unmute typescript") == "unmuted: typescript"


@pytest.mark.parametrize("verb", ["show", "mute", "unmute"])
def test_unknown_ids_answer_unknown_rule_and_change_nothing(worked, verb):
    assert worked.command(f"{verb} nope") == "Unknown rule: nope"
    assert worked.mutes == ("python",)


def test_a_rule_created_since_the_last_cycle_can_be_muted(project, worked):
    project.write({".pi/rules/fresh.md": rule_text("New.", description="New", alwaysApply=True)})
    assert worked.command("mute fresh") == "muted: fresh"


@pytest.mark.parametrize("text", ["frobnicate", "mute", "mute a b", "unmute", "show", "show a b", "why",
                                  "MUTE security", None, 3, ["show", "x"]])
def test_any_other_form_prints_the_usage_line(worked, text):
    assert worked.command(text) == USAGE
    assert worked.mutes == ("python",)


def test_usage_line_lists_the_four_subcommands():
    assert all(word in USAGE for word in ("show <id>", "why <path>", "mute <id>", "unmute <id>"))


def test_why_is_read_only(worked):
    before = (worked.touched, worked.mutes, worked.delivered, worked.section, worked.last_evaluation)
    worked.command("why docs/readme.md")
    worked.command("show big")
    assert (worked.touched, worked.mutes, worked.delivered, worked.section, worked.last_evaluation) == before


def test_why_reports_muted_rules_as_session_excluded(worked):
    assert "muted: python — muted for this session" in worked.command("why app.py")


def test_why_takes_a_path_with_spaces(worked):
    assert worked.command("why src/my file.ts").startswith("why src/my file.ts\n")


def test_escapes_hostile_ids_in_answers(worked):
    assert worked.command("mute \x1b[31m") == "Unknown rule: \\x1b[31m"


# -- read_rule (§6) ----------------------------------------------------------------------


def test_read_rule_tool_definition(project):
    tool = make(project).read_rule_tool()
    assert tool.name == "read_rule" and tool.description == READ_RULE_DESCRIPTION
    assert tool.to_json()["parameters"] == {
        "type": "object",
        "properties": {"path": {"type": "string",
                                "description": "The rule's rules-relative path, exactly as the index lists it."}},
        "required": ["path"],
        "additionalProperties": False,
    }


def test_read_rule_returns_the_body_by_relative_path(worked):
    assert worked.read_rule({"path": "api/design.md"}) == "Handlers return data."


@pytest.mark.parametrize("name", ["nope.md", "/abs/design.md", "api/../api/design.md", "C:\\design.md", "design",
                                  "\\\\server\\x.md"])
def test_read_rule_refusals_answer_unknown_rule(worked, name):
    assert worked.read_rule({"path": name}) == f"Unknown rule: {name}"


@pytest.mark.parametrize("args", [None, 3, [], {"name": "api/design.md"}, {"path": 3}])
def test_read_rule_hostile_args(worked, args):
    assert worked.read_rule(args) == "Unknown rule: "


def test_read_rule_resolves_from_the_last_cycle_rules(project, worked):
    (project.cwd / ".pi/rules/api/design.md").unlink()
    assert worked.read_rule({"path": "api/design.md"}) == "Handlers return data."


def test_read_rule_before_any_cycle_uses_a_fresh_discovery(project):
    assert make(project).read_rule({"path": "typescript.md"}) == "Use `const`."


# -- totality and replay (hypothesis) ----------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
tool_names = st.sampled_from(["read", "edit", "write", "grep", "find", "bash", "ls", "x"]) | json_values
path_text = st.sampled_from(["src/a.ts", "src/api/u.ts", "docs/x.md", "a.py", "./src/a.ts", "/abs/x", "..", ""]) \
    | st.text(max_size=12)
tool_args = st.fixed_dictionaries({"path": path_text}) | json_values
result_content = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)}), max_size=2) \
    | json_values
events = st.lists(
    st.one_of(
        st.tuples(st.just("tool_start"), tool_names, tool_args),
        st.tuples(st.just("tool_result"), tool_names, result_content, json_values),
        st.tuples(st.just("turn"), json_values, json_values, json_values, json_values),
        st.tuples(st.just("command"), st.sampled_from(["", "show security", "mute python", "unmute python",
                                                        "why src/a.ts", "mute nope"]) | json_values),
        st.tuples(st.just("read_rule"), json_values | st.fixed_dictionaries({"path": path_text})),
        st.tuples(st.just("start"), json_values, json_values),
        st.tuples(st.just("tree"), json_values),
        st.tuples(st.just("compact")),
    ),
    max_size=12,
)


def _drive(session: Session, event: tuple) -> object:
    kind, *args = event
    if kind == "tool_start":
        return session.tool_start(*args)
    if kind == "tool_result":
        return session.tool_result(*args)
    if kind == "turn":
        return session.before_agent_start(*args)
    if kind == "command":
        return session.command(*args)
    if kind == "read_rule":
        return session.read_rule(*args)
    if kind == "start":
        return session.session_start(*args)
    if kind == "tree":
        return session.session_tree(*args)
    return session.compact()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=events)
def test_random_event_sequences_never_raise(project, sequence):
    session = make(project)
    for event in sequence:
        result = _drive(session, event)
        if hasattr(result, "to_json"):
            json.dumps(result.to_json())  # type: ignore[union-attr]
        assert session.last_fault is None, (event, session.last_fault)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(tool_names, tool_args), max_size=15), noise=st.lists(json_values, max_size=3))
def test_a_replayed_session_rebuilds_exactly_the_same_touched_set(project, calls, noise):
    live = make(project)
    entries: list[object] = list(noise)  # other entries of the branch never count
    for tool, args in calls:
        entry = live.tool_start(tool, args).entry
        if entry is not None:
            entries.append(json.loads(json.dumps(entry)))  # as a host would store it
    replayed = make(project)
    replayed.session_start("resume", entries)
    assert replayed.touched == live.touched


def test_read_rule_tool_resolves_rule_urls_and_lists_available_names(rule_project):
    from rules_hosts import Session

    rule_project.write({".pi/rules/a.md": rule_text("Body A.", globs=["x"]),
                        ".pi/rules/b.md": rule_text("Body B.", globs=["y"], load="on-demand")})
    session = Session(rule_project.engine(), str(rule_project.cwd), trusted=True)
    assert session.read_rule({"path": "rule://b"}) == "Body B."
    assert session.read_rule({"path": "rule://zzz"}) == "Unknown rule: rule://zzz\nAvailable: a, b"
    assert session.read_rule({"path": "zzz.md"}) == "Unknown rule: zzz.md"
