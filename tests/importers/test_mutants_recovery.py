"""The importers' frontmatter recovery (``rules_importers/_recovery.py``) and the Markdown
regions imports skip (``rules_importers/_regions.py``), pinned where mutation testing found
them unpinned (issue 32).

What a user sees: the rules discovery makes of a damaged frontmatter block (Cursor,
Windsurf, oh-my-pi's ``.agents``), the ``yaml-syntax`` error and the quoted line it names
as the fix and the binary-file error (Copilot), and the body of a ``CLAUDE.md`` whose ``@path``
imports sit near code, fences and HTML comments. docs/mutation.md lists the mutants these
kill and the ones left, explained.
"""

from __future__ import annotations

from functools import partial

import pytest

from rules_plugins.frontmatter import load_yaml

from importer_helpers import by_id, git_init, plugin_errors, sole_error


# -- Copilot's errors: the quoted line a yaml-syntax error names (with_quote_hint), a binary file --

copilot_error = partial(sole_error, plugin="copilot")
GENERIC = "check indentation and quote values containing ': ', '#', '*', '&', '[' or '{'"


def instructions(project, text: str) -> str:
    project.write({".github/instructions/x.instructions.md": text})
    error = copilot_error(project)
    assert error.kind == "yaml-syntax"
    return error.message


def test_a_hint_the_yaml_message_already_gives_is_not_given_twice(rule_project):
    message = instructions(rule_project, "---\napplyTo: **/*.ts\n---\nBody.\n")
    assert message == ('invalid YAML at line 2, column 11: did not find expected alphabetic or numeric character; '
                       'quote the value: applyTo: "**/*.ts"')


def test_an_unclosed_block_is_told_to_close_not_to_quote(rule_project):
    message = instructions(rule_project, "---\napplyTo: {src,lib}/**\nBody.\n")
    assert message == ("the frontmatter block opened with '---' on line 1 is never closed; "
                       "add a line containing only '---' after the last key")


def test_the_quoted_line_escapes_quotes_and_backslashes_so_it_reads_back_as_written(rule_project):
    value = '`grep "a\\.b"` finds it'
    message = instructions(rule_project, f"---\ndescription: {value}\n---\nBody.\n")
    head, _, fix = message.partition("; quote the value: ")
    assert head == "invalid YAML at line 2, column 14: found character that cannot start any token"
    assert fix == 'description: "`grep \\"a\\\\.b\\"` finds it"'
    assert load_yaml(fix) == {"description": value}  # the line it names, pasted, reads back the value


@pytest.mark.parametrize("block, hint", [
    # the block ends at a closing line with trailing blanks: the body's lines are not YAML
    ("---\nname: a: b\n---  \n- {a}\n", GENERIC),
    # a line that only looks like the closing one is inside the block, and so is what follows it
    ("---\nname: a: b\n---X\nglobs: {a,b}\n---\nBody.\n", 'quote the value: globs: "{a,b}"'),
    ("---\nname: a: b\n---\u00a0\nglobs: {a,b}\n---\nBody.\n", 'quote the value: globs: "{a,b}"'),
])
def test_the_quoted_line_is_looked_for_in_the_frontmatter_block_only(rule_project, block, hint):
    message = instructions(rule_project, block)
    assert message == f"invalid YAML at line 2, column 8: mapping values are not allowed in this context; {hint}"


def test_a_binary_instructions_file_is_a_read_failure_that_says_what_to_do(rule_project):
    rule_project.write({".github/instructions/bin.instructions.md": "a\x00b\n"})
    error = copilot_error(rule_project)
    assert (error.kind, error.message) == (
        "read-failure", "the file contains NUL bytes, so it is binary, not markdown; delete it or save it as text")


# -- Cursor's and Windsurf's reading of a block strict YAML refuses (recover, _text_value, flag) --

cursor_rules = partial(by_id, plugin="cursor")


def test_a_bare_dash_in_a_recovered_glob_list_is_an_empty_entry_and_adds_no_glob(rule_project):
    rule_project.write({".cursor/rules/x.mdc": "---\nglobs:\n  - *.md\n  -\n  - docs/**\n---\nBody.\n"})
    assert cursor_rules(rule_project)["x"].globs == ("*.md", "docs/**")
    assert plugin_errors(rule_project, "cursor") == []


def cursor_rule(project, front: str):
    project.write({".cursor/rules/x.mdc": f"---\n{front}---\nBody.\n"})
    assert plugin_errors(project, "cursor") == []
    return cursor_rules(project)["x"]


