"""The exists scanner: the first file per query, exactly as brute force and git see it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rules_core.globs.matching import GlobError, compile_glob
from rules_plugins.scanner import pi_rules_scan, present_files

DATA = Path(__file__).parent.parent / "data" / "picomatch-dot.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines()]
PATTERNS = sorted({r["pattern"] for r in ROWS})
PATHS = sorted({r["path"] for r in ROWS if r["path"] and not r["path"].startswith(("/", ".."))
                and ".." not in r["path"].split("/")})
# Names around '/' in code-point order ('-' < '.' < '/' < '0'), plus the never-scanned ones.
NAMES = ["a", "a-b", "a.txt", "a0", "b.ts", ".a", "src", "docs", "x.md", "A", "a b",
         ".git", "node_modules"]
SKIPPED = {".git", "node_modules"}


def make_tree(root: Path, files: list[str]) -> None:
    for rel in files:
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.write_text("x")
        except (OSError, ValueError):
            continue  # a path that is a file prefix of another one, etc.


def real_files(root: Path) -> list[str]:
    """Every regular file below root outside .git/node_modules: the reference's pool."""
    found = []
    for directory, dirs, files in os.walk(root):  # never follows symlinked directories
        dirs[:] = [d for d in dirs if d not in SKIPPED]
        rel = Path(directory).relative_to(root).as_posix()
        found += [n if rel == "." else f"{rel}/{n}" for n in files
                  if n not in SKIPPED and (Path(directory) / n).is_file()]
    return sorted(found)


def _usable(text: str):
    if text.startswith(("/", "../")):
        return None
    try:
        return compile_glob(text)
    except GlobError:
        return None


def brute_force(files: list[str], query: tuple[str, ...]) -> str | None:
    positives = [g for t in query if not t.startswith("!") if (g := _usable(t))]
    negations = [g for t in query if t.startswith("!") if (g := _usable(t[1:]))]
    return next((f for f in sorted(files) if any(p.match(f) for p in positives)
                 and not any(n.match(f) for n in negations)), None)


generated_path = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join)
EXTRA_GLOBS = ["**", "src/**", "**/*.ts", "a*", "/a", "../a", "**/*.{ts,txt}", "**/a{,-b}", "**/.a*",
               "a*/b*", "*.{a.txt,b.ts}", "**/a.{txt,md}", "src/*.{md,x.md}", "a\\{a,b}", "a/.", "*/."]
glob_text = st.sampled_from(PATTERNS) | st.sampled_from(EXTRA_GLOBS)
query = st.lists(st.tuples(st.booleans(), glob_text), min_size=1, max_size=4).map(
    lambda gs: tuple(("!" + g) if neg else g for neg, g in gs))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.sampled_from(PATHS) | generated_path, max_size=25, unique=True),
       queries=st.lists(query, min_size=1, max_size=8))
def test_first_match_equals_brute_force(tmp_path, files, queries):
    root = tmp_path / "tree"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    make_tree(root, files)
    pool = real_files(root)
    assert pi_rules_scan(str(root), queries, None) == {q: brute_force(pool, q) for q in queries}
    assert present_files(str(root), None) == pool  # same pool, already in sorted order


def test_every_picomatch_row_through_the_scanner(tmp_path):
    # The prefix/tail/head shortcuts must never hide a match: for every path of the data
    # file, a tree holding just that file answers each pattern exactly as the glob does.
    # (Shortcuts can only lose matches, so each path is asked about every pattern that
    # matches it, plus the patterns its data rows pair it with.)
    globs = [(p, g) for p in PATTERNS + EXTRA_GLOBS if (g := _usable(p))]
    paired: dict[str, set[str]] = {}
    for row in ROWS:
        paired.setdefault(row["path"], set()).add(row["pattern"])
    for i, path in enumerate(PATHS):
        root = tmp_path / str(i)
        root.mkdir()
        make_tree(root, [path])
        if real_files(root) != [path]:
            continue  # not a path a file system can hold as written (e.g. `a/./b`)
        queries = [(p,) for p in sorted(paired[path] | {p for p, g in globs if g.match(path)})]
        assert pi_rules_scan(str(root), queries, None) == {q: brute_force([path], q) for q in queries}


