"""No file content makes discovery, evaluation or the CLI raise or hang."""

from __future__ import annotations

import json
import shutil

from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core import Engine, Facts
from rules_hosts.cli import main
from rules_core.rule_tests.pytest_plugin import fresh_manager, rule_text

ALIAS_BOMB = (
    "---\n"
    'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "---\nbody\n"
)

frontmatter_text = st.builds(
    lambda lines, body: "---\n" + "\n".join(lines) + "\n---\n" + body,
    st.lists(st.text(max_size=40), max_size=8),
    st.text(max_size=200),
)
contents = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    frontmatter_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([ALIAS_BOMB.encode(), ("---\nx: " + "[" * 5000 + "\n---\n").encode(),
                     ("---\nx: " + "{a: " * 3000 + "\n---\n").encode(), b"\xef\xbb\xbf---\r\n---\r\n",
                     b"---", b"---\n---", b"\x00\x00---\n", b"---\nversion: !!int x\n---\n",
                     b"---\na: !!float abc\nb: !!bool maybe\n---\n", b"---\na: !!binary '@@'\n---\n",
                     b"---\na: !!python/object:os.system {}\n---\n", b"---\n? [a, b]\n: c\n---\n",
                     b"---\na: !!set {x}\nb: !!omap [x]\n---\n"]),
)


def evaluate_everything(root, home) -> None:
    engine = Engine(fresh_manager(), home=str(home), env={})
    evaluation = engine.evaluate(Facts(cwd=str(root), touched=("a.ts",), prompt="python lint", tools=("edit",)))
    for error in evaluation.errors:
        # Every problem is a rule-file error, never a crash of ours or a plugin's.
        assert "internal error" not in error.message and "crashed" not in error.message, error
    # explain() turns a crash into an "internal error" entry instead of raising, so the
    # result is what must be checked.
    explanation = engine.explain(Facts(cwd=str(root)), "src/a.ts")
    assert explanation.path == "src/a.ts"
    for error in explanation.errors:
        assert "internal error" not in error.message and "crashed" not in error.message, error


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(contents, min_size=1, max_size=3))
def test_any_file_content_yields_rules_or_errors_never_an_exception(tmp_path, data):
    root = tmp_path / "p"
    shutil.rmtree(root, ignore_errors=True)
    rules = root / ".pi" / "rules"
    rules.mkdir(parents=True)
    for number, blob in enumerate(data):
        (rules / f"r{number}.md").write_bytes(blob)
    evaluate_everything(root, tmp_path / "home")


def test_alias_bomb_is_refused_quickly(rule_project):
    rule_project.write({".pi/rules/bomb.md": ALIAS_BOMB})
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [e.kind for e in errors] == ["yaml-syntax"] and "anchors" in errors[0].message


def test_deep_nesting_is_an_error_not_a_crash(rule_project):
    rule_project.write({".pi/rules/deep.md": "---\nx: " + "[" * 10000 + "\n---\n"})
    errors = rule_project.engine().discover(str(rule_project.cwd)).errors
    assert [e.kind for e in errors] == ["yaml-syntax"]


def test_ten_megabyte_body_is_reported_and_cli_survives(rule_project, capsys, monkeypatch):
    rule_project.write({".pi/rules/huge.md": rule_text("x" * (10 * 1024 * 1024), globs=["a"])})
    monkeypatch.setenv("HOME", str(rule_project.home))
    for args in (["list"], ["check"], ["report"], ["render"], ["--json", "report"]):
        code = main(["--cwd", str(rule_project.cwd), *args])
        assert code in (0, 1)
    out = capsys.readouterr().out
    assert "read-failure" in out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=contents, args=st.sampled_from([["list"], ["check"], ["--json", "report"], ["explain", "x"], ["render"]]))
def test_cli_never_raises_on_hostile_files(tmp_path, capsys, monkeypatch, blob, args):
    root = tmp_path / "cli"
    shutil.rmtree(root, ignore_errors=True)
    (root / ".pi" / "rules").mkdir(parents=True)
    (root / ".pi" / "rules" / "x.md").write_bytes(blob)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    code = main(["--cwd", str(root), *args])
    out = capsys.readouterr().out
    assert code in (0, 1)
    if "--json" in args:
        json.loads(out)
    assert "\x1b" not in out
