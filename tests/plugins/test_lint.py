"""``pi-rules check`` as the cross-agent linter (issue 15, item 3; docs/lint.md): one
repository that triggers each warning code and one that does not, the ``pi_rules_lint``
hook's fault policy, ``--strict``, and every ``--format`` carrying the codes.
"""

from __future__ import annotations

import json
import re

import pytest

from suite_helpers import git_init as init, run_in, run_in_project

from rules_core import hookimpl
from rules_core.lint.check import lint
from rules_core.model import RuleWarning
from rules_core.rule_tests.pytest_plugin import rule_text

CODE = re.compile(r"[a-z]+(?:-[a-z]+)*\Z")


def warnings_of(project, *, max_tokens: int = 2000, trusted: bool = True, ignore=(), plugins=()):
    engine = project.engine(plugins=plugins)
    found = lint(engine, engine.discover(str(project.cwd), trusted), cwd=str(project.cwd), trusted=trusted,
                 max_tokens=max_tokens, ignore=ignore)
    assert all(CODE.match(w.code) for w in found), "codes are stable, lower-case and hyphenated"
    return found


def codes(found, code: str) -> list[RuleWarning]:
    return [w for w in found if w.code == code]


def git_init(project) -> None:
    init(project.cwd)


def always(body: str, **keys) -> str:
    return rule_text(body, alwaysApply=True, **keys)


# -- budget-overflow -----------------------------------------------------------------


def test_always_on_rules_over_the_budget_name_the_total_and_the_dropped(rule_project):
    rule_project.write({f".pi/rules/{name}.md": always(name * 400) for name in "abc"})  # ~100 tokens each
    found = codes(warnings_of(rule_project, max_tokens=250), "budget-overflow")
    assert [w.path for w in found] == [str(rule_project.cwd / ".pi/rules/c.md")] * 2  # the summary, then c
    message = found[0].message
    assert message.startswith("3 always-on rules need ~300 estimated tokens together, over the budget of 250")
    assert "sends a (~100), b (~100) and drops c (~100)" in message
    assert "PI_RULES_MAX_TOKENS" in message and "load: on-demand" in message
    assert found[1].message.startswith("always-on rule c (~100 tokens) is dropped by the budget of 250")


def test_many_dropped_rules_give_one_summary_and_one_short_line_each(rule_project):
    # issue 34: a ~660-character message was repeated for every dropped rule.
    rule_project.write({f".pi/rules/{name}.md": always(name * 400) for name in "abcdef"})
    found = codes(warnings_of(rule_project, max_tokens=250), "budget-overflow")
    summaries = [w for w in found if "together" in w.message]
    assert len(summaries) == 1 and found[0] == summaries[0]  # first, in check's own order
    short = found[1:]
    assert [w.path.rsplit("/", 1)[-1] for w in short] == ["c.md", "d.md", "e.md", "f.md"]
    assert all(len(w.message) < 150 and "PI_RULES_MAX_TOKENS" not in w.message for w in short)


def test_always_on_rules_that_fit_or_only_match_sometimes_are_not_reported(rule_project):
    rule_project.write({
        **{f".pi/rules/{name}.md": always(name * 400) for name in "ab"},
        ".pi/rules/scoped.md": rule_text("s" * 4000, globs=["src/**"]),  # only when src is touched
        ".pi/rules/fetched.md": rule_text("f" * 4000, alwaysApply=True, load="on-demand"),  # never in the budget
        ".pi/rules/copy.md": always("a" * 400),  # a byte-identical copy costs nothing more
        "src/x.ts": "x",
    })
    assert codes(warnings_of(rule_project, max_tokens=250), "budget-overflow") == []


def test_one_always_on_rule_alone_over_the_budget_says_it_leaves_no_room(rule_project):
    rule_project.write({".pi/rules/huge.md": always("h" * 4000)})
    [warning] = codes(warnings_of(rule_project, max_tokens=100), "budget-overflow")
    assert "alone needs ~1000 estimated tokens, over the budget of 100" in warning.message
    assert "every other pinned rule that matches is dropped" in warning.message


