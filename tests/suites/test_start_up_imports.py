"""What a fresh `pi-rules report` process imports (issue 16, the start-up floor).

Every CLI, `mcp` and hook process pays for each module it imports before it does any
work, so modules only some commands or some projects need load where they are used. This
counts modules, never time: a later change that brings one back onto the common path fails
here (docs/performance.md, "Start-up floor").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rules_core.rule_tests.pytest_plugin import make_rules, rule_text

ROOT = Path(__file__).resolve().parents[2]
# The report runs in process, then the driver lists what it imported on stderr's last line.
DRIVER = (
    "import json, sys\n"
    "from rules_hosts.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.stderr)\n"
)
# Loaded where they are used: the stream watcher (a session watching output), stream
# regexes, settings files, installed metadata (read only when the kept entry points are
# stale), the session runtime and the servers, rule tests.
NOT_ON_THE_REPORT_PATH = (
    "tomllib",
    "rules_core.stream.watcher", "rules_core.stream.buffer", "rules_core.stream.plan", "regex",
    "importlib_metadata", "importlib.metadata", "email",
    "rules_hosts.session.runtime", "rules_hosts.protocols.serve", "rules_hosts.protocols.mcp", "mcp",
    "rules_core.rule_tests.cases", "rules_core.rule_tests.run",
)


def _project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    make_rules(cwd, {
        ".pi/rules/ts.md": rule_text("TypeScript style.", globs=["src/**/*.ts"]),
        ".pi/rules/always.md": rule_text("Always.", alwaysApply=True),
        "src/app.ts": "x",
    })
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    return cwd


def _run(tmp_path: Path, cwd: Path, args: list[str], stdin: str = "") -> tuple[str, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    env.update({"PYTHONPATH": str(ROOT), "HOME": str(tmp_path / "home"),
                "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")})
    done = subprocess.run([sys.executable, "-c", DRIVER, *args], env=env, cwd=cwd, input=stdin,
                          capture_output=True, text=True, check=True)
    return done.stdout, json.loads(done.stderr.splitlines()[-1])


def _report(tmp_path: Path, cwd: Path) -> tuple[str, dict[str, Any]]:
    return _run(tmp_path, cwd, ["--cwd", str(cwd), "report", "--no-branch", "--touched", "src/app.ts"])


def _statuses(report: str) -> dict[str, str]:
    # "active: ts — .pi/rules/ts.md (project) — …": one line per rule
    return {line.split(": ")[1].split(" ")[0]: line.split(":")[0] for line in report.splitlines()
            if line.startswith(("active: ", "inactive: "))}


def test_a_report_imports_no_module_only_other_commands_need(tmp_path):
    cwd = _project(tmp_path)
    first, _ = _report(tmp_path, cwd)  # fills the kept entry points and the persistent cache
    output, run = _report(tmp_path, cwd)

    assert output == first and run["code"] == 0
    assert _statuses(output) == {"ts": "active", "always": "active"}
    assert {"rules_core.engine.core", "rules_plugins.stream", "yaml"} <= set(run["modules"])  # the probe sees
    assert sorted(set(NOT_ON_THE_REPORT_PATH) & set(run["modules"])) == []


def test_a_settings_file_still_loads_toml_and_applies(tmp_path):
    cwd = _project(tmp_path)
    make_rules(cwd, {".pi/rules.toml": 'disable = ["always"]\n'})

    output, run = _report(tmp_path, cwd)

    assert "tomllib" in run["modules"]
    assert _statuses(output) == {"ts": "active", "always": "inactive"}


def test_a_claude_code_read_hook_loads_no_stream_watcher(tmp_path):
    cwd = _project(tmp_path)
    session = {"session_id": "imports", "cwd": str(cwd)}
    start = {**session, "hook_event_name": "SessionStart", "source": "startup"}
    read = {**session, "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": str(cwd / "src/app.ts")}, "tool_response": {}}
    _run(tmp_path, cwd, ["hook", "claude-code"], json.dumps(start))
    first, _ = _run(tmp_path, cwd, ["hook", "claude-code"], json.dumps(read))

    output, run = _run(tmp_path, cwd, ["hook", "claude-code"], json.dumps(read))

    assert output == first and run["code"] == 0 and "rules_hosts.session.runtime" in run["modules"]
    assert sorted({"rules_core.stream.watcher", "rules_core.stream.buffer", "rules_core.stream.plan", "regex", "tomllib",
                   "importlib_metadata", "importlib.metadata"} & set(run["modules"])) == []


# The hooks building the command line's parser: the only built-ins `--help` may import.
_PARSER_HOOKS = {"pi_rules_cli_commands", "pi_rules_output_formats", "pi_rules_hosts"}


def _builtins_imported(run: dict[str, Any]) -> set[str]:
    from rules_core.plugins.manager import BUILTIN_PLUGINS

    return set(BUILTIN_PLUGINS.values()) & set(run["modules"])


def test_version_imports_no_plugin_no_engine_and_no_metadata_reader(tmp_path):
    cwd = _project(tmp_path)
    output, run = _run(tmp_path, cwd, ["--version"])
    as_json, _ = _run(tmp_path, cwd, ["--version", "--json"])

    assert output.startswith("pi-rules ") and json.loads(as_json)["name"] == "pi-rules" and run["code"] == 0
    assert output.split()[1] == json.loads(as_json)["version"]
    assert _builtins_imported(run) == set()
    assert sorted({"pluggy", "yaml", "rules_core.engine.core", "importlib.metadata", "importlib_metadata", "email"}
                  & set(run["modules"])) == []


def test_help_imports_only_the_plugins_whose_hooks_build_the_parser(tmp_path):
    from rules_core.plugins.lazy import table

    cwd = _project(tmp_path)
    output, run = _run(tmp_path, cwd, [])  # bare `pi-rules`: the help
    _, report = _report(tmp_path, cwd)
    parser_plugins = {path for path, entries in table().values() if {e[0] for e in entries} & _PARSER_HOOKS}

    assert "report" in output and "serve" in output  # the plugins' commands are listed
    importing = "import importlib, json, sys\nfor m in sys.argv[1:]: importlib.import_module(m)\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", importing, *sorted(parser_plugins)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    needed = _builtins_imported({"modules": json.loads(done.stdout)})  # the parser plugins and what they import

    assert _builtins_imported(run) <= needed
    assert len(_builtins_imported(report)) > len(_builtins_imported(run))  # the probe sees a report's imports
