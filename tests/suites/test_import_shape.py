"""The package shape stays as docs/architecture.md draws it.

Every ``import`` statement in the four packages is read with ``ast`` — at module level,
inside functions and under ``TYPE_CHECKING`` alike, because a lazy import is still a
dependency — and the graph must have no cycle and no edge against the direction
``rules_hosts`` → (``rules_plugins``, ``rules_importers``) → ``rules_core``.

Inside ``rules_core`` and ``rules_hosts`` the same holds one level down: each subpackage is
a wing and the package's top-level modules are one more room; arrows between the rooms of
a package run one way (docs/architecture.md draws them).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = ("rules_core", "rules_plugins", "rules_importers", "rules_hosts")
# Which packages each package may import (besides itself).
ALLOWED = {
    "rules_core": set(),
    "rules_plugins": {"rules_core"},
    "rules_importers": {"rules_core", "rules_plugins"},
    "rules_hosts": {"rules_core", "rules_plugins", "rules_importers"},
}
# A program entry no module imports: `python -m rules_core` is kept as an alias of
# `python -m rules_hosts` (CONTRACT §3) and reaches it through runpy, not an import.
ENTRY_SCRIPTS = {"rules_core.__main__"}
# Entrances, not rooms: a package's ``__init__`` re-exports from its wings by design, a
# ``__main__`` runs the CLI, and a shim keeps an old import path for third parties
# (`rules_core.hookspecs`, `rules_core.testing`: the real modules under the old names;  # restructure: keep
# nothing inside imports them).
SHIMS = {"rules_core.hookspecs", "rules_core.testing"}  # restructure: keep
WINGED = ("rules_core", "rules_hosts")
ROOM_BUDGET = {"rules_core": 12, "rules_hosts": 10}  # top-level .py files, __init__ included
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (a package's ``__init__`` counts as the package)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in modules else base)
    return {t for t in targets if t in modules and t != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _room(module: str, modules: dict[str, Path]) -> str:
    """The wing ``pkg.sub`` a module lives in, or ``pkg`` for a top-level module."""
    parts = module.split(".")
    wing = ".".join(parts[:2])
    return wing if len(parts) > 1 and modules[wing].name == "__init__.py" else parts[0]


def _is_entrance(module: str) -> bool:
    return module in WINGED or module.endswith(".__main__") or module in SHIMS


def _wing_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Rooms of one package and the arrows between them (entrances left out)."""
    modules = _modules()
    rooms: dict[str, set[str]] = {}
    for source, targets in graph.items():
        if source.split(".")[0] not in WINGED or _is_entrance(source):
            continue
        here = rooms.setdefault(_room(source, modules), set())
        for target in targets:
            if target.split(".")[0] == source.split(".")[0] and not _is_entrance(target):
                there = _room(target, modules)
                rooms.setdefault(there, set())
                if there != _room(source, modules):
                    here.add(there)
    return rooms


def test_the_graph_sees_the_imports_it_must_see():
    graph = _graph()
    assert "rules_core.plugins.hookspecs" in graph["rules_core.plugins.manager"]  # `from . import hookspecs`
    assert "rules_core" in graph["rules_plugins.tokens"]  # `from rules_core import hookimpl`
    assert "rules_hosts.claude_code.hook" in graph["rules_hosts.claude_code.plugin"]  # lazy, in a function


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_a_planted_cycle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_wings_import_one_way():
    rooms = _wing_graph(_graph())
    assert {"rules_core", "rules_core.engine", "rules_hosts.cli", "rules_hosts.session"} <= set(rooms)  # restructure: keep (wing names)
    assert "rules_core" in rooms["rules_core.engine"]  # the engine reads the model at the top; restructure: keep
    assert _cycles(rooms) == []


def test_a_planted_back_arrow_between_wings_fails():
    graph = _graph()
    graph["rules_core.select"] = {*graph["rules_core.select"], "rules_core.engine.core"}  # top -> engine
    graph["rules_hosts.session.facts"] = {*graph["rules_hosts.session.facts"], "rules_hosts.cli.app"}
    cycles = _cycles(_wing_graph(graph))
    assert any({"rules_core", "rules_core.engine"} <= set(c) for c in cycles)  # restructure: keep
    assert any({"rules_hosts.cli", "rules_hosts.session"} <= set(c) for c in cycles)  # restructure: keep