# -- env-value -------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "read", "fix"), [
    ("20k", "is read as 20", "PI_RULES_MAX_TOKENS=20000"),
    ("8,000", "is read as 8", "PI_RULES_MAX_TOKENS=8000"),
    ("1e4", "is read as 1", "PI_RULES_MAX_TOKENS=10000"),
    ("abc", "is not a number, so the default budget of 2000 applies", "e.g. PI_RULES_MAX_TOKENS=8000"),
    ("-5", "not a positive number, so the default budget of 2000 applies", "e.g. PI_RULES_MAX_TOKENS=8000"),
])
def test_a_budget_read_differently_from_how_it_is_written(rule_project, value, read, fix):
    rule_project.env["PI_RULES_MAX_TOKENS"] = value
    [warning] = codes(warnings_of(rule_project), "env-value")
    assert warning.path == "PI_RULES_MAX_TOKENS" and read in warning.message and fix in warning.message


@pytest.mark.parametrize("value", ["8000", " 3000 ", "0x10", "+500", ""])
def test_a_budget_read_as_written_is_not_reported(rule_project, value):
    rule_project.env.update({"PI_RULES_MAX_TOKENS": value, "PI_RULES_IMPORT": "none", "PI_RULES_ATTACH": "off",
                             "PI_RULES_DEADLINE_MS": "5000", "PI_RULES_FUZZ_SCALE": "2"})
    assert codes(warnings_of(rule_project), "env-value") == []


def test_unknown_variables_and_lenient_switches_are_named(rule_project):
    rule_project.env.update({"PI_RULES_MAX_TOKEN": "8000", "PI_RULE_IMPORT": "none", "PI_RULES_ATTACH": "false",
                             "PI_RULES_DEADLINE_MS": "5s", "UNRELATED": "x"})
    found = {w.path: w.message for w in codes(warnings_of(rule_project), "env-value")}
    assert set(found) == {"PI_RULES_MAX_TOKEN", "PI_RULE_IMPORT", "PI_RULES_ATTACH", "PI_RULES_DEADLINE_MS"}
    assert found["PI_RULES_MAX_TOKEN"].endswith("did you mean PI_RULES_MAX_TOKENS?")
    assert found["PI_RULE_IMPORT"].endswith("did you mean PI_RULES_IMPORT?")
    assert "is read as on: only 'off' turns mid-run attachment off" in found["PI_RULES_ATTACH"]
    assert "the default of 10000 ms applies" in found["PI_RULES_DEADLINE_MS"]


# -- dead-glob -------------------------------------------------------------------------


def test_a_glob_that_matches_no_file_is_named_with_its_rule(rule_project):
    rule_project.write({
        ".pi/rules/style.md": rule_text("Style.", globs=["scr/**/*.ts", "src/**", "docs"]),
        "src/a.ts": "x", "docs/guide.md": "x",
    })
    found = {re.search(r"glob '([^']+)'", w.message).group(1): w for w in codes(warnings_of(rule_project), "dead-glob")}
    assert set(found) == {"scr/**/*.ts", "docs"}
    assert found["scr/**/*.ts"].path == str(rule_project.cwd / ".pi/rules/style.md")
    assert "of rule style matches no file in the working directory" in found["scr/**/*.ts"].message
    assert "it names a folder, and globs match files — write 'docs/**'" in found["docs"].message


def test_live_negated_as_written_global_and_untrusted_globs_are_not_reported(rule_project):
    rule_project.write({
        ".pi/rules/style.md": rule_text("Style.", globs=["src/**", "!gen/**", "../elsewhere/**", "/abs/**"]),
        ".claude/rules/api.md": "---\npaths: src/**/*.ts\n---\nAPI.\n",
        "src/a.ts": "x",
    })
    rule_project.write_global({"g.md": rule_text("Global.", globs=["nowhere/**"])})
    assert codes(warnings_of(rule_project), "dead-glob") == []
    rule_project.write({".pi/rules/dead.md": rule_text("Dead.", globs=["nowhere/**"])})
    assert codes(warnings_of(rule_project, trusted=False), "dead-glob") == []


