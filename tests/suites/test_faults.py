"""Filesystem faults (issue 7, item 2): one test per fault, each asserting what the user
sees — the rule loads, or an error names the file and the fix — that the engine never
raises into its host, and that nothing outside the git root is opened.

Already covered elsewhere and not repeated here: a plain FIFO and a dangling link in
``.pi/rules`` and a file deleted before reading by a plugin source (test_discovery.py), a
2 MiB rule (test_discovery.py, test_hostile.py), unlistable importer directories by
monkeypatched ``os.scandir`` (test_import_*.py), a rules directory that is a symlink loop
(test_discovery_cache.py).

Permission bits do not stop root, and these tests run as root: the permission tests drop
privileges for real in a forked child (``os.setuid`` to ``nobody``) and, in-process,
monkeypatch ``os.open``/``os.scandir`` to raise ``PermissionError`` as ``chmod 0`` would.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from rules_core import Engine, Facts
from rules_hosts.cli import main
from rules_core.discovery.reading import MAX_RULE_BYTES
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

RULE = rule_text("Follow the rule.", globs=["src/**"])
ALWAYS = rule_text("Always.", alwaysApply=True)
SECRET = rule_text("SECRET BODY", alwaysApply=True)

# -- helpers ---------------------------------------------------------------------------

_opened: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], (str, bytes)):
        _opened.append(os.path.abspath(os.fsdecode(args[0])))


sys.addaudithook(_audit)  # once per test session: this module is imported once


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every path passed to ``open``/``os.open`` while the test runs."""
    global _opened
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    """A git repository with a secret rule-shaped file next to it, outside its root."""
    root = tmp_path / "repo"
    outside = tmp_path / "outside"
    make_rules(root, {".pi/rules/keep.md": ALWAYS, "shared/inside.md": RULE})
    make_rules(outside, {"secret.md": SECRET, "rules/s.md": SECRET})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    return {"root": root, "outside": outside, "home": home, "rules": root / ".pi" / "rules"}


def discover(cwd: Path, home: Path) -> Any:
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    return engine.discover(str(cwd))


def evaluate(cwd: Path, home: Path) -> Any:
    engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
    return engine.evaluate(Facts(cwd=str(cwd), touched=("src/a.ts",)))


def rows(discovery: Any) -> list[tuple[str, str]]:
    return [(e.kind, os.path.basename(e.path)) for e in discovery.errors]


def ids(discovery: Any) -> list[str]:
    return [r.id for r in discovery.rules]


def never_opened_outside(opened: list[str], *places: Path) -> None:
    for path in opened:
        assert not any(path == str(p) or path.startswith(str(p) + os.sep) for p in places), path


# -- permission denied -----------------------------------------------------------------