def test_walk_order_is_full_path_code_point_order(tmp_path):
    # A plain name sort would list directory `a` before `a.txt`, but "a.txt" < "a/b".
    make_tree(tmp_path, ["a/b", "a.txt", "a-b", "a0", "a/.c", "b/a.txt/x", "b/a.txt.y"])
    assert present_files(str(tmp_path), None) == sorted(present_files(str(tmp_path), None))
    scan = pi_rules_scan(str(tmp_path), [("a.txt", "a/b"), ("a/b", "a0"), ("**",), ("b/**",)], None)
    assert scan == {("a.txt", "a/b"): "a.txt", ("a/b", "a0"): "a/b",
                    ("**",): "a-b", ("b/**",): "b/a.txt.y"}


def test_query_edge_cases(tmp_path):
    make_tree(tmp_path, ["src", "docs/a.md"])  # `src` is a FILE: `src/**` matches it
    queries = [("src/**",), ("!docs/**",), ("",), ("/abs/**", "../docs/a.md"), ("docs/*.md", "docs/*.md"),
               ("**/*.md", "!docs/a.md"), ("{",), ("**", "!**")]
    assert pi_rules_scan(str(tmp_path), queries, None) == {
        ("src/**",): "src", ("!docs/**",): None, ("",): None, ("/abs/**", "../docs/a.md"): None,
        ("docs/*.md", "docs/*.md"): "docs/a.md", ("**/*.md", "!docs/a.md"): None,
        ("{",): brute_force(["docs/a.md", "src"], ("{",)), ("**", "!**"): None}
    # picomatch also matches a path equal to the pattern text: `x/*.{a,b}` finds that file
    make_tree(tmp_path, ["x/*.{a,b}", "x/.env.local"])
    assert pi_rules_scan(str(tmp_path), [("x/*.{a,b}",), ("x/.env*",), ("**/*.{a,b}",)], None) == {
        ("x/*.{a,b}",): "x/*.{a,b}", ("x/.env*",): "x/.env.local", ("**/*.{a,b}",): None}
    assert pi_rules_scan(str(tmp_path / "missing"), [("**",)], None) == {("**",): None}
    assert pi_rules_scan(str(tmp_path / "src"), [("**",)], None) == {("**",): None}
    assert pi_rules_scan(str(tmp_path), [], None) == {}


def test_symlinks_fifos_git_and_node_modules(tmp_path):
    make_tree(tmp_path, ["outside/e.ts", "t/real.md", ".git/b.ts", "node_modules/c.ts",
                         "x/node_modules/f.ts", "x/.git/g.ts", "y/.git", "y/node_modules"])
    (tmp_path / "t/link").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "t/loop").symlink_to(tmp_path / "t", target_is_directory=True)
    (tmp_path / "t/file.ts").symlink_to(tmp_path / "t/real.md")  # a symlinked FILE counts
    (tmp_path / "t/broken.ts").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "t/fifo.ts")
    scan = pi_rules_scan(str(tmp_path / "t"), [("**/*.ts",), ("link/**",), ("loop/**",), ("fifo.ts",)], None)
    assert scan == {("**/*.ts",): "file.ts", ("link/**",): None, ("loop/**",): None, ("fifo.ts",): None}
    # `.git`/`node_modules` are skipped at any depth, as directories and as files
    assert pi_rules_scan(str(tmp_path), [("**/*.ts", "!outside/**", "!t/**"), ("y/**",)], None) == {
        ("**/*.ts", "!outside/**", "!t/**"): None, ("y/**",): None}
    assert present_files(str(tmp_path), None) == ["outside/e.ts", "t/file.ts", "t/real.md"]


class ScandirLog:
    """Records every directory the scanner lists."""

    def __init__(self, monkeypatch, root: Path) -> None:
        self.root, self.listed = root, []
        real = os.scandir

        def scandir(path="."):
            self.listed.append(Path(path).relative_to(root).as_posix())
            return real(path)

        monkeypatch.setattr(os, "scandir", scandir)


def test_walk_stops_once_every_query_is_answered(tmp_path, monkeypatch):
    make_tree(tmp_path, ["a/x.ts", "a/y.md", "b/z.ts", "c/w.md"] + [f"d{i}/f.ts" for i in range(20)])
    log = ScandirLog(monkeypatch, tmp_path)
    scan = pi_rules_scan(str(tmp_path), [("**/*.ts",), ("**/*.md", "!a/**")], None)
    assert scan == {("**/*.ts",): "a/x.ts", ("**/*.md", "!a/**"): "c/w.md"}
    assert log.listed == [".", "a", "b", "c"]  # nothing after c/w.md, no d*
    log.listed.clear()
    assert pi_rules_scan(str(tmp_path), [("**/*.ts",)], None) == {("**/*.ts",): "a/x.ts"}
    assert log.listed == [".", "a"]
    log.listed.clear()
    assert pi_rules_scan(str(tmp_path), [("!**",), ("/x",)], None) == {("!**",): None, ("/x",): None}
    assert log.listed == []  # nothing to look for: not even the root is listed