def test_files_git_ignores_do_not_keep_a_glob_alive(rule_project):
    git_init(rule_project)
    rule_project.write({
        ".gitignore": "build/\n",
        ".pi/rules/build.md": rule_text("Build output.", globs=["build/**"]),
        ".pi/rules/src.md": rule_text("Sources.", globs=["src/**"]),
        "build/out.js": "x", "src/a.ts": "x",
    })
    [warning] = codes(warnings_of(rule_project), "dead-glob")
    assert "glob 'build/**' of rule build" in warning.message and "files git ignores are not counted" in warning.message


def test_a_nested_rule_is_checked_against_its_own_folder(rule_project):
    rule_project.write({
        "packages/web/.pi/rules/ui.md": rule_text("UI.", globs=["src/**", "lib/**"]),
        "packages/web/src/a.tsx": "x",
        "lib/x.ts": "x",  # the working directory's lib, not the package's
    })
    [warning] = codes(warnings_of(rule_project), "dead-glob")
    assert "glob 'lib/**' of rule ui matches no file in packages/web" in warning.message


# -- duplicate-body --------------------------------------------------------------------


def test_the_same_text_in_two_tools_names_the_copy_that_wins(rule_project):
    rule_project.write({
        ".cursor/rules/secrets.mdc": "---\nalwaysApply: true\n---\nNever log secrets.\n",
        ".windsurf/rules/secrets.md": "---\ntrigger: always_on\n---\nNever log secrets.\n",
    })
    [warning] = codes(warnings_of(rule_project), "duplicate-body")
    assert warning.path == str(rule_project.cwd / ".cursor/rules/secrets.mdc")
    assert "rule secrets has the same text as secrets-2 (windsurf: secrets.md)" in warning.message
    assert "only secrets-2 is sent (it comes later in discovery order)" in warning.message
    assert "muting secrets-2 sends this copy instead" in warning.message


def test_a_higher_priority_copy_wins(rule_project):
    rule_project.write({
        ".pi/rules/a.md": always("Same text.", priority=5),
        ".pi/rules/b.md": always("Same text."),
    })
    [warning] = codes(warnings_of(rule_project), "duplicate-body")
    assert warning.path.endswith("b.md") and "only a is sent (its priority is higher)" in warning.message


def test_text_equal_but_for_blank_edges_is_sent_twice(rule_project):
    rule_project.write({
        ".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\n\nUse tabs.\n",
        ".windsurf/rules/style.md": "---\ntrigger: always_on\n---\nUse tabs.   \n\n\n",
    })
    [warning] = codes(warnings_of(rule_project), "duplicate-body")
    assert warning.path.endswith(".windsurf/rules/style.md") and "the model reads it twice" in warning.message


def test_different_texts_are_not_reported(rule_project):
    rule_project.write({
        ".pi/rules/a.md": always("Use tabs."),
        ".pi/rules/b.md": always("Use spaces."),
    })
    assert codes(warnings_of(rule_project), "duplicate-body") == []


def test_an_on_demand_copy_of_a_pinned_text_is_reported(rule_project):
    """dataplat/pgmob's layout when the pair is copied, not linked: Kiro always, Windsurf manual."""
    rule_project.write({
        ".kiro/steering/docs.md": "---\ninclusion: always\n---\n# Documentation Standards\n\nWrite docstrings.\n",
        ".windsurf/rules/docs.md": "---\ntrigger: manual\n---\n# Documentation Standards\n\nWrite docstrings.\n",
    })
    [warning] = codes(warnings_of(rule_project), "duplicate-body")
    assert warning.path.endswith(".windsurf/rules/docs.md")
    assert "has the same text as the pinned rule" in warning.message
    assert "index line is left out" in warning.message


def test_two_on_demand_copies_are_reported_on_the_later_one(rule_project):
    rule_project.write({
        ".pi/rules/a.md": rule_text("Use tabs.", alwaysApply=True, load="on-demand"),
        ".pi/rules/b.md": rule_text("Use tabs.", alwaysApply=True, load="on-demand"),
    })
    [warning] = codes(warnings_of(rule_project), "duplicate-body")
    assert warning.path.endswith("b.md") and "the index offers the model the same text twice" in warning.message


