"""Rule tests: the cases, their YAML, running and reporting them, and the pytest plugin
(``-p rules_core.rule_tests.pytest_plugin``).

Modules and their public names:

- ``cases``: CASE_KEYS, EVALUATION_EXPECT, STREAM_EXPECT, EXPECT_KEYS, MAX_CASES,
  ErrorExpectation, Expect, RuleCase, CaseFileError, CaseFile, read_case_file, parse_cases
- ``pytest_plugin``: rule_text, make_rules, fresh_manager, RuleProject, rule_project,
  plugin_manager, pytest_ignore_collect, pytest_collect_file, RuleTestFile, RuleTestFailed,
  RuleTestItem, RuleTestError
- ``report``: shown_path, case_lines, error_line, summary, render_text, report_json,
  render_github
- ``run``: DEFAULT_FILE, DEFAULT_DIR, MAX_ENGINES, CaseResult, RunReport, default_case_files,
  project_engine, run_files, run_case_files, CaseRunner
- ``yaml_cases``: MAX_DEPTH, MAP_TAG, SEQ_TAG, Problem, compose, line_of, value_of, pairs_of
"""
