"""``read_rule`` and ``rule://`` refuse every name that is not a plain reference path
(issue 7, containment): absolute paths, ``..``, NUL bytes, Windows drive and UNC forms and
their percent-encoded disguises — through every entry point: the pure look-up
(``find_reference``), ``Engine.read_rule``, ``Session.read_rule`` (the tool) and
``pi-rules read``. No refused name reads anything: look-ups never touch the filesystem.
"""

from __future__ import annotations

import pytest

from rules_core import Engine, Facts
from rules_hosts.cli import main
from rules_core.lookup import find_reference, refused, unknown_rule
from rules_hosts.session.runtime import Session
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text

SECRET = "TOP SECRET outside the rules directory"
# Each name would reach SECRET (or a system file) if it were resolved as a path.
HOSTILE = {
    "absolute": "/etc/passwd",
    "absolute-secret": "{cwd}/secret.md",
    "backslash-root": "\\etc\\passwd",
    "dotdot": "../../secret.md",
    "dotdot-inner": "sub/../../../secret.md",
    "dotdot-backslash": "..\\..\\secret.md",
    "dotdot-alone": "..",
    "nul": "a.md\0.txt",
    "nul-only": "\0",
    "drive-backslash": "C:\\Windows\\win.ini",
    "drive-slash": "C:/Windows/win.ini",
    "drive-relative": "c:secret.md",
    "unc": "\\\\server\\share\\secret.md",
    "unc-slashes": "//server/share/secret.md",
    "device": "\\\\?\\C:\\secret.md",
    "pct-dotdot": "%2e%2e/%2e%2e/secret.md",
    "pct-dotdot-upper": "%2E%2E/secret.md",
    "pct-slash": "..%2f..%2fsecret.md",
    "pct-backslash": "..%5c..%5csecret.md",
    "pct-double": "%252e%252e%252fsecret.md",
    "pct-triple": "%25252e%25252e/secret.md",
    "pct-absolute": "%2fetc%2fpasswd",
    "pct-nul": "a.md%00.txt",
    "pct-drive": "C%3a%5cWindows",
    "pct-unc": "%5c%5cserver%5cshare",
}
NAMES = sorted(HOSTILE)


@pytest.fixture
def project(rule_project):
    rule_project.write({
        ".pi/rules/a.md": rule_text("Rule A.", globs=["**"], load="on-demand"),
        ".pi/rules/sub/b.md": rule_text("Rule B.", globs=["**"], load="on-demand"),
        "secret.md": SECRET,
    })
    return rule_project


def _name(project, key: str, prefix: str = "") -> str:
    return prefix + HOSTILE[key].replace("{cwd}", str(project.cwd))


def _rules(project):
    return project.engine().discover(str(project.cwd)).rules


def test_plain_references_still_resolve(project):
    rules = _rules(project)
    assert find_reference(rules, "a.md").body == "Rule A."
    assert find_reference(rules, "sub/b.md").body == "Rule B."
    assert find_reference(rules, "rule://b").body == "Rule B."
    assert not refused("100%.md") and not refused("a%20b.md")  # a stray % is just a name


@pytest.mark.parametrize("key", NAMES)
@pytest.mark.parametrize("prefix", ["", "rule://"])
def test_find_reference_refuses(project, key, prefix):
    name = _name(project, key, prefix)
    assert refused(name[len(prefix):])
    assert find_reference(_rules(project), name) is None


@pytest.mark.parametrize("key", NAMES)
@pytest.mark.parametrize("prefix", ["", "rule://"])
def test_engine_read_rule_refuses(project, key, prefix):
    engine = project.engine()
    rules = engine.discover(str(project.cwd)).rules
    assert engine.read_rule(Facts(cwd="."), rules=rules, name=_name(project, key, prefix)).body is None


@pytest.mark.parametrize("key", NAMES)
@pytest.mark.parametrize("prefix", ["", "rule://"])
def test_session_read_rule_tool_refuses(project, key, prefix):
    session = Session(project.engine(), str(project.cwd), trusted=True, host="pi")
    name = _name(project, key, prefix)
    for args in ({"path": name}, name):
        answer = session.read_rule(args)
        assert answer.startswith("Unknown rule: ") and SECRET not in answer and "Rule A" not in answer
        assert "\0" not in answer and answer.count("\n") == (1 if prefix else 0)


@pytest.mark.parametrize("key", NAMES)
@pytest.mark.parametrize("prefix", ["", "rule://"])
def test_cli_read_refuses(project, capsys, monkeypatch, key, prefix):
    monkeypatch.setenv("HOME", str(project.home))
    name = _name(project, key, prefix).replace("\0", "%00")  # argv cannot carry NUL
    assert main(["--cwd", str(project.cwd), "read", name]) == 1
    out = capsys.readouterr().out
    assert out.startswith("Unknown rule: ") and SECRET not in out


def test_a_rule_really_named_like_an_encoding_is_refused_too(project):
    """The price of refusing disguises: a rules file literally under a ``%2e%2e``
    directory cannot be read by path (its ``rule://<id>`` still works)."""
    project.write({".pi/rules/%2e%2e/c.md": rule_text("Rule C.", globs=["**"])})
    rules = _rules(project)
    assert find_reference(rules, "%2e%2e/c.md") is None
    assert find_reference(rules, "rule://c").body == "Rule C."


def test_refusal_text_is_one_line_whatever_the_name(project):
    rules = _rules(project)
    text = unknown_rule(rules, "x\n## forged\x1b[2J")
    assert text == "Unknown rule: x\\x0a## forged\\x1b[2J"
    text = unknown_rule(rules, "rule://x\ny")
    assert text.splitlines() == ["Unknown rule: rule://x\\x0ay", "Available: a, b"]


def test_non_string_names_are_refused(project):
    rules = _rules(project)
    for name in (None, 1, b"a.md", ["a.md"], {"path": "a.md"}, ""):
        assert find_reference(rules, name) is None


def test_refusals_hold_for_an_untrusted_project(project):
    # Refusal depends on the name alone: an untrusted discovery (global rules only) refuses alike.
    engine = Engine(fresh_manager(), home=str(project.home), env={})
    rules = engine.reachable(engine.discover(str(project.cwd), False).rules, Facts(cwd=str(project.cwd)))
    assert all(find_reference(rules, _name(project, key)) is None for key in NAMES)