def test_a_file_and_its_symlinked_name_are_not_a_duplicate(rule_project):
    git_init(rule_project)
    rule_project.write({".windsurf/rules/docs.md": "---\ntrigger: manual\n---\nWrite docstrings.\n"})
    (rule_project.cwd / ".kiro" / "steering").mkdir(parents=True)
    (rule_project.cwd / ".kiro" / "steering" / "docs.md").symlink_to("../../.windsurf/rules/docs.md")
    assert codes(warnings_of(rule_project), "duplicate-body") == []
    # The control: the same text as a second file is reported.
    (rule_project.cwd / ".kiro" / "steering" / "docs.md").unlink()
    rule_project.write({".kiro/steering/docs.md": "---\ninclusion: always\n---\nWrite docstrings.\n"})
    assert len(codes(warnings_of(rule_project), "duplicate-body")) == 1


# -- ignored-key, ignored-file, size-cap ---------------------------------------------------


def test_keys_the_files_own_tool_ignores(rule_project):
    rule_project.write({
        ".claude/rules/api.md": "---\nglobs: src/**\n---\nAPI.\n",
        ".github/instructions/ts.instructions.md": "---\nglobs: '**/*.ts'\n---\nTS.\n",
        ".windsurf/rules/py.md": "---\nalwaysApply: true\n---\nPython.\n",
        ".cursor/rules/sec.mdc": "---\nalwaysApply: \"true\"\n---\nSecrets.\n",
    })
    found = {w.path.split("/project/", 1)[1]: w.message for w in codes(warnings_of(rule_project), "ignored-key")}
    assert set(found) == {".claude/rules/api.md", ".github/instructions/ts.instructions.md",
                          ".windsurf/rules/py.md", ".cursor/rules/sec.mdc"}
    assert "Claude Code ignores 'globs:' and reads only 'paths:'" in found[".claude/rules/api.md"]
    assert '(docs/importers.md, "The claude importer")' in found[".claude/rules/api.md"]
    assert "GitHub Copilot ignores 'globs:'" in found[".github/instructions/ts.instructions.md"]
    assert "Windsurf applies this rule only when it is @mentioned" in found[".windsurf/rules/py.md"]
    assert "add trigger: always_on" in found[".windsurf/rules/py.md"]
    assert "write alwaysApply: true, unquoted" in found[".cursor/rules/sec.mdc"]


def test_files_written_the_way_their_tool_reads_them_are_not_reported(rule_project):
    rule_project.write({
        ".claude/rules/api.md": "---\npaths: src/**\n---\nAPI.\n",
        ".github/instructions/ts.instructions.md": "---\napplyTo: '**/*.ts'\nexcludeAgent: code-review\n---\nTS.\n",
        ".github/copilot-instructions.md": "---\nglobs: ignored, the whole file is the text\n---\nAll.\n",
        ".windsurf/rules/py.md": "---\ntrigger: glob\nglobs: '**/*.py'\n---\nPython.\n",
        ".cursor/rules/sec.mdc": "---\nalwaysApply: true\n---\nSecrets.\n",
        ".cursor/rules/testing/RULE.md": "---\nalwaysApply: true\n---\nTests.\n",  # Cursor 2.2 rule folder
        "src/a.ts": "x", "b.py": "x",
    })
    found = warnings_of(rule_project)
    assert [w for w in found if w.code in ("ignored-key", "ignored-file", "size-cap")] == []


def test_a_plain_md_file_in_cursor_rules_is_an_ignored_file(rule_project):
    rule_project.write({".cursor/rules/style.md": "---\nalwaysApply: true\n---\nStyle.\n"})
    [warning] = codes(warnings_of(rule_project), "ignored-file")
    assert "rename it to style.mdc" in warning.message and '"The cursor importer"' in warning.message


