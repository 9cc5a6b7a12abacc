"""Monorepo discovery (RULE-SPEC §1): git root, ancestors, nested, rebasing, ids, caching."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rules_core import Engine, Facts
from rules_core.discovery.git import find_git_root
from rules_core.paths import rebase
from rules_core.rule_tests.pytest_plugin import fresh_manager, make_rules, rule_text

FIXTURE = Path(__file__).parent.parent / "fixtures" / "monorepo"


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (tmp_path / "home").mkdir()
    return root


def engine_for(tmp_path: Path, blocked=()) -> Engine:
    return Engine(fresh_manager(blocked=blocked), home=str(tmp_path / "home"), env={})


def outcomes(engine: Engine, cwd: Path, **facts) -> dict[str, tuple[str, tuple[str, ...]]]:
    evaluation = engine.evaluate(Facts(cwd=str(cwd), **facts))
    return {o.rule.id: (o.status, o.reasons) for o in evaluation.outcomes}


def test_merged_order_and_ids_cwd_ancestors_nearest_first_nested_then_global(repo, tmp_path):
    make_rules(tmp_path / "home" / ".pi/agent/rules", {"shared.md": rule_text(globs=["x"])})
    discovery = engine_for(tmp_path).discover(str(repo / "packages" / "a"))
    assert [(r.id, r.file.plugin, r.relative_path) for r in discovery.rules] == [
        ("local", "native", "local.md"),
        ("shared", "native", "shared.md"),
        ("pkgs", "ancestors", "pkgs.md"),
        ("root-exists", "ancestors", "root-exists.md"),
        ("root-only", "ancestors", "root-only.md"),
        ("root-style", "ancestors", "root-style.md"),
        ("shared-2", "ancestors", "shared.md"),
        ("inner", "nested", "inner.md"),
        ("shared-3", "nested", "shared.md"),
        ("shared-4", "global", "shared.md"),
    ]
    bases = {r.id: r.file.base for r in discovery.rules}
    assert bases["pkgs"] == str(repo / "packages") and bases["shared-2"] == str(repo)
    assert bases["inner"] == str(repo / "packages/a/lib/b") and bases["shared-4"] == str(repo / "packages/a")


def test_spec_example_root_rule_means_root_src_not_package_src(repo, tmp_path):
    """A rule at /repo/.pi/rules with `src/**` means /repo/src/** (RULE-SPEC §1)."""
    cwd = repo / "packages" / "a"
    engine = engine_for(tmp_path)
    assert outcomes(engine, cwd, touched=("src/index.ts",))["root-only"][0] == "inactive"
    assert outcomes(engine, cwd, touched=(str(repo / "src/main.ts"),))["root-only"] == (
        "active", (f"touched {repo}/src/main.ts",),
    )


def test_ancestor_rule_matches_what_its_globs_describe_on_both_scales(repo, tmp_path):
    cwd = repo / "packages" / "a"
    engine = engine_for(tmp_path)
    assert outcomes(engine, cwd, touched=("src/index.ts",))["root-style"] == ("active", ("touched src/index.ts",))
    assert outcomes(engine, cwd, touched=("src/a.test.ts",))["root-style"][0] == "inactive"  # negation rebased
    assert outcomes(engine, cwd, touched=("src/index.ts",))["pkgs"][0] == "active"


def test_ancestor_rule_never_claims_same_named_file_in_sibling_package(repo, tmp_path):
    cwd = repo / "packages" / "c"
    result = outcomes(engine_for(tmp_path), cwd, touched=("src/index.ts",))
    assert result["root-style"][0] == "inactive" and result["pkgs"][0] == "inactive"
    assert result["sibling"][0] == "active"


def test_spec_example_nested_src_glob_is_prepended_with_its_base(tmp_path):
    """`src/**` under <cwd>/packages/b/.pi/rules matches packages/b/src/** only (§1)."""
    cwd = make_rules(tmp_path / "repo", {"packages/b/.pi/rules/b.md": rule_text(globs=["src/**"], match="touched")})
    (tmp_path / "home").mkdir()
    engine = engine_for(tmp_path)
    assert outcomes(engine, cwd, touched=("packages/b/src/x.ts",))["b"] == ("active", ("touched packages/b/src/x.ts",))
    assert outcomes(engine, cwd, touched=(str(cwd / "packages/b/src/x.ts"),))["b"][0] == "active"
    assert outcomes(engine, cwd, touched=("packages/a/src/x.ts", "src/x.ts"))["b"][0] == "inactive"


def test_nested_discovery_without_git_root_and_untrusted_reads_nothing(tmp_path):
    cwd = make_rules(tmp_path / "p", {"x/.pi/rules/n.md": rule_text(globs=["a"])})
    (tmp_path / "home").mkdir()
    assert [r.id for r in engine_for(tmp_path).discover(str(cwd)).rules] == ["n"]
    assert engine_for(tmp_path).discover(str(cwd), trusted=False).rules == ()


def test_absolute_and_dotdot_globs_are_evaluated_as_written(repo, tmp_path):
    make_rules(repo, {".pi/rules/abs.md": rule_text(globs=[f"{repo}/src/**"], match="touched"),
                      ".pi/rules/up.md": rule_text(globs=["../shared/**"], match="touched")})
    cwd = repo / "packages" / "a"
    result = outcomes(engine_for(tmp_path), cwd, touched=(str(repo / "src/main.ts"),))
    assert result["abs"][0] == "active"
    assert outcomes(engine_for(tmp_path), cwd, touched=("src/index.ts",))["abs"][0] == "inactive"


def test_nested_search_is_bounded_at_six_segments(tmp_path):
    cwd = make_rules(tmp_path / "p", {
        "a/b/c/d/e/f/.pi/rules/six.md": rule_text(globs=["x"]),
        "a/b/c/d/e/f/g/.pi/rules/seven.md": rule_text(globs=["x"]),
    })
    (tmp_path / "home").mkdir()
    assert [r.id for r in engine_for(tmp_path).discover(str(cwd)).rules] == ["six"]


def test_nested_order_is_shallow_first_then_lexicographic(tmp_path):
    cwd = make_rules(tmp_path / "p", {
        "b/.pi/rules/b.md": rule_text(globs=["x"]),
        "a/z/.pi/rules/az.md": rule_text(globs=["x"]),
        "c/.pi/rules/c.md": rule_text(globs=["x"]),
        "a/b/.pi/rules/ab.md": rule_text(globs=["x"]),
    })
    (tmp_path / "home").mkdir()
    assert [r.id for r in engine_for(tmp_path).discover(str(cwd)).rules] == ["b", "c", "ab", "az"]


def test_nested_never_enters_git_node_modules_or_symlinked_directories(tmp_path):
    outside = make_rules(tmp_path / "outside", {"pkg/.pi/rules/leak.md": rule_text(globs=["x"])})
    cwd = make_rules(tmp_path / "p", {
        ".git/x/.pi/rules/g.md": rule_text(globs=["x"]),
        "node_modules/m/.pi/rules/m.md": rule_text(globs=["x"]),
        "ok/.pi/rules/ok.md": rule_text(globs=["x"]),
    })
    (cwd / "linked").symlink_to(outside, target_is_directory=True)
    (cwd / "loop").symlink_to(cwd, target_is_directory=True)
    (tmp_path / "home").mkdir()
    assert [r.id for r in engine_for(tmp_path).discover(str(cwd)).rules] == ["ok"]


def test_nested_and_ancestor_plugins_are_blockable(repo, tmp_path):
    cwd = repo / "packages" / "a"
    plugins = {r.file.plugin for r in engine_for(tmp_path, blocked=["ancestors"]).discover(str(cwd)).rules}
    assert plugins == {"native", "nested"}
    plugins = {r.file.plugin for r in engine_for(tmp_path, blocked=["nested"]).discover(str(cwd)).rules}
    assert plugins == {"native", "ancestors"}


def test_reference_path_repeating_across_directories_resolves_to_earliest(repo, tmp_path):
    engine = engine_for(tmp_path)
    rules = engine.discover(str(repo / "packages" / "a")).rules
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="shared.md").body == "Package a shared."
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="inner.md").body == "Lib b src rule."
    assert engine.read_rule(Facts(cwd="."), rules=rules, name="pkgs.md").body == "Packages level rule."


def test_exists_for_ancestor_rule_scans_its_own_root(repo, tmp_path):
    cwd = repo / "packages" / "a"
    assert outcomes(engine_for(tmp_path), cwd)["root-exists"] == ("active", (f"exists {repo}/src/main.ts",))
    assert outcomes(engine_for(tmp_path), repo)["root-exists"] == ("active", ("exists src/main.ts",))


def test_exists_for_nested_rule_names_the_cwd_relative_path(repo, tmp_path):
    assert outcomes(engine_for(tmp_path), repo / "packages" / "a")["inner"] == ("active", ("exists lib/b/src/x.ts",))


def test_one_scan_per_distinct_glob_root(repo, tmp_path):
    from rules_core import hookimpl

    roots: list[str] = []

    class Spy:
        @hookimpl(tryfirst=True)
        def pi_rules_scan(self, root, queries, git_root):
            roots.append(root)

    engine = Engine(fresh_manager(plugins=[("spy", Spy())]), home=str(tmp_path / "home"), env={})
    engine.evaluate(Facts(cwd=str(repo / "packages" / "a")))
    assert sorted(roots) == sorted({str(repo), str(repo / "packages/a/lib/b")})
    engine.evaluate(Facts(cwd=str(repo / "packages" / "a")))
    assert len(roots) == 2  # cached
    engine.invalidate_scans()
    engine.evaluate(Facts(cwd=str(repo / "packages" / "a")))
    assert len(roots) == 4


# -- the git root ------------------------------------------------------------------------


def test_git_root_in_cwd_spelling_and_none_outside_git(repo, tmp_path):
    assert find_git_root(str(repo / "packages" / "a")) == str(repo)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert find_git_root(str(plain)) is None


def test_git_root_through_a_symlinked_cwd_keeps_the_symlink_spelling(repo, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(repo, target_is_directory=True)
    assert find_git_root(str(link / "packages" / "a")) == str(link)


def test_without_git_no_ancestor_is_read(tmp_path):
    parent = make_rules(tmp_path / "parent", {".pi/rules/up.md": rule_text(globs=["x"]),
                                              "child/.pi/rules/own.md": rule_text(globs=["x"])})
    (tmp_path / "home").mkdir()
    assert [r.id for r in engine_for(tmp_path).discover(str(parent / "child")).rules] == ["own"]


def test_git_missing_behaves_as_single_directory(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    ids = [r.id for r in engine_for(tmp_path).discover(str(repo / "packages" / "a")).rules]
    assert ids == ["local", "shared", "inner", "shared-2"]


@pytest.mark.parametrize(
    "path, cwd, base, expected",
    [
        ("src/a.ts", "/r/p", "/r/p", "src/a.ts"),
        ("/x/y", "/r/p", "/r/p", "/x/y"),
        ("src/a.ts", "/r/p", "/r", "p/src/a.ts"),
        ("/r/src/a.ts", "/r/p", "/r", "src/a.ts"),
        ("/elsewhere/a.ts", "/r/p", "/r", None),
        ("b/src/x", "/r", "/r/b", "src/x"),
        ("a/src/x", "/r", "/r/b", None),
        ("/r/b/src/x", "/r", "/r/b", "src/x"),
    ],
)
def test_rebase(path, cwd, base, expected):
    assert rebase(path, cwd, base) == expected


def test_nested_search_skips_hidden_directories(tmp_path):
    cwd = make_rules(tmp_path / "p", {
        ".venv/lib/site/pkg/.pi/rules/vendored.md": rule_text(globs=["x"]),
        ".github/actions/a/.pi/rules/hidden.md": rule_text(globs=["x"]),
        "visible/.pi/rules/seen.md": rule_text(globs=["x"]),
    })
    (tmp_path / "home").mkdir()
    assert [r.id for r in engine_for(tmp_path).discover(str(cwd)).rules] == ["seen"]