def _as_nobody(work: Callable[[], Any]) -> Any:
    """Run ``work`` in a forked child that dropped root for ``nobody``; its JSON result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            payload = json.dumps(work()).encode()
            os.write(write_end, payload)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_permission_denied_directory_and_file_for_real():
    """chmod 000 on a rules subdirectory and on a rule file, read as an unprivileged user."""
    base = Path(tempfile.mkdtemp(prefix="pi-rules-perm-", dir="/tmp"))
    try:
        project, home = base / "p", base / "h"
        make_rules(project, {".pi/rules/ok.md": ALWAYS, ".pi/rules/locked.md": ALWAYS,
                             ".pi/rules/closed/inner.md": ALWAYS})
        home.mkdir()
        for path in (base, project, project / ".pi", project / ".pi/rules", home):
            path.chmod(0o755)
        (project / ".pi/rules/ok.md").chmod(0o644)
        (project / ".pi/rules/locked.md").chmod(0)
        (project / ".pi/rules/closed").chmod(0)
        engine = Engine(fresh_manager(), home=str(home), env={"HOME": str(home)})
        engine.discover(str(home))  # every lazy import happens while we may still read them

        def work() -> Any:
            found = engine.discover(str(project))
            return {"ids": ids(found), "errors": [[e.kind, e.path, e.message] for e in found.errors]}

        result = _as_nobody(work) if os.geteuid() == 0 else work()
    finally:
        for path in (base / "p/.pi/rules/locked.md", base / "p/.pi/rules/closed"):
            if path.exists():
                path.chmod(0o755)
        shutil.rmtree(base)
    assert result["ids"] == ["ok"]
    by_name = {os.path.basename(path): (kind, message) for kind, path, message in result["errors"]}
    assert by_name["closed"][0] == "source-unreadable"
    assert "Permission denied" in by_name["closed"][1] and "fix its permissions" in by_name["closed"][1]
    assert by_name["locked.md"] == ("read-failure", "Permission denied; make it readable (chmod a+r) or remove it")


def test_permission_denied_file_simulated(rule_project, monkeypatch):
    """As root, ``os.open`` is patched to fail as ``chmod 0`` makes it fail for a user."""
    rule_project.write({".pi/rules/a.md": ALWAYS, ".pi/rules/locked.md": ALWAYS})
    real_open = os.open

    def deny(path, flags, *args, **kwargs):
        if os.fspath(path).endswith("locked.md"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(found) == ["a"]
    assert [(e.kind, e.message) for e in found.errors] == [
        ("read-failure", "Permission denied; make it readable (chmod a+r) or remove it")
    ]


def test_permission_denied_directory_simulated(rule_project, monkeypatch):
    rules = rule_project.write({".pi/rules/a.md": ALWAYS, ".pi/rules/sub/b.md": ALWAYS}) / ".pi/rules"
    real_scandir = os.scandir

    def deny(path="."):
        if os.fspath(path) == str(rules / "sub"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", deny)
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(found) == ["a"]
    assert rows(found) == [("source-unreadable", "sub")]
    assert "fix its permissions or remove it" in found.errors[0].message


# -- changes between listing and reading ----------------------------------------------


def _swap_before(monkeypatch, name: str, syscall: str, swap: Callable[[Path], None]) -> list[int]:
    """Run ``swap(path)`` once, right before ``os.<syscall>`` first touches ``name``."""
    real = getattr(os, syscall)
    done: list[int] = []

    def hooked(path, *args, **kwargs):
        if not done and os.fspath(path).endswith(os.sep + name):
            done.append(1)
            swap(Path(os.fspath(path)))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, syscall, hooked)
    return done


@pytest.mark.parametrize("syscall", ["lstat", "open"])
def test_file_vanishing_between_list_and_read_is_skipped_silently(rule_project, monkeypatch, syscall):
    """``lstat``: gone before it is resolved; ``open``: gone after resolving, before opening."""
    rule_project.write({".pi/rules/a.md": ALWAYS, ".pi/rules/gone.md": ALWAYS})
    engine = rule_project.engine()
    done = _swap_before(monkeypatch, "gone.md", syscall, lambda p: p.unlink())
    found = engine.discover(str(rule_project.cwd))
    assert done and ids(found) == ["a"] and found.errors == ()
    assert ids(engine.discover(str(rule_project.cwd))) == ["a"]


def test_file_changing_between_list_and_read_loads_the_new_text_and_stays_consistent(rule_project, monkeypatch):
    path = rule_project.write({".pi/rules/a.md": rule_text("old", alwaysApply=True)}) / ".pi/rules/a.md"
    engine = rule_project.engine()
    _swap_before(monkeypatch, "a.md", "open", lambda p: p.write_text(rule_text("new, and longer", alwaysApply=True)))
    assert [r.body for r in engine.discover(str(rule_project.cwd)).rules] == ["new, and longer"]
    # The cached signature predates the change, so the next pass re-reads: still the new text.
    assert [r.body for r in engine.discover(str(rule_project.cwd)).rules] == ["new, and longer"]
    path.write_text(rule_text("third", alwaysApply=True))
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    assert [r.body for r in engine.discover(str(rule_project.cwd)).rules] == ["third"]


def _to_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _to_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _to_huge(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(100 * 1024 * 1024)


@pytest.mark.parametrize(
    "swap, expected",
    [
        (_to_fifo, [("read-failure", "not a regular file (FIFO, socket or device); rule files must be plain files")]),
        (_to_directory, []),  # now a directory: skipped like a vanished file; the next listing walks it
        (_to_huge, [("read-failure", "file is 104857600 bytes, over the 1048576-byte limit for a rule; "
                                     "split it into smaller rules")]),
    ],
)
def test_file_replaced_after_listing_never_blocks_or_floods(rule_project, monkeypatch, swap, expected):
    rule_project.write({".pi/rules/a.md": ALWAYS, ".pi/rules/x.md": ALWAYS})
    done = _swap_before(monkeypatch, "x.md", "open", swap)
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert done and ids(found) == ["a"]
    assert [(e.kind, e.message) for e in found.errors] == expected


# -- special files ---------------------------------------------------------------------


def test_socket_named_like_a_rule_is_reported_not_opened(rule_project, opened):
    rules = rule_project.write({".pi/rules/a.md": ALWAYS}) / ".pi/rules"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(rules / "sock.md"))
        found = rule_project.engine().discover(str(rule_project.cwd))
    finally:
        server.close()
    assert ids(found) == ["a"] and rows(found) == [("read-failure", "sock.md")]
    assert "not a regular file" in found.errors[0].message
    assert str(rules / "sock.md") not in opened


def test_fifo_through_a_symlink_inside_the_project_is_reported_without_blocking(rule_project):
    rules = rule_project.write({".pi/rules/a.md": ALWAYS}) / ".pi/rules"
    os.mkfifo(rule_project.cwd / "pipe")
    (rules / "pipe.md").symlink_to("../../pipe")
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(found) == ["a"] and rows(found) == [("read-failure", "pipe.md")]
    assert "not a regular file" in found.errors[0].message


def test_device_paths_are_never_opened(repo, opened):
    (repo["rules"] / "zero.md").symlink_to("/dev/zero")
    global_rules = repo["home"] / ".pi/agent/rules"
    global_rules.mkdir(parents=True)
    (global_rules / "null.md").symlink_to("/dev/null")
    found = discover(repo["root"], repo["home"])
    assert ids(found) == ["keep"]
    messages = {os.path.basename(e.path): e.message for e in found.errors}
    # In the project, /dev is outside the git root; in the user's global rules it is a device.
    assert "-> /dev/zero leads outside the git root" in messages["zero.md"]
    assert messages["null.md"].startswith("not a regular file")
    assert "/dev/zero" not in opened  # (/dev/null is opened: git's stdin)
    assert not any(p.endswith(("zero.md", "null.md")) for p in opened)


def test_character_device_node_in_the_rules_directory(rule_project, opened):
    rules = rule_project.write({".pi/rules/a.md": ALWAYS}) / ".pi/rules"
    try:
        os.mknod(rules / "dev.md", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # like /dev/zero
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(found) == ["a"] and rows(found) == [("read-failure", "dev.md")]
    assert str(rules / "dev.md") not in opened


# -- symlinks --------------------------------------------------------------------------


def test_symlink_loops_are_reported_and_directory_loops_not_followed(repo):
    rules = repo["rules"]
    (rules / "a.md").symlink_to("b.md")
    (rules / "b.md").symlink_to("a.md")
    (rules / "loop").symlink_to(".")
    (rules / "self.md").symlink_to("self.md")
    found = discover(repo["root"], repo["home"])
    assert ids(found) == ["keep"]
    assert sorted(rows(found)) == [("read-failure", "a.md"), ("read-failure", "b.md"), ("read-failure", "self.md")]
    assert all("symbolic link loop" in e.message and "delete it" in e.message for e in found.errors)


def test_symlink_loop_in_global_rules_is_reported_with_the_fix(rule_project):
    rules = rule_project.write_global({"g.md": ALWAYS})
    (rules / "x.md").symlink_to("y.md")
    (rules / "y.md").symlink_to("x.md")
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(found) == ["g"]
    assert [e.message for e in found.errors] == [
        "Too many levels of symbolic links; point the link at a real file or delete it"
    ] * 2


def test_rule_file_linked_outside_the_git_root_is_reported_not_read(repo, opened):
    rules = repo["rules"]
    (rules / "rel.md").symlink_to("../../../outside/secret.md")
    (rules / "abs.md").symlink_to(repo["outside"] / "secret.md")
    (rules / "chain.md").symlink_to("hop.md")
    (rules / "hop.md").symlink_to("../../../outside/secret.md")
    (rules / "climb.md").symlink_to("../../shared/../../outside/secret.md")
    evaluation = evaluate(repo["root"], repo["home"])
    assert [o.rule.id for o in evaluation.active] == ["keep"]
    assert "SECRET" not in evaluation.section
    errors = {os.path.basename(e.path): e for e in evaluation.errors}
    assert sorted(errors) == ["abs.md", "chain.md", "climb.md", "hop.md", "rel.md"]
    assert {e.kind for e in errors.values()} == {"read-failure"}
    secret = str(repo["outside"] / "secret.md")
    assert errors["abs.md"].message == (
        f"symbolic link {rules / 'abs.md'} -> {secret} leads outside the git root {repo['root']}; "
        "not read — point the link inside the git root or copy what it points at there"
    )
    assert f"-> ../../../outside/secret.md ({secret}) leads outside" in errors["rel.md"].message
    assert f"symbolic link {rules / 'hop.md'} ->" in errors["chain.md"].message  # names the link that escapes
    never_opened_outside(opened, repo["outside"])
    assert not any(p.endswith(("rel.md", "abs.md", "chain.md", "hop.md", "climb.md")) for p in opened)


def test_rule_file_linked_inside_the_git_root_is_read(repo):
    (repo["rules"] / "shared.md").symlink_to("../../shared/inside.md")
    (repo["rules"] / "absolute.md").symlink_to(repo["root"] / "shared" / "inside.md")
    found = discover(repo["root"], repo["home"])
    # Two names of one file are one rule (docs/format.md, "One file, two names").
    assert ids(found) == ["absolute", "keep"] and found.errors == ()
    [linked] = [r for r in found.rules if r.id == "absolute"]
    assert [a.path for a in linked.aliases] == [str(repo["rules"] / "shared.md")]


def test_ancestor_rules_may_link_anywhere_inside_the_root_but_not_above(repo):
    package = repo["root"] / "packages" / "a"
    make_rules(package, {".pi/rules/own.md": ALWAYS})
    (repo["rules"] / "up.md").symlink_to("../../../outside/secret.md")
    (package / ".pi/rules/root.md").symlink_to("../../../../shared/inside.md")
    found = discover(package, repo["home"])
    assert ids(found) == ["own", "root", "keep"]
    assert rows(found) == [("read-failure", "up.md")]


def test_without_a_git_root_the_bound_is_cwd(tmp_path):
    project, home = tmp_path / "p", tmp_path / "h"
    make_rules(project, {".pi/rules/a.md": ALWAYS, "docs/inside.md": RULE})
    make_rules(tmp_path, {"parent.md": SECRET})
    home.mkdir()
    (project / ".pi/rules/up.md").symlink_to("../../../parent.md")
    (project / ".pi/rules/in.md").symlink_to("../../docs/inside.md")
    found = discover(project, home)
    assert ids(found) == ["a", "in"]
    assert rows(found) == [("read-failure", "up.md")]
    assert f"leads outside the project directory {project}" in found.errors[0].message


def test_global_rules_may_link_anywhere(repo):
    global_rules = repo["home"] / ".pi/agent/rules"
    global_rules.mkdir(parents=True)
    (global_rules / "mine.md").symlink_to(repo["outside"] / "secret.md")
    found = discover(repo["root"], repo["home"])
    assert ids(found) == ["keep", "mine"] and found.errors == ()


def test_symlinked_rules_directory_inside_the_root_is_followed(repo):
    shutil.rmtree(repo["rules"])
    make_rules(repo["root"], {"team/rules/t.md": ALWAYS})
    repo["rules"].symlink_to("../team/rules")
    found = discover(repo["root"], repo["home"])
    assert ids(found) == ["t"] and found.errors == ()
    assert found.rules[0].file.path == str(repo["rules"] / "t.md")  # named as the user spells it


@pytest.mark.parametrize("link", [".pi/rules", ".pi"])
def test_symlinked_rules_directory_outside_the_root_is_one_error_and_never_listed(repo, opened, monkeypatch, link):
    shutil.rmtree(repo["root"] / ".pi")
    target = repo["outside"] / "rules" if link == ".pi/rules" else repo["outside"]
    if link == ".pi":
        (repo["outside"] / "rules").rename(repo["outside"] / "tmp")
        make_rules(repo["outside"], {"rules/s.md": SECRET})
    else:
        (repo["root"] / ".pi").mkdir()
    (repo["root"] / link).symlink_to(target)
    listed: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": listed.append(os.fspath(p)) or real_scandir(p))
    opened.clear()  # the setup above wrote there
    found = discover(repo["root"], repo["home"])
    assert found.rules == ()
    assert [(e.kind, e.path) for e in found.errors] == [("source-unreadable", str(repo["rules"]))]
    assert f"-> {target} leads outside the git root" in found.errors[0].message
    assert str(repo["rules"]) not in listed
    never_opened_outside(opened, repo["outside"])


def test_importer_file_linked_outside_is_reported_not_read(repo, opened):
    (repo["root"] / ".cursorrules").symlink_to(repo["outside"] / "secret.md")
    make_rules(repo["root"], {".claude/rules/ok.md": "Claude rule.\n"})
    (repo["root"] / ".claude/rules/leak.md").symlink_to(repo["outside"] / "secret.md")
    evaluation = evaluate(repo["root"], repo["home"])
    assert "SECRET" not in evaluation.section
    assert sorted(rows(evaluation)) == [("read-failure", ".cursorrules"), ("read-failure", "leak.md")]
    never_opened_outside(opened, repo["outside"])


# -- size, count, depth, names ---------------------------------------------------------


def test_hundred_megabyte_rule_is_reported_without_reading_it(rule_project, monkeypatch):
    path = rule_project.write({".pi/rules/a.md": ALWAYS, ".pi/rules/huge.md": b""}) / ".pi/rules/huge.md"
    with open(path, "r+b") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: no disk used
    read_bytes = _count_reads(monkeypatch)
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert ids(found) == ["a"]
    assert [(e.kind, e.message) for e in found.errors] == [
        ("read-failure", "file is 104857600 bytes, over the 1048576-byte limit for a rule; split it into smaller rules")
    ]
    assert sum(read_bytes.values()) < 4096  # only a.md was read


def test_a_file_lying_about_its_size_is_read_only_up_to_the_cap(rule_project, monkeypatch):
    """A file that grows after ``fstat`` (or a filesystem that misreports sizes)."""
    path = rule_project.write({".pi/rules/huge.md": b""}) / ".pi/rules/huge.md"
    with open(path, "r+b") as handle:
        handle.truncate(100 * 1024 * 1024)
    real_fstat = os.fstat

    def small_fstat(fd):
        info = real_fstat(fd)
        if stat.S_ISREG(info.st_mode):
            return os.stat_result((info.st_mode, *info[1:6], 10, *info[7:]))
        return info

    monkeypatch.setattr(os, "fstat", small_fstat)
    read_bytes = _count_reads(monkeypatch)
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert found.rules == ()
    assert found.errors[0].message.startswith(f"file is at least {MAX_RULE_BYTES + 1} bytes, over the")
    assert max(read_bytes.values()) == MAX_RULE_BYTES + 1  # the one descriptor of huge.md


def _count_reads(monkeypatch) -> dict[int, int]:
    counts: dict[int, int] = {}
    real_read = os.read

    def read(fd, size):
        data = real_read(fd, size)
        counts[fd] = counts.get(fd, 0) + len(data)
        return data

    monkeypatch.setattr(os, "read", read)
    return counts


def test_ten_thousand_rules_in_one_directory(rule_project):
    rules = rule_project.cwd / ".pi" / "rules"
    rules.mkdir(parents=True)
    first = rules / "r00000.md"
    first.write_text(rule_text("Body.", globs=["src/**"]))
    for number in range(1, 10_000):
        os.link(first, rules / f"r{number:05d}.md")  # 10k regular files; linking is 15x faster than writing
    engine = rule_project.engine()
    found = engine.discover(str(rule_project.cwd))
    assert len(found.rules) == 10_000 and found.errors == ()
    assert len({r.id for r in found.rules}) == 10_000
    assert found.rules[0].id == "r00000" and found.rules[-1].id == "r09999"
    again = engine.discover(str(rule_project.cwd))
    assert all(a is b for a, b in zip(found.rules, again.rules))  # nothing re-parsed
    evaluation = engine.evaluate(rule_project.facts(touched=["src/a.ts"]))
    assert len(evaluation.active) >= 1 and not evaluation.errors


def test_tree_two_hundred_levels_deep(rule_project):
    deep = Path(*["d"] * 200)
    rule_project.write({
        f".pi/rules/{deep}/deep.md": rule_text("Deep.", globs=["**/bottom.ts"], match="exists"),
        f"{deep}/bottom.ts": "x",
    })
    engine = rule_project.engine()
    found = engine.discover(str(rule_project.cwd))
    assert [r.relative_path for r in found.rules] == [f"{'d/' * 200}deep.md"] and found.errors == ()
    evaluation = engine.evaluate(rule_project.facts())
    assert [o.reasons for o in evaluation.active] == [(f"exists {'d/' * 200}bottom.ts",)]
    assert main(["--cwd", str(rule_project.cwd), "check"]) == 0


def test_non_utf8_file_names(rule_project, capsys, monkeypatch):
    rules = rule_project.write({".pi/rules/a.md": ALWAYS}) / ".pi/rules"
    raw = os.fsencode(str(rules))
    for name in (b"caf\xe9.md", b"\xff\xfe/inner.md"):
        target = raw + b"/" + name
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(rule_text(f"Named {name!r}.", alwaysApply=True).encode())
    with open(raw + b"/bad\x80.md", "wb") as handle:
        handle.write(b"no frontmatter\n")
    found = rule_project.engine().discover(str(rule_project.cwd))
    assert sorted(ids(found)) == ["a", "caf\udce9", "inner"]
    assert rows(found) == [("missing-frontmatter", "bad\udc80.md")]
    # pytest's captured stdout is strict UTF-8, as a terminal in an en_US.UTF-8 locale is.
    monkeypatch.setenv("HOME", str(rule_project.home))
    for args in (["list"], ["--json", "list"], ["check"], ["render"], ["report"], ["show", "caf\udce9"]):
        code = main(["--cwd", str(rule_project.cwd), *args])
        out, err = capsys.readouterr()
        assert code in (0, 1) and not err, (args, err)
        assert "\\udce9" in out or args == ["check"]  # escaped, never printed raw
    assert main(["--cwd", str(rule_project.cwd), "--json", "check"]) == 1
    payload = json.loads(capsys.readouterr().out)
    # JSON carries the exact name: os.fsencode gives back the bytes on disk.
    assert [os.fsencode(e["path"]) for e in payload["errors"]] == [raw + b"/bad\x80.md"]
