"""Entry points kept across processes (rules_core.plugins.entry_points): a warm process never
imports the metadata libraries, and any install, removal or edit is seen at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from rules_core.discovery.cache_files import encode
from rules_core.rule_tests.pytest_plugin import make_rules

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "from rules_core import hookimpl\n\n@hookimpl\ndef pi_rules_estimate_tokens(text):\n    return None\n"
PROBE = (
    "import sys, json\n"
    "from rules_core.plugins.manager import make_plugin_manager, list_plugins\n"
    "pm = make_plugin_manager()\n"
    "print(json.dumps({'plugins': {i.name: i.origin for i in list_plugins(pm)},\n"
    "                  'metadata_imported': 'importlib_metadata' in sys.modules or 'importlib.metadata' in sys.modules}))\n"
)


def _install(site: Path, dist: str, names: list[str]) -> None:
    """A distribution as an installer leaves it: a module per plugin and a .dist-info."""
    files = {f"{name}_plugin.py": PLUGIN for name in names}
    make_rules(site, files)
    lines = "".join(f"{name} = {name}_plugin\n" for name in names)
    make_rules(site / f"{dist}-1.0.dist-info", {
        "METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n",
        "entry_points.txt": f"[pi_rules]\n{lines}",
    })


def _probe(site: Path, cache: Path, **extra: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_")}
    env.update({"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "XDG_CACHE_HOME": str(cache), **extra})
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _third_party(found: dict[str, Any]) -> dict[str, str]:
    return {name: origin for name, origin in found["plugins"].items() if origin not in ("builtin", "in-process")}


def test_warm_process_reads_no_metadata_and_sees_every_change(tmp_path: Path) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    _install(site, "acme", ["acme"])
    cold = _probe(site, cache)
    assert _third_party(cold) == {"acme": "acme 1.0"} and cold["metadata_imported"]
    warm = _probe(site, cache)
    assert _third_party(warm) == {"acme": "acme 1.0"} and not warm["metadata_imported"]
    _install(site, "beta", ["beta"])  # a new distribution
    assert _third_party(_probe(site, cache)) == {"acme": "acme 1.0", "beta": "beta 1.0"}
    entry_points = site / "acme-1.0.dist-info" / "entry_points.txt"
    make_rules(site, {"gamma_plugin.py": PLUGIN})
    with open(entry_points, "a") as handle:  # edited in place: its directory is unchanged
        handle.write("gamma = gamma_plugin\n")
    assert _third_party(_probe(site, cache)) == {"acme": "acme 1.0", "beta": "beta 1.0", "gamma": "acme 1.0"}
    (site / "beta-1.0.dist-info" / "entry_points.txt").unlink()
    (site / "beta-1.0.dist-info" / "METADATA").unlink()
    (site / "beta-1.0.dist-info").rmdir()  # uninstalled
    assert _third_party(_probe(site, cache)) == {"acme": "acme 1.0", "gamma": "acme 1.0"}


def test_damaged_entry_point_file_is_ignored(tmp_path: Path) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    _install(site, "acme", ["acme"])
    expected = _third_party(_probe(site, cache))
    files = list((cache / "pi-rules").glob("*.json"))
    assert len(files) == 1
    document = json.loads(files[0].read_bytes().partition(b"\n")[2])
    forged = {**document, "groups": {"pi_rules": [["evil", "os:system", "evil", "6.6.6"]]}, "signature": "x"}
    damaged = files[0].read_bytes().replace(b"acme_plugin", b"acme_pluginx")  # the digest no longer fits
    for damage in (b"\x00garbage", damaged, encode(forged), encode({**document, "groups": 7})):
        files[0].write_bytes(damage)
        found = _probe(site, cache)
        assert _third_party(found) == expected and found["metadata_imported"]
    assert _third_party(_probe(site, cache, PI_RULES_CACHE="off")) == expected