def test_a_recovered_glob_ending_in_a_class_is_one_glob_not_a_list(rule_project):
    assert cursor_rule(rule_project, "globs: *.[ch]\n").globs == ("*.[ch]",)


def test_blank_and_comment_lines_in_a_recovered_block_are_skipped_not_the_end(rule_project):
    rule = cursor_rule(rule_project, "description: C sources\n\n# unquoted, as Cursor reads it\nglobs: *.[ch]\n")
    assert (rule.description, rule.globs) == ("C sources", ("*.[ch]",))


def test_a_list_item_after_a_key_that_has_a_value_leaves_the_block_unread(rule_project):
    rule_project.write({".cursor/rules/x.mdc": "---\nglobs: [*.ts]\n  - *.js\n---\nBody.\n"})
    assert [e.kind for e in plugin_errors(rule_project, "cursor")] == ["yaml-syntax"]
    assert cursor_rules(rule_project) == {}


def test_an_empty_quoted_value_is_empty_and_a_lone_quote_is_text_when_recovered(rule_project):
    rule = cursor_rule(rule_project, "description: Use when: editing SQL\nglobs: ''\nalwaysApply: false\n")
    assert (rule.description, rule.globs, rule.load) == ("Use when: editing SQL", (), "on-demand")
    assert cursor_rule(rule_project, "globs: *.sql\ndescription: '\n").description == "'"


def test_a_bad_always_apply_does_not_hide_a_bad_globs_in_the_same_file(rule_project):
    rule_project.write({".windsurf/rules/w.md": "---\nalwaysApply: maybe\nglobs: 42\n---\nBody.\n"})
    assert [(e.kind, e.message) for e in plugin_errors(rule_project, "windsurf")] == [
        ("invalid-value",
         "alwaysApply must be true or false, got 'maybe'; write alwaysApply: true or alwaysApply: false"),
        ("invalid-value", 'globs must be a comma-separated string or a list of glob strings, got the number 42; '
                          'write globs: "src/**/*.ts, docs/**" or one quoted pattern per list item')]


# -- oh-my-pi's reading of a block strict YAML refuses (agents importer: _repaired, _yaml_value) --

agents_rules = partial(by_id, plugin="agents")
agents_errors = partial(plugin_errors, plugin="agents")


def agents_rule(project, front: str):
    """The rule (and the errors) the agents importer makes of ``.agents/rules/x.md``."""
    git_init(project.cwd)
    project.write({".agents/rules/x.md": f"---\n{front}---\nBody.\n"})
    return agents_rules(project).get("x"), agents_errors(project)


def test_a_tab_indented_folded_description_is_read_as_oh_my_pi_reads_it(rule_project):
    rule, errors = agents_rule(rule_project, "description: >\n\tUse for SQL\n\tmigrations\nglobs: '*.sql'\n")
    assert (rule.description, rule.globs, errors) == ("Use for SQL migrations", ("*.sql",), [])


def test_a_quoted_value_keeps_its_hash_when_another_line_is_recovered(rule_project):
    rule, errors = agents_rule(rule_project, "globs: *.ts\ndescription: 'Shell #tips'\n")
    assert (rule.description, rule.globs, errors) == ("Shell #tips", ("*.ts",), [])
    rule, errors = agents_rule(rule_project, 'globs: *.ts\ndescription: "Shell #tips"\n')
    assert (rule.description, rule.globs, errors) == ("Shell #tips", ("*.ts",), [])


def test_each_recovered_value_is_yaml_on_its_own_and_a_mapping_stays_text(rule_project):
    rule, errors = agents_rule(rule_project, "description: Use when: editing SQL\nglobs: *.sql\nalwaysApply: false\n")
    assert (rule.description, rule.globs, rule.always_apply, errors) == ("Use when: editing SQL", ("*.sql",), False, [])


def test_a_value_quoted_by_the_repair_keeps_characters_outside_the_basic_plane(rule_project):
    rule, errors = agents_rule(rule_project, "description: Use when: shipping \U0001F680\nmetadata:\n  team: web\n")
    assert (rule.description, [e.kind for e in errors]) == ("Use when: shipping \U0001F680", [])


def test_tab_indents_and_a_value_holding_colon_space_are_both_repaired(rule_project):
    rule, errors = agents_rule(rule_project, "description: Use when: editing SQL\nmetadata:\n\tteam: data\n")
    assert (rule.description, [e.kind for e in errors]) == ("Use when: editing SQL", [])


