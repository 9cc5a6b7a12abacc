"""The package shape stays as docs/architecture.md draws it.

Every ``import`` statement in the four packages is read with ``ast`` — at module level,
inside functions and under ``TYPE_CHECKING`` alike, because a lazy import is still a
dependency — and the graph must have no cycle and no edge against the direction
``rules_hosts`` → (``rules_plugins``, ``rules_importers``) → ``rules_core``.
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


def test_the_graph_sees_the_imports_it_must_see():
    graph = _graph()
    assert "rules_core.hookspecs" in graph["rules_core.manager"]  # `from . import hookspecs`
    assert "rules_core" in graph["rules_plugins.tokens"]  # `from rules_core import hookimpl`
    assert "rules_hosts.claude_code.hook" in graph["rules_hosts.claude_code.plugin"]  # lazy, in a function


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_a_planted_cycle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


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
    assert "rules_core.engine" in loaded["ours"]
    assert not any(m.startswith("rules_hosts") for m in loaded["ours"] if m not in {
        # The default plugin set includes the hosts' tool tables and command plugins:
        # small modules that import only the core and the importers (never the session runtime).
        "rules_hosts", "rules_hosts.host_tools", "rules_hosts.pi", "rules_hosts.pi.plugin", "rules_hosts.pi.native",
        "rules_hosts.claude_code", "rules_hosts.claude_code.tools", "rules_hosts.claude_code.plugin",
        "rules_hosts.claude_code.native",
        "rules_hosts.plugins", "rules_hosts.plugins.serve", "rules_hosts.plugins.mcp",
        "rules_hosts.plugins.stream_cli", "rules_hosts.plugins.trust",
        "rules_hosts.plugins.map",
        "rules_hosts.plugins.rule_test", "rules_hosts.plugins.eval", "rules_hosts.plugins.stats",
    })
    assert "rules_hosts.session" not in loaded["ours"] and "mcp" not in loaded["others"]


def test_a_small_plugin_loads_only_the_hook_markers():
    loaded = _loaded_after("import rules_plugins.tokens")
    assert set(loaded["ours"]) <= {"rules_core", "rules_core.hookspecs", "rules_core.select", "rules_core.model",
                                  "rules_plugins", "rules_plugins.tokens"}