def test_a_windsurf_rule_over_its_character_cap(rule_project):
    rule_project.write({
        ".windsurf/rules/big.md": "---\ntrigger: always_on\n---\n" + "x" * 12_100,
        ".windsurf/rules/fits.md": "---\ntrigger: always_on\n---\n" + "y" * 11_000,
    })
    [warning] = codes(warnings_of(rule_project), "size-cap")
    assert warning.path.endswith("big.md")
    assert "Windsurf reads at most 12,000 of a rule file" in warning.message


def test_agents_md_files_over_codex_32_kib_from_the_git_root_down(rule_project):
    git_init(rule_project)
    rule_project.write({"AGENTS.md": "# Root\n" + "r" * 20_000, "pkg/AGENTS.md": "# Pkg\n" + "p" * 20_000,
                        "small/AGENTS.md": "# Small\n" + "s" * 1_000})
    found = codes(warnings_of(rule_project), "size-cap")
    assert [w.path for w in found] == [str(rule_project.cwd / "pkg/AGENTS.md")]
    assert "stops at 32 KiB together (project_doc_max_bytes)" in found[0].message
    assert "with the 20,007 bytes before it" in found[0].message and '"The agents-md importer"' in found[0].message


# -- the hook, the command -----------------------------------------------------------------


class Broken:
    @hookimpl
    def pi_rules_lint(self, discovery, context):
        raise RuntimeError("boom")


class Todo:
    @hookimpl
    def pi_rules_lint(self, discovery, context):
        return [RuleWarning("todo-left", r.file.path, "finish it", "todo") for r in discovery.rules if "TODO" in r.body]


def test_a_broken_linter_is_one_warning_and_the_others_stand(rule_project):
    rule_project.write({".pi/rules/a.md": always("TODO")})
    found = warnings_of(rule_project, plugins=[("broken", Broken()), ("todo", Todo())])
    assert sorted(w.code for w in found if w.plugin in ("broken", "todo")) == ["lint-failed", "todo-left"]
    assert "lint plugin 'broken' failed (RuntimeError: boom)" in codes(found, "lint-failed")[0].message


def test_ignored_codes_are_dropped_discovery_warnings_included(rule_project):
    rule_project.write({".pi/rules/a.md": rule_text("Zero\u200bwidth.", globs=["nowhere/**"])})
    assert {w.code for w in warnings_of(rule_project)} == {"dead-glob", "invisible-characters"}
    assert warnings_of(rule_project, ignore={"dead-glob", "invisible-characters"}) == ()


@pytest.fixture
def cli_project(rule_project, monkeypatch):
    monkeypatch.setenv("HOME", str(rule_project.home))
    for name in ("PI_RULES_MAX_TOKENS", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_DEBUG", "PI_RULES_IMPORT",
                 "PI_RULES_ATTACH", "PI_RULES_OVERFLOW", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    rule_project.write({".pi/rules/style.md": rule_text("Style.", globs=["scr/**"]), "src/a.ts": "x"})
    return rule_project


def run(capsys, project, *args):
    code, out, _ = run_in_project(capsys, project, *args)
    return code, out


def test_check_prints_warnings_after_the_ok_line_and_exits_0_unless_strict(capsys, cli_project):
    code, out = run(capsys, cli_project, "check")
    assert code == 0 and out.splitlines()[0] == "ok: 1 rule, no errors"
    assert out.splitlines()[1].startswith("warning dead-glob .pi/rules/style.md: glob 'scr/**' of rule style")
    assert run(capsys, cli_project, "check", "--strict")[0] == 1
    cli_project.write({"scr/a.ts": "x"})
    assert run(capsys, cli_project, "check", "--strict") == (0, "ok: 1 rule, no errors\n")


def test_check_json_and_github_carry_every_code(capsys, cli_project, monkeypatch):
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "20k")
    code, out = run(capsys, cli_project, "--json", "check")
    data = json.loads(out)
    assert code == 0 and data["errors"] == []
    assert [(w["code"], w["path"]) for w in data["warnings"]] == [
        ("dead-glob", str(cli_project.cwd / ".pi/rules/style.md")), ("env-value", "PI_RULES_MAX_TOKENS")]
    code, out = run(capsys, cli_project, "check", "--format", "github")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].startswith("::warning file=.pi/rules/style.md,line=5,col=3,title=pi-rules dead-glob::glob 'scr/**'")
    assert lines[1].startswith("::warning title=pi-rules env-value::PI_RULES_MAX_TOKENS: PI_RULES_MAX_TOKENS='20k'")


