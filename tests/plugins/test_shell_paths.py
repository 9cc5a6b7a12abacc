"""The ``shell-paths`` plugin: every form of docs/shell.md's table, what is left out, and a
property test over generated commands (never a path outside the project, never a crash)."""

from __future__ import annotations

import json
import os
import posixpath
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rules_core.rule_tests.pytest_plugin import rule_text
from rules_plugins.shell_paths import MAX_PATHS, pi_rules_capture_paths, shell_paths
from suite_helpers import cli_process

# One row per form in the table (issue 27's list and the rest of docs/shell.md).
TABLE = [
    # redirections
    ("echo hi > out.txt", ["out.txt"]),
    ("echo hi >> log/a.log 2>&1", ["log/a.log"]),
    ("sort < in.txt >| out.txt", ["in.txt", "out.txt"]),
    ("make &> build.log", ["build.log"]),
    ("make &>> build.log", ["build.log"]),
    ("make >& build.log", ["build.log"]),
    ("exec 3<> fifo.txt", ["fifo.txt"]),
    ("cat>out.txt<in.txt", ["out.txt", "in.txt"]),
    ("cat > src/a.ts <<EOF\nconst a = 'it''s';\nEOF", ["src/a.ts"]),
    ("cat > src/a.ts <<-'END'\n\tdon't\n\tEND\ncat b.ts", ["src/a.ts", "b.ts"]),
    ("grep x <<< \"a b\"", []),
    ("cmd 2>/dev/null", []),
    # readers
    ("cat src/a.ts src/b.ts", ["src/a.ts", "src/b.ts"]),
    ("head -n 20 README.md", ["README.md"]),
    ("head -5 README.md", ["README.md"]),
    ("tail -f -n 100 logs/app.log", ["logs/app.log"]),
    ("less docs/x.md", ["docs/x.md"]),
    ("more docs/x.md", ["docs/x.md"]),
    ("bat src/a.rs", ["src/a.rs"]),
    ("wc -l src/a.py", ["src/a.py"]),
    ("nl -ba src/a.py", ["src/a.py"]),
    ("cat -- -weird.txt", ["-weird.txt"]),
    # sed
    ("sed -i 's/a/b/g' src/x.ts lib/y.ts", ["src/x.ts", "lib/y.ts"]),
    ("sed -n '1,20p' src/x.ts", ["src/x.ts"]),
    ("sed -e 's/a/b/' -e 's/c/d/' a.txt", ["a.txt"]),
    ("sed -i.bak -f fix.sed a.txt", ["a.txt"]),
    # awk
    ("awk '{print $1}' data.csv", ["data.csv"]),
    ("awk -F, -v n=1 '{print $n}' data.csv", ["data.csv"]),
    ("awk -f prog.awk x=1 data.csv", ["data.csv"]),
    ("gawk 'NR==1' a.txt", ["a.txt"]),
    # grep, rg
    ("grep -rn TODO src/ docs/a.md", ["src", "docs/a.md"]),
    ("grep -n \"a|b\" src/x.ts 2>/dev/null | head -3", ["src/x.ts"]),
    ("grep -e foo -e bar a.txt b.txt", ["a.txt", "b.txt"]),
    ("egrep 'x+' a.txt", ["a.txt"]),
    ("fgrep -f words.txt a.txt", ["a.txt"]),
    ("rg -n 'fn main' src", ["src"]),
    ("rg -g '*.ts' -t ts needle packages/web", ["packages/web"]),
    ("rg --type rust foo crates/core", ["crates/core"]),
    # writers
    ("cp src/a.ts src/b.ts", ["src/a.ts", "src/b.ts"]),
    ("cp -r assets/ dist/", ["assets", "dist"]),
    ("mv -t dest a.txt b.txt", ["dest", "a.txt", "b.txt"]),
    ("mv old.py new.py", ["old.py", "new.py"]),
    ("touch src/new.ts", ["src/new.ts"]),
    ("touch -r ref.txt a.txt", ["ref.txt", "a.txt"]),
    ("echo x | tee -a notes.md other.md", ["notes.md", "other.md"]),
    # git
    ("git diff -- src/a.ts", ["src/a.ts"]),
    ("git diff HEAD~1 --stat -- src/a.ts docs/", ["src/a.ts", "docs"]),
    ("git diff HEAD~1 src/a.ts", []),
    ("git show HEAD:src/a.ts", []),
    ("git show abc123 -- src/a.ts", ["src/a.ts"]),
    ("git add src/a.ts README.md", ["src/a.ts", "README.md"]),
    ("git add -A -- pkg/", ["pkg"]),
    ("git add -p src/a.ts", ["src/a.ts"]),
    ("git add .", []),
    ("git add ':!vendor'", []),
    ("git rm --cached old.txt", ["old.txt"]),
    ("git restore -s HEAD~2 src/a.ts", ["src/a.ts"]),
    ("git log -p -- src/a.ts", ["src/a.ts"]),
    ("git checkout main -- src/a.ts", ["src/a.ts"]),
    ("git --no-pager diff -- a.ts", ["a.ts"]),
    ("git -C other diff -- a.ts", []),
    ("git status", []),
    # interpreters
    ("python tools/x.py --in data.csv", ["tools/x.py"]),
    ("python3 -u tools/x.py", ["tools/x.py"]),
    ("python3.12 -W ignore tools/x.py", ["tools/x.py"]),
    ("python -m pytest tests/x.py", []),
    ("python -c 'open(\"a\")'", []),
    ("node scripts/build.js --prod", ["scripts/build.js"]),
    ("node -r ts-node/register src/main.ts", ["src/main.ts"]),
    ("node -e 'x'", []),
    ("bash scripts/setup.sh arg", ["scripts/setup.sh"]),
    ("sh -x ci.sh", ["ci.sh"]),
    ("bash -c 'cat a.ts'", []),
    ("./tools/run.sh --fast", ["tools/run.sh"]),
    # cd prefixes and subshells
    ("cd pkg && cat src/a.ts", ["pkg/src/a.ts"]),
    ("cd pkg; sed -i s/a/b/ x.ts; cd .. && cat y.ts", ["pkg/x.ts", "y.ts"]),
    ("cd packages/web && npm test && cat out.txt", ["packages/web/out.txt"]),
    ("pushd lib && cat a.py", ["lib/a.py"]),
    ("(cd sub && cat a) && cat b", ["sub/a", "b"]),
    ("cd pkg/ && cd src && touch a.ts", ["pkg/src/a.ts"]),
    # wrappers and assignments
    ("FOO=1 BAR=2 cat a.txt", ["a.txt"]),
    ("sudo cat a.txt", ["a.txt"]),
    ("env X=1 python tools/x.py", ["tools/x.py"]),
    ("time node build.js", ["build.js"]),
    ("sudo -u root cat a.txt", []),
    # quoting, escapes, comments
    ("cat 'a b.txt' \"c d.txt\" e\\ f.txt", ["a b.txt", "c d.txt", "e f.txt"]),
    ("cat a#b.txt # c.txt", ["a#b.txt"]),
    ("echo '>' foo", []),
    ("echo '; cat x' > y", ["y"]),
    ("cat ./src/../src/a.ts", ["src/a.ts"]),
]

