"""PI_RULES_IMPORT selects importers by name (RULE-SPEC §1, CONTRACT §2)."""

from __future__ import annotations

import pytest

from rules_core.discovery.imports import select_importers
from rules_core.model import ImporterInfo

DECLARED = [ImporterInfo("claude"), ImporterInfo("copilot"), ImporterInfo("extra", default=False)]


@pytest.mark.parametrize("value", ["none", " NONE ", "None\n", "\tnone"])
def test_none_trimmed_any_case_disables_every_importer(value):
    assert select_importers(value, DECLARED) == (frozenset(), ())


@pytest.mark.parametrize("value", [None, "", "  ", "all", "ALL"])
def test_absent_empty_or_all_enable_the_defaults(value):
    assert select_importers(value, DECLARED) == (frozenset({"claude", "copilot"}), ())


def test_a_comma_list_enables_exactly_those_including_off_by_default_ones():
    assert select_importers("copilot, extra", DECLARED) == (frozenset({"copilot", "extra"}), ())


def test_unknown_names_are_an_error_and_the_defaults_stay_on():
    enabled, errors = select_importers("copilot,cursr", DECLARED)
    assert enabled == frozenset({"claude", "copilot"})
    assert [(e.kind, e.path) for e in errors] == [("invalid-value", "PI_RULES_IMPORT")]
    assert "unknown importer 'cursr'" in errors[0].message and "claude, copilot, extra" in errors[0].message


def test_unknown_importer_name_is_shown_by_check(rule_project, capsys, monkeypatch):
    from rules_hosts.cli import main

    monkeypatch.setenv("HOME", str(rule_project.home))
    monkeypatch.setenv("PI_RULES_IMPORT", "nonsense")
    assert main(["--cwd", str(rule_project.cwd), "check"]) == 1
    assert capsys.readouterr().out.startswith("invalid-value PI_RULES_IMPORT: unknown importer 'nonsense'")