def test_the_settings_file_silences_codes(capsys, cli_project):
    cli_project.write({".pi/rules.toml": "[lint]\nignore = [\"dead-glob\"]\n"})
    assert run(capsys, cli_project, "check", "--strict") == (0, "ok: 1 rule, no errors\n")


def test_a_blocked_linter_reports_nothing(capsys, cli_project):
    assert run(capsys, cli_project, "-p", "no:lint-globs", "check", "--strict") == (0, "ok: 1 rule, no errors\n")


def test_lint_ignore_silences_one_code_for_the_files_a_glob_names(tmp_path, capsys):
    import subprocess

    from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

    project = tmp_path / "p"
    make_rules(project, {
        ".pi/rules/a.md": rule_text("Rule a.", globs=["scr/**"]),
        "legacy/.pi/rules/b.md": rule_text("Rule b.", globs=["nothing/**"]),
        ".pi/rules.toml": '[lint]\nignore = ["dead-glob:legacy/**"]\n',
    })
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    code, out, _ = run_in(capsys, project, "check")
    assert code == 0
    warnings = [line.split(":")[0] for line in out.splitlines() if line.startswith("warning")]
    assert warnings == ["warning dead-glob .pi/rules/a.md"]


# -- manual-attach, Copilot's ignored-file, double-frontmatter (issue 24, "Also") -----------


def test_a_copilot_file_without_apply_to_says_vs_code_attaches_it_by_hand(rule_project):
    rule_project.write({
        ".github/instructions/style.instructions.md": "---\ndescription: Style\n---\nUse tabs.\n",
        ".github/instructions/api.instructions.md": "---\napplyTo: \"src/**\"\n---\nUse REST.\n",
    })
    [warning] = codes(warnings_of(rule_project), "manual-attach")
    assert warning.path.endswith("style.instructions.md")
    assert "VS Code applies an instructions file without applyTo only when it is attached" in warning.message
    # RULE-SPEC still makes it always-on.
    engine = rule_project.engine()
    section = engine.evaluate(rule_project.facts()).section
    assert "Use tabs." in section


def test_a_markdown_file_in_github_instructions_without_the_suffix_is_ignored_by_copilot(rule_project):
    rule_project.write({
        ".github/instructions/style.md": "---\napplyTo: \"**\"\n---\nUse tabs.\n",
        ".github/instructions/sub/api.md": "Use REST.\n",
        ".github/instructions/ok.instructions.md": "---\napplyTo: \"**\"\n---\nFine.\n",
        ".github/instructions/notes.txt": "not markdown",
    })
    found = codes(warnings_of(rule_project), "ignored-file")
    assert [w.path.rsplit("/", 1)[-1] for w in found] == ["style.md", "api.md"]
    assert "rename it to style.instructions.md" in found[0].message
    assert "Use tabs." not in rule_project.engine().evaluate(rule_project.facts()).section  # read by no one
    assert codes(warnings_of(rule_project, trusted=False), "ignored-file") == []


def test_a_second_frontmatter_block_is_reported(rule_project):
    rule_project.write({
        ".pi/rules/a.md": "---\ndescription: A\nversion: 1\nalwaysApply: true\n---\n---\nglobs: src/**\n---\nBody.\n",
        ".pi/rules/b.md": always("---\n\nA rule that starts with a thematic break.\n\n---\n\nMore."),
        ".claude/rules/c.md": "---\npaths: src/**\n---\n\n---\ndescription: C\n---\nText.\n",
    })
    found = codes(warnings_of(rule_project), "double-frontmatter")
    assert sorted(w.path.rsplit("/", 1)[-1] for w in found) == ["a.md", "c.md"]
    assert "(globs)" in next(w for w in found if w.path.endswith("a.md")).message
