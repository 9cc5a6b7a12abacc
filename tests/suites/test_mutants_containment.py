"""Containment's public functions on real trees of folders and links (issue 32).

``Containment.resolve``/``directory``, ``write_target``, ``write_contained`` and
``enclosing_project`` are the API every reader and writer of project files goes through;
these tests pin what each answers (paths, stats, refusals and their messages) where
mutation testing found the answers unpinned. docs/mutation.md lists what is left.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from rules_core.discovery.containment import (
    MAX_SYMLINKS,
    Containment,
    LinkRefused,
    Unresolved,
    enclosing_project,
    write_contained,
    write_target,
)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """``p`` (the bound) with a folder, a file, inside and outside links; ``out`` beside it."""
    bound, outside = tmp_path / "p", tmp_path / "out"
    (bound / "real" / "sub").mkdir(parents=True)
    (bound / "real" / "f.md").write_text("inside")
    outside.mkdir()
    (outside / "secret.md").write_text("outside")
    os.symlink("real", bound / "inner")                 # relative, stays inside
    os.symlink(str(bound / "real"), bound / "absinner")  # absolute, stays inside
    os.symlink(str(outside), bound / "away")            # absolute, leads out
    os.symlink("../out", bound / "up")                  # relative, leads out
    return {"bound": bound, "out": outside}


def test_a_file_resolves_to_its_physical_path_and_its_own_stat(tree):
    bound = tree["bound"]
    contain = Containment(str(bound))
    for spelling in ("real/f.md", "inner/f.md", "absinner/f.md", "real/sub/../f.md", "real/./f.md"):
        found = contain.resolve(str(bound / spelling))
        assert isinstance(found, tuple), spelling
        assert found[0] == str(bound / "real" / "f.md")
        assert stat.S_ISREG(found[1].st_mode) and found[1].st_size == len("inside")


def test_the_bound_and_a_folder_reached_by_dot_dot_resolve_to_themselves(tree):
    bound = tree["bound"]
    contain = Containment(str(bound))
    found = contain.resolve(str(bound))
    assert isinstance(found, tuple) and found[0] == str(bound) and stat.S_ISDIR(found[1].st_mode)
    assert contain.directory(str(bound / "inner" / "sub")) == str(bound / "real" / "sub")
    os.symlink("sub/..", bound / "real" / "back")
    found = contain.resolve(str(bound / "real" / "back"))
    assert isinstance(found, tuple) and found[0] == str(bound / "real") and stat.S_ISDIR(found[1].st_mode)


def test_missing_paths_and_paths_through_a_file_name_nothing(tree):
    bound = tree["bound"]
    contain = Containment(str(bound))
    assert contain.resolve(str(bound / "real" / "nope.md")) is None
    assert contain.resolve(str(bound / "nope" / "f.md")) is None
    assert contain.resolve(str(bound / "real" / "f.md" / "x")) is None
    assert contain.directory(str(bound / "real" / "f.md")) is None  # a file is no directory
    os.symlink("real/f.md/x", bound / "through")
    assert contain.resolve(str(bound / "through")) is None


def test_a_path_outside_the_bound_is_refused_with_the_bounds_name(tree):
    bound = tree["bound"]
    contain = Containment(str(bound), "the project directory")
    for path in (str(tree["out"] / "secret.md"), str(bound) + "x/f.md"):
        found = contain.resolve(path)
        assert isinstance(found, Unresolved) and found.escape
        assert found.message == f"outside the project directory {bound}; not read — project rules must live inside it"
    found = contain.directory(str(tree["out"]))
    assert isinstance(found, Unresolved) and found.escape
    assert found.message == f"outside the project directory {bound}; not read — project rules must live inside it"


def test_links_leading_out_are_named_with_where_they_land(tree):
    bound, outside = tree["bound"], tree["out"]
    contain = Containment(str(bound))
    found = contain.resolve(str(bound / "away" / "secret.md"))
    assert isinstance(found, Unresolved) and found.escape
    assert found.message == (
        f"symbolic link {bound / 'away'} -> {outside} leads outside the git root {bound}; not read — "
        "point the link inside the git root or copy what it points at there")
    found = contain.resolve(str(bound / "up" / "secret.md"))
    assert isinstance(found, Unresolved) and found.escape
    assert found.message == (
        f"symbolic link {bound / 'up'} -> ../out ({outside}) leads outside the git root {bound}; not read — "
        "point the link inside the git root or copy what it points at there")


def test_a_link_loop_is_reported_and_is_no_escape(tree):
    bound = tree["bound"]
    os.symlink("loop-b", bound / "loop-a")
    os.symlink("loop-a", bound / "loop-b")
    found = Containment(str(bound)).resolve(str(bound / "loop-a"))
    assert isinstance(found, Unresolved) and not found.escape
    assert found.message == (f"symbolic link loop (more than {MAX_SYMLINKS} links to follow); "
                             "point the link at a real file or delete it")


def test_a_chain_of_exactly_the_kernels_limit_of_links_resolves(tree):
    bound = tree["bound"]
    previous = "real/f.md"
    for n in range(MAX_SYMLINKS):
        os.symlink(previous, bound / f"l{n}")
        previous = f"l{n}"
    found = Containment(str(bound)).resolve(str(bound / previous))
    assert isinstance(found, tuple) and found[0] == str(bound / "real" / "f.md")
    os.symlink(previous, bound / "one-more")
    assert isinstance(Containment(str(bound)).resolve(str(bound / "one-more")), Unresolved)


def test_the_root_folder_as_bound_holds_every_absolute_path():
    contain = Containment("/")
    assert contain.inside("/etc") and contain.inside("/")
    assert Containment("/srv/p/").inside("/srv/p/x") and not Containment("/srv/p").inside("/srv/px")


# -- writes ------------------------------------------------------------------------------

def test_write_target_resolves_inside_links_and_keeps_missing_folders_as_spelt(tree):
    bound = tree["bound"]
    assert write_target(str(bound / "inner" / "f.md"), str(bound)) == str(bound / "real" / "f.md")
    assert write_target(str(bound / "absinner" / "new" / "g.md"), str(bound)) == str(bound / "real" / "new" / "g.md")
    assert write_target(str(bound / "a" / "b" / "c.md"), str(bound)) == str(bound / "a" / "b" / "c.md")
    assert write_target(str(bound), str(bound)) == str(bound)
    assert write_target(str(tree["out"] / "x"), str(bound)) == str(tree["out"] / "x")  # not the bound's to judge


def test_write_target_refuses_a_link_out_and_says_why(tree):
    bound, outside = tree["bound"], tree["out"]
    with pytest.raises(LinkRefused) as refused:
        write_target(str(bound / "away" / "f.md"), str(bound))  # the default label
    assert refused.value.errno == errno.EPERM
    assert refused.value.strerror == (
        f"symbolic link {bound / 'away'} -> {outside} leads outside the project {bound}; not written — pi-rules "
        "never writes through a link out of the project (a repository could point it at your own files): "
        "remove the link, or write elsewhere")


def test_write_target_refuses_a_dangling_link_that_would_land_outside(tree):
    bound = tree["bound"]
    os.symlink("../out/new.md", bound / "dangling")
    with pytest.raises(LinkRefused) as refused:
        write_target(str(bound / "dangling"), str(bound), "the trust store's folder")
    assert refused.value.strerror.startswith(
        f"symbolic link {bound / 'dangling'} -> ../out/new.md ({tree['out'] / 'new.md'}) leads outside "
        f"the trust store's folder {bound}; not written")
    os.symlink("real/new.md", bound / "dangling-inside")  # inside: the link may be written through
    assert write_target(str(bound / "dangling-inside"), str(bound)) == str(bound / "dangling-inside")


def test_write_target_refuses_a_folder_that_is_a_file(tree):
    bound = tree["bound"]
    with pytest.raises(NotADirectoryError) as refused:
        write_target(str(bound / "real" / "f.md" / "x.md"), str(bound))
    assert refused.value.errno == errno.ENOTDIR and refused.value.filename == str(bound / "real" / "f.md")
    assert refused.value.strerror == os.strerror(errno.ENOTDIR)


def test_write_contained_writes_through_inside_links_with_the_mode_asked(tree):
    bound = tree["bound"]
    written = write_contained(str(bound / "inner" / "new" / "g.md"), b"body", str(bound), mode=0o640)
    assert written == str(bound / "real" / "new" / "g.md")
    assert Path(written).read_bytes() == b"body"
    assert stat.S_IMODE(os.stat(written).st_mode) == 0o640
    assert sorted(p.name for p in (bound / "real" / "new").iterdir()) == ["g.md"]  # no temporary left
    write_contained(str(bound / "inner" / "new" / "g.md"), b"second", str(bound), sync=True)
    assert Path(written).read_bytes() == b"second"


def test_write_contained_refuses_before_writing_anything(tree):
    bound, outside = tree["bound"], tree["out"]
    with pytest.raises(LinkRefused) as refused:
        write_contained(str(bound / "up" / "x.md"), b"x", str(bound), "the map's project")
    assert "leads outside the map's project" in refused.value.strerror
    with pytest.raises(LinkRefused) as refused:
        write_contained(str(bound / "away" / "x.md"), b"x", str(bound))
    assert f"leads outside the project {bound}; not written" in refused.value.strerror
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_enclosing_project_is_the_nearest_folder_with_git_below_home(tmp_path):
    home = tmp_path / "home"
    repo = home / "code" / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    (repo / ".git").mkdir()
    assert enclosing_project(str(repo / "src" / "deep"), str(home)) == str(repo)
    assert enclosing_project(str(repo), str(home)) == str(repo)
    (home / "code" / "plain").mkdir()  # `.git` may be a file (a worktree's)
    (home / "code" / "plain" / ".git").write_text("gitdir: elsewhere\n")
    assert enclosing_project(str(home / "code" / "plain"), str(home)) == str(home / "code" / "plain")


def test_enclosing_project_never_climbs_to_home_or_above(tmp_path):
    home = tmp_path / "home"
    (home / "notes" / "a").mkdir(parents=True)
    (home / ".git").mkdir()  # a dotfiles repository in the home folder
    assert enclosing_project(str(home / "notes" / "a"), str(home)) == str(home / "notes" / "a")
    (tmp_path / "elsewhere" / "x").mkdir(parents=True)
    (tmp_path / ".git").mkdir()  # not below home: found
    assert enclosing_project(str(tmp_path / "elsewhere" / "x"), str(home)) == str(tmp_path)
    assert enclosing_project(str(tmp_path / "elsewhere" / "x") + "/../x", str(home)) == str(tmp_path)


def test_a_dangling_link_through_a_missing_folder_that_lands_outside_is_refused(tree):
    bound, outside = tree["bound"], tree["out"]
    os.symlink("nope/../../out/new.md", bound / "sneaky")  # names nothing yet: resolves to no file
    assert Containment(str(bound)).resolve(str(bound / "sneaky")) is None
    with pytest.raises(LinkRefused) as refused:
        write_target(str(bound / "sneaky"), str(bound))
    assert refused.value.errno == errno.EPERM
    assert refused.value.strerror == (
        f"symbolic link {bound / 'sneaky'} -> nope/../../out/new.md ({outside / 'new.md'}) leads outside the "
        f"project {bound}; not written — pi-rules never writes through a link out of the project (a repository "
        "could point it at your own files): remove the link, or write elsewhere")


def test_link_targets_are_followed_part_by_part_as_the_kernel_would(tree):
    bound = tree["bound"]
    links = {"doubled": "real//f.md", "dotted": "./real/f.md", "middle": "real/sub/../f.md",
             "round-trip": f"../{bound.name}/real/f.md"}
    for name, target in links.items():
        os.symlink(target, bound / name)
    contain = Containment(str(bound))
    for name in links:
        found = contain.resolve(str(bound / name))
        assert isinstance(found, tuple) and found[0] == str(bound / "real" / "f.md"), name
    os.symlink("real/", bound / "slashed")
    found = contain.resolve(str(bound / "slashed"))
    assert isinstance(found, tuple) and found[0] == str(bound / "real") and stat.S_ISDIR(found[1].st_mode)
    os.symlink(".", bound / "self")
    found = contain.resolve(str(bound / "self"))
    assert isinstance(found, tuple) and found[0] == str(bound) and stat.S_ISDIR(found[1].st_mode)


def test_a_dot_dot_past_the_bound_in_the_path_itself_is_an_escape(tree):
    bound = tree["bound"]
    found = Containment(str(bound)).resolve(f"{bound}/real/../../out/secret.md")
    assert isinstance(found, Unresolved) and found.escape
    assert found.message == f"outside the git root {bound}; not read — project rules must live inside it"


def test_names_the_kernel_refuses_are_reported_not_raised(tree):
    bound = tree["bound"]
    contain = Containment(str(bound))
    too_long = contain.resolve(str(bound / ("x" * 300)))
    assert isinstance(too_long, Unresolved) and not too_long.escape
    assert too_long.message == "File name too long; move it to a shorter path"
    nul = contain.resolve(f"{bound}/a\0b")
    assert isinstance(nul, Unresolved) and nul.message == "embedded null byte"


def test_enclosing_project_stops_at_the_home_folder_of_the_environment(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert enclosing_project(str(home / "notes")) == str(home / "notes")