# Unsure or outside: nothing.
LEFT_OUT = [
    "cat /etc/passwd", "cat ../secret", "cat ~/x", "cat $HOME/x", "cat ${X}/a", "cat `pwd`/a", "cat $(pwd)/a",
    "cat src/*.ts", "cat src/{a,b}.ts", "cat src/[ab].ts", "cd .. && cat a", "cd && cat a", "cd - && cat a",
    "cd /tmp && cat a", "cd $X && cat a", "cd a b && cat c", "(cd a) ; ) cat b", "cat 'unclosed", "cat a\\",
    "npm test src/a.ts", "ls src", "rm -rf src", "echo src/a.ts", "make -C sub", "cat a/../../b",
    "cat " + "a" * 40_000,
]


@pytest.mark.parametrize(("command", "paths"), TABLE, ids=[c[:40] for c, _ in TABLE])
def test_every_form(command: str, paths: list[str]) -> None:
    assert list(shell_paths(command)) == paths


@pytest.mark.parametrize("command", LEFT_OUT, ids=[c[:40] for c in LEFT_OUT])
def test_unsure_or_outside_is_left_out(command: str) -> None:
    assert shell_paths(command) == ()


def test_the_hook_answers_for_shell_tools_only() -> None:
    assert pi_rules_capture_paths("pi", "bash", {"command": "cat a.ts"}) == ["a.ts"]
    assert pi_rules_capture_paths("claude-code", "Bash", {"command": "cat a.ts", "description": "x"}) == ["a.ts"]
    assert pi_rules_capture_paths("pi", "read", {"command": "cat a.ts"}) == []
    assert pi_rules_capture_paths("pi", "bash", {"command": ["cat", "a.ts"]}) == []
    assert pi_rules_capture_paths("pi", "bash", "cat a.ts") == []