def test_unlistable_and_vanished_directories_are_skipped(tmp_path, monkeypatch):
    make_tree(tmp_path, ["a/x.md", "b/x.ts", "c/y.ts", "d/z.ts"])
    real = os.scandir
    faults = {"b": PermissionError, "c": FileNotFoundError}

    def scandir(path="."):
        if (fault := faults.get(Path(path).name)) is not None:
            raise fault(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert pi_rules_scan(str(tmp_path), [("**/*.ts",), ("**/*.md",)], None) == {
        ("**/*.ts",): "d/z.ts", ("**/*.md",): "a/x.md"}
    faults[tmp_path.name] = PermissionError  # the root itself
    assert pi_rules_scan(str(tmp_path), [("**",)], str(tmp_path)) == {("**",): None}


def test_literal_prefixes_prune_the_walk(tmp_path, monkeypatch):
    make_tree(tmp_path, ["docs/a.ts", "src/a/b.js", "src/c.md", "srcx/d.ts", "lib/x/e.ts", "top.ts"])
    log = ScandirLog(monkeypatch, tmp_path)
    assert pi_rules_scan(str(tmp_path), [("src/**/*.ts",), ("lib/x/*.md",)], None) == {
        ("src/**/*.ts",): None, ("lib/x/*.md",): None}
    assert sorted(log.listed) == [".", "lib", "lib/x", "src", "src/a"]
    # Once a prefix-free query is answered, the rest of the tree is pruned again.
    log.listed.clear()
    pi_rules_scan(str(tmp_path), [("**/a.ts",), ("src/**/*.ts",)], None)
    assert log.listed == [".", "docs", "src", "src/a"]


# --- git's ignore rules, checked against git itself --------------------------------------

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git_env(home: Path) -> dict[str, str]:
    # No global/system config: core.excludesFile must not leak into the oracle.
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git_untracked(cwd: Path, home: Path) -> list[str]:
    out = subprocess.run([GIT, "ls-files", "--others", "--exclude-standard", "-z"], cwd=cwd,
                         env=git_env(home), check=True, capture_output=True).stdout
    return sorted(os.fsdecode(p) for p in out.split(b"\0") if p)


def git_repo(tmp_path: Path, files: list[str], ignores: dict[str, str], exclude: str = "") -> Path:
    repo = tmp_path / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir()
    subprocess.run([GIT, "init", "-q", str(repo)], env=git_env(tmp_path), check=True)
    make_tree(repo, files)
    for directory, text in ignores.items():
        try:
            (repo / directory).mkdir(parents=True, exist_ok=True)
            (repo / directory / ".gitignore").write_text(text)
        except OSError:
            continue  # that directory is a file in this tree
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/exclude").write_text(exclude)
    return repo


def assert_same_as_git(tmp_path: Path, repo: Path, sub: str = "") -> list[str]:
    root = repo / sub if sub else repo
    ours = present_files(str(root), str(repo))
    assert ours == git_untracked(root, tmp_path)
    # The hook answers from the same walk: one single-file query per file git lists.
    files = real_files(root)
    answers = pi_rules_scan(str(root), [(f,) for f in files], str(repo))
    assert sorted(f for (f,), hit in answers.items() if hit) == ours
    return ours


EXPLICIT = {
    "": "# comment\n\n*.log\n!keep.log\nbuild/\n/top\n**/tmp\n  \nspace \n\\#hash\n"
        "docs/**\n!docs/keep\nlib/*/gen\nfoo/**/\n*.bak\r\n\\!bang\n[unclosed\n",
    "src": "!*.log\n/local\ndeep/\n",
    "src/build": "!keep.txt\n",                 # build/ is ignored above: cannot re-include
    "vendor": "*\n!*/\n!*.py\n",
    "a": "b/\n!b/c\n",
}
EXPLICIT_FILES = [
    "x.log", "keep.log", "build/out.txt", "build/keep.txt", "top", "src/top", "tmp/a", "a/tmp/b",
    "space", "space ", "#hash", "docs/a", "docs/keep", "docs/sub/keep", "lib/a/gen", "lib/a/b/gen",
    "foo/x", "foo/bar/y", "z.bak", "!bang", "[unclosed", "src/x.log", "src/local", "src/a/local",
    "src/deep/f", "src/build/keep.txt", "src/build/o", "vendor/m.py", "vendor/m.c",
    "vendor/d/n.py", "vendor/d/n.c", "a/b/c", "a/b/d", "a/c", "ok.txt",
]


@needs_git
def test_gitignore_matches_git_on_explicit_cases(tmp_path):
    repo = git_repo(tmp_path, EXPLICIT_FILES, EXPLICIT, exclude="*.c\n!vendor/m.c\nok.txt\n")
    ours = assert_same_as_git(tmp_path, repo)
    for present in ["keep.log", "src/top", "space ", "docs/keep", "lib/a/b/gen", "foo/x",
                    "src/x.log", "src/a/local", "vendor/m.py", "vendor/d/n.py", "a/c", "[unclosed"]:
        assert present in ours
    for absent in ["x.log", "build/keep.txt", "top", "tmp/a", "a/tmp/b", "space", "#hash",
                   "docs/sub/keep", "lib/a/gen", "foo/bar/y", "z.bak", "src/local", "src/deep/f",
                   "src/build/keep.txt", "vendor/m.c", "vendor/d/n.c", "a/b/c", "ok.txt", "!bang"]:
        assert absent not in ours
    # root below git_root: the repository's root .gitignore and info/exclude still apply
    assert_same_as_git(tmp_path, repo, "src")
    assert_same_as_git(tmp_path, repo, "vendor/d")
    # root inside an ignored directory: git lists nothing, neither do we
    assert assert_same_as_git(tmp_path, repo, "src/build") == []
    assert pi_rules_scan(str(repo / "src/build"), [("**",)], str(repo)) == {("**",): None}


@needs_git
def test_gitignore_sources_and_what_is_never_read(tmp_path, monkeypatch):
    repo = git_repo(tmp_path, ["a.ts", "b.md", "sub/c.ts"], {"": "*.md\n"}, exclude="sub/\n")
    (tmp_path / ".gitignore").write_text("*\n")  # above git_root: never read
    (repo / "real").write_text("*.ts\n")
    (repo / "sub/.gitignore").symlink_to(repo / "real")  # git does not follow it either
    assert assert_same_as_git(tmp_path, repo) == [".gitignore", "a.ts", "real"]
    opened: list[str] = []
    for name in ("open", "lstat", "stat", "scandir"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda p, *a, _real=real, **k: opened.append(os.fspath(p)) or _real(p, *a, **k))
    assert present_files(str(repo / "sub"), str(repo)) == []
    assert opened and all(p.startswith(str(repo)) for p in opened)
    monkeypatch.undo()
    # without git_root no rule applies at all
    assert present_files(str(repo), None) == [".gitignore", "a.ts", "b.md", "real", "sub/.gitignore", "sub/c.ts"]
    # a `.git` FILE (worktree pointer): info/exclude is not looked for
    shutil.rmtree(repo / ".git")
    (repo / ".git").write_text("gitdir: /elsewhere\n")
    assert present_files(str(repo), str(repo)) == [".gitignore", "a.ts", "real", "sub/.gitignore", "sub/c.ts"]


LINES = ["*.log", "!keep.log", "b/", "!b/", "/a", "a/", "!a/b", "**/c", "!c", "a/**", "!a/**/",
         "*", "!*/", "!*.txt", "x*/", "/b/*", "!/b/keep.log", "**/", "d/**/e", "# c", "", "c ",
         "\\#d", "?", "[ab]", "!d", "b/c/", "*.txt", "!x/", "a/**/b", "**/b/", "!**/keep.log",
         "/*.log", "*/c", "a/*/", "!/a/b/"]
SEGMENTS = ["a", "b", "c", "d", "e", "x1", "keep.log", "f.log", "g.txt", "#d"]


@needs_git
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join),
                      min_size=1, max_size=20, unique=True),
       ignores=st.dictionaries(st.sampled_from(["", "a", "b", "a/b", "c", "d/x1"]),
                               st.lists(st.sampled_from(LINES), max_size=6).map("\n".join), max_size=4),
       exclude=st.lists(st.sampled_from(LINES), max_size=3).map("\n".join),
       sub=st.sampled_from(["", "a", "b", "a/b"]))
def test_gitignore_matches_git_on_random_repos(tmp_path, files, ignores, exclude, sub):
    repo = git_repo(tmp_path, files, ignores, exclude)
    if (repo / sub).is_dir():
        assert_same_as_git(tmp_path, repo, sub)