def test_the_repair_quotes_only_plain_values_never_an_already_quoted_one(rule_project):
    rule, errors = agents_rule(rule_project, "description: 'SQL: migrations'\nmetadata:\n  when: Use when: editing\n")
    assert (rule.description, [e.kind for e in errors]) == ("SQL: migrations", [])


def test_a_key_without_a_space_after_its_colon_is_read_as_oh_my_pi_reads_it(rule_project):
    rule, errors = agents_rule(rule_project, "globs:*.ts\n")
    assert (rule.globs, errors) == (("*.ts",), [])


# -- where a CLAUDE.md's imports are not read (_regions) --------------------------------------------

claude_rules = partial(by_id, plugin="claude-md")
claude_errors = partial(plugin_errors, plugin="claude-md")


def claude_body(project, files: dict[str, str]) -> str:
    git_init(project.cwd)
    project.write(files)
    return claude_rules(project)["project/CLAUDE"].body


def test_a_comment_opener_inside_code_hides_no_import(rule_project):
    text = "Write `<!--` to open a note.\nSee @x.md here.\nClose it with `-->`.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "x.md": "X\n"}) == (
        "Write `<!--` to open a note.\nSee X here.\nClose it with `-->`.\n")
    assert claude_errors(rule_project) == []


def test_comments_after_a_comment_opener_in_code_still_hide_their_imports(rule_project):
    text = "Write `<!--` to open <!-- @old.md --> a <!-- note --> then @x.md.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "old.md": "OLD\n", "x.md": "X\n"}) == (
        "Write `<!--` to open <!-- @old.md --> a <!-- note --> then X.\n")


def test_every_inline_comment_hides_its_imports_not_only_the_last(rule_project):
    text = "Text <!-- a --> and <!-- @old.md --> or <!-- @older.md --> then @x.md.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "old.md": "OLD\n", "older.md": "OLDER\n", "x.md": "X\n"}) == (
        "Text <!-- a --> and <!-- @old.md --> or <!-- @older.md --> then X.\n")
    assert claude_errors(rule_project) == []


def test_a_comment_closer_written_before_a_comment_does_not_end_it(rule_project):
    text = "Close notes with `-->`<!-- @old.md --> then @x.md.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "old.md": "OLD\n", "x.md": "X\n"}) == (
        "Close notes with `-->`<!-- @old.md --> then X.\n")


def test_an_empty_inline_comment_ends_at_its_own_closer(rule_project):
    text = "Text <!----> then @x.md; `-->` ends a note.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "x.md": "X\n"}) == "Text <!----> then X; `-->` ends a note.\n"


def test_an_unclosed_comment_opening_a_later_line_hides_the_imports_after_it(rule_project):
    for text in ("# Rules\nIntro.\n<!-- draft, never closed\nSee @x.md\n", "\n<!-- draft\nSee @x.md\n",
                 "# Rules\n   <!-- draft\nSee @x.md\n"):
        assert claude_body(rule_project, {"CLAUDE.md": text, "x.md": "X\n"}) == text
        assert claude_errors(rule_project) == []


@pytest.mark.parametrize("line", ["X <!-- unclosed, then", "\t<!-- unclosed, then"])
def test_an_unclosed_comment_after_text_or_a_tab_is_text_and_the_imports_after_it_are_read(rule_project, line):
    text = f"# Rules\n{line} @x.md\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "x.md": "X\n"}) == f"# Rules\n{line} X\n"


def test_a_fence_written_inside_a_line_is_no_fence(rule_project):
    text = "Wrap code in ``` fences.\nSee @x.md\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "x.md": "X\n"}) == "Wrap code in ``` fences.\nSee X\n"


def test_a_second_comment_left_open_on_a_closing_line_is_kept_with_the_rest(rule_project):
    text = "<!-- a --> <!-- b, never closed\nUse pnpm.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text}) == " <!-- b, never closed\nUse pnpm.\n"


def test_a_last_comment_without_a_final_newline_goes_with_its_trailing_blanks(rule_project):
    assert claude_body(rule_project, {"CLAUDE.md": "Use pnpm.\n<!-- end -->  "}) == "Use pnpm.\n"


def test_an_unmatched_backtick_run_does_not_hide_the_code_span_after_it(rule_project):
    text = "Type ``` then ` @x.md ` literally.\n"
    assert claude_body(rule_project, {"CLAUDE.md": text, "x.md": "X\n"}) == text