def test_many_paths_are_capped() -> None:
    assert len(shell_paths("cat " + " ".join(f"f{i}.txt" for i in range(500)))) == MAX_PATHS


# -- property: never outside, never a crash ---------------------------------------------

_words = st.sampled_from([
    "cat", "sed", "-i", "-n", "grep", "rg", "-e", "awk", "-f", "git", "add", "diff", "--", "python", "node", "bash",
    "cd", "pushd", "cp", "mv", "tee", "touch", "head", "-n", "5", "sudo", "env", "X=1", "..", "../..", "/", "/etc",
    "~", "$HOME", "a", "b/c", "./d", "../e", "f/../../g", "-", "&&", "||", ";", "|", "(", ")", ">", ">>", "<", "2>&1",
    "<<EOF", "EOF", "\n", "'q r'", '"s t"', "\\", "#", "*", "{a,b}", "`x`", "$(y)", "&", "<<<", "-C",
])
_commands = st.lists(_words | st.text(max_size=12), max_size=30).map(" ".join) | st.text(max_size=200)


@settings(max_examples=600, deadline=None)
@given(command=_commands, depth=st.integers(min_value=0, max_value=3))
def test_generated_commands_never_leave_the_project(command: str, depth: int) -> None:
    paths = shell_paths(command)
    assert len(paths) <= MAX_PATHS
    cwd = "/project" + "/sub" * depth
    for path in paths:
        assert isinstance(path, str) and path and not path.startswith("/")
        joined = posixpath.normpath(posixpath.join(cwd, path))
        assert joined.startswith(cwd + "/"), (command, path)


# -- the CLI: --shell ------------------------------------------------------------------


def _cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return cli_process(*argv, cwd=cwd, env={**os.environ, "HOME": str(cwd), "XDG_CACHE_HOME": str(cwd / ".cache-test")})


def test_shell_option_activates_and_reports(tmp_path: Path) -> None:
    rules = tmp_path / ".pi" / "rules"
    rules.mkdir(parents=True)
    (rules / "ts.md").write_text(rule_text("Use strict TypeScript.", description="TypeScript", globs=["src/**/*.ts"]))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    plain = json.loads(_cli(tmp_path, "report", "--json").stdout)
    assert plain["shellTouched"] == [] and [o["status"] for o in plain["rules"]] == ["inactive"]
    done = _cli(tmp_path, "report", "--json", "--shell", "cat > src/a.ts <<EOF\nx\nEOF", "--shell", "cat /etc/x")
    report = json.loads(done.stdout)
    assert report["shellTouched"] == ["src/a.ts"]
    assert [o["status"] for o in report["rules"]] == ["active"]
    text = _cli(tmp_path, "report", "--shell", "cd src && touch b.ts").stdout
    assert "shell-touched: src/b.ts" in text
    assert "## ts" in _cli(tmp_path, "render", "--shell", "sed -i s/a/b/ src/c.ts").stdout
    explained = _cli(tmp_path, "explain", "src/d.ts", "--shell", "git add src/d.ts")
    assert explained.returncode == 0 and "ts" in explained.stdout