def test_nothing_inside_imports_a_shim_or_its_own_package_facade():
    wrong = sorted(
        f"{source} imports {target}"
        for source, targets in _graph().items()
        for target in targets
        if target in SHIMS or (target in WINGED and source.split(".")[0] == target and source != target)
    )
    assert wrong == []


def test_each_top_level_stays_small_and_each_module_readable():
    for package, budget in ROOM_BUDGET.items():
        assert len(list((ROOT / package).glob("*.py"))) <= budget, package
    long = sorted(
        str(path.relative_to(ROOT)) for package in PACKAGES for path in (ROOT / package).rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    )
    assert long == []


def test_imports_run_one_way():
    wrong = sorted(
        f"{source} imports {target}"
        for source, targets in _graph().items()
        if source not in ENTRY_SCRIPTS
        for target in targets
        if (a := source.split(".")[0]) != (b := target.split(".")[0]) and b not in ALLOWED[a]
    )
    assert wrong == []


def _loaded_after(code: str) -> dict[str, list[str]]:
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps({'ours': sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{PACKAGES!r}), 'others': sorted(m for m in sys.modules)}}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout)


def test_import_rules_core_loads_no_host_session_argparse_or_mcp():
    loaded = _loaded_after("import rules_core")
    assert loaded["ours"] == ["rules_core"]
    for name in ("argparse", "mcp", "rules_hosts"):
        assert name not in loaded["others"]


def test_the_library_api_loads_the_engine_but_no_host():
    loaded = _loaded_after("from rules_core import Engine, Facts\nEngine(env={}).discover('.')")
    assert "rules_core.engine.core" in loaded["ours"]
    assert not any(m.startswith("rules_hosts") for m in loaded["ours"] if m not in {
        # The default plugin set includes the hosts' tool tables and command plugins:
        # small modules that import only the core and the importers (never the session runtime).
        "rules_hosts", "rules_hosts.protocols", "rules_hosts.protocols.host_tools", "rules_hosts.protocols.loaded", "rules_hosts.pi", "rules_hosts.pi.plugin", "rules_hosts.pi.native",
        "rules_hosts.claude_code", "rules_hosts.claude_code.tools", "rules_hosts.claude_code.plugin",
        "rules_hosts.claude_code.native", "rules_hosts.claude_code.instructions",
        "rules_hosts.plugins", "rules_hosts.plugins.serve", "rules_hosts.plugins.mcp",
        "rules_hosts.plugins.stream_cli", "rules_hosts.plugins.trust",
        "rules_hosts.plugins.map",
        "rules_hosts.plugins.rule_test", "rules_hosts.plugins.export", "rules_hosts.plugins.eval", "rules_hosts.plugins.stats",
        "rules_hosts.previews", "rules_hosts.previews.plugin",
    })
    assert "rules_hosts.session.runtime" not in loaded["ours"] and "mcp" not in loaded["others"]


def test_a_small_plugin_loads_only_the_hook_markers():
    loaded = _loaded_after("import rules_plugins.tokens")
    assert set(loaded["ours"]) <= {"rules_core", "rules_core.plugins", "rules_core.plugins.hookspecs", "rules_core.select", "rules_core.model",
                                      "rules_core.model.rules", "rules_core.model.declarations", "rules_core.model.evaluation",
                                  "rules_plugins", "rules_plugins.tokens"}


def test_old_import_paths_third_parties_use_keep_working():
    loaded = _loaded_after(
        "from rules_core.engine import Engine\nfrom rules_core.model import Rule\n"  # restructure: keep
        "from rules_core.hookspecs import hookimpl\nimport rules_core.hookspecs, rules_core.plugins.hookspecs\n"  # restructure: keep
        "assert rules_core.hookspecs is rules_core.plugins.hookspecs and Engine.__name__ == 'Engine'"  # restructure: keep
    )
    assert "rules_core.engine.core" in loaded["ours"]


def test_a_conftest_naming_the_old_pytest_plugin_path_still_gets_its_fixtures(tmp_path):
    conftest = 'pytest_plugins = ["rules_core.testing"]\n'  # restructure: keep
    (tmp_path / "conftest.py").write_text(conftest, encoding="utf-8")
    (tmp_path / "test_rule.py").write_text(
        "def test_one(rule_project):\n    assert rule_project is not None\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
