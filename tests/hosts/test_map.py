"""``pi-rules map``: the JSON and tree forms against golden files, the HTML page's
self-containment and escaping, and the page itself driven in a real headless Chromium."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
from typing import Any
from pathlib import Path

import pytest
from golden_files import check_golden
from hypothesis import given, settings, strategies as st

from suite_helpers import run_in
from rules_hosts.map.data import MAX_FILES_PER_FOLDER, FolderRule, Folder, MapRule, RepoMap
from rules_hosts.map.html import render_html

SHARED = "Write small functions and name them after what they do."
HOSTILE = "Docs rule <script>alert('x')</script></script> and a hidden\u200bword & more."


def _native(description: str, body: str, **keys: str) -> str:
    lines = ["---", f"description: {description}", "version: 1", *(f"{k}: {v}" for k, v in keys.items()), "---", body]
    return "\n".join(lines) + "\n"


FILES = {
    ".pi/rules/style.md": _native("House style", SHARED, alwaysApply="true"),
    ".pi/rules/python.md": _native("Python code", "Type-hint every function.", globs='["src/**/*.py"]', match="touched"),
    ".pi/rules/api-ref.md": _native("API reference", "Endpoints live in src/api/routes.py.", globs='["src/api/**"]',
                                    match="touched", load="on-demand"),
    ".pi/rules/legacy.md": _native("Legacy code", "Leave legacy code alone.", globs='["legacy/**"]', match="touched"),
    ".pi/rules/heavy.md": _native("Heavy module", "Read the design notes first. " * 60, globs='["src/heavy/**"]',
                                  match="touched"),
    ".pi/rules/no-print.md": _native("No print", "Use logging, not print.", globs='["src/**/*.py"]',
                                     condition='"print\\\\("'),
    ".pi/rules/hostile.md": _native("Docs", HOSTILE, globs='["docs/**"]', match="touched"),
    "AGENTS.md": "# Agents\n\nRun the tests before you commit.\n",
    ".cursor/rules/typescript.mdc": "---\ndescription: TypeScript\nglobs: \"**/*.ts\"\nalwaysApply: false\n---\n"
                                    "Prefer interfaces to type aliases.\n",
    ".cursor/rules/style-copy.mdc": f"---\ndescription: Style (Cursor copy)\nalwaysApply: true\n---\n{SHARED}\n",
    ".github/instructions/tests.instructions.md": "---\napplyTo: \"tests/**\"\n---\nEvery test names a behaviour.\n",
    ".gitignore": "build/\n",
    "src/app.py": "x\n", "src/api/routes.py": "x\n", "src/heavy/engine.py": "x\n", "src/web/index.ts": "x\n",
    "tests/test_app.py": "x\n", "docs/guide.md": "x\n", "build/out.js": "x\n", "README.md": "x\n",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with native, AGENTS.md, Cursor and Copilot rules, a dead glob, a
    duplicate across formats, a stream rule, a hostile body and a folder over budget."""
    project = tmp_path / "project"
    for name, text in FILES.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PI_RULES_MAX_TOKENS", "300")
    for name in ("PI_RULES_IMPORT", "PI_RULES_DISABLE_PLUGINS", "PI_RULES_DEADLINE_MS"):
        monkeypatch.delenv(name, raising=False)
    return project


def _run(capsys: pytest.CaptureFixture[str], project: Path, *args: str) -> tuple[int, str]:
    code, out, _ = run_in(capsys, project, "map", *args)
    return code, out.replace(str(project.parent), "<tmp>")


def _folder(data: dict, path: str) -> dict[str, dict]:
    [folder] = [f for f in data["folders"] if f["path"] == path]
    return {r["id"]: r for r in folder["rules"]}


def test_json_map_matches_golden(capsys, repo):
    code, out = _run(capsys, repo, "--format", "json")
    assert code == 0
    check_golden("map.json", out)


def test_tree_map_matches_golden(capsys, repo):
    code, out = _run(capsys, repo, "--format", "tree", "--depth", "3")
    assert code == 0
    check_golden("map-tree.txt", out)


def test_json_tells_which_rules_a_folder_activates_and_why(capsys, repo):
    _, out = _run(capsys, repo, "--json")
    data = json.loads(out)
    assert set(data) >= {"folders", "dead", "duplicates"}
    api = _folder(data, "src/api")
    assert (api["python"]["status"], api["python"]["kind"]) == ("active", "path")
    assert (api["api-ref"]["status"], api["api-ref"]["kind"]) == ("on-demand", "on-demand")
    assert api["style"]["kind"] == "always" and api["no-print"]["status"] == "stream"
    assert "python" not in _folder(data, "src/web") and "typescript" in _folder(data, "src/web")
    assert _folder(data, "tests")["tests"]["kind"] == "path"
    assert all(set(r) >= {"id", "status", "tokens"} for f in data["folders"] for r in f["rules"])
    formats = {r["id"]: r["format"] for r in data["rules"]}
    assert {formats["style"], formats["style-copy"], formats["tests"]} == {"native", "cursor", "copilot"}
    assert any(f == "agents-md" for f in formats.values())


def test_overflowing_folder_is_marked_with_what_it_asks_for(capsys, repo):
    data = json.loads(_run(capsys, repo, "--json")[1])
    [heavy] = [f for f in data["folders"] if f["path"] == "src/heavy"]
    assert heavy["overflow"] is True and heavy["tokens"] > data["budget"]
    assert any(r["status"] == "dropped" for r in heavy["rules"])
    assert not any(f["overflow"] for f in data["folders"] if f["path"] != "src/heavy")


def test_dead_globs_and_cross_format_duplicates_are_listed(capsys, repo):
    data = json.loads(_run(capsys, repo, "--json")[1])
    assert data["dead"] == ["legacy"]
    assert data["duplicates"] == [["style", "style-copy"]]
    assert not any("legacy" in _folder(data, f["path"]) for f in data["folders"])


def test_a_rule_with_one_live_glob_is_not_listed_as_applying_nowhere(capsys, repo):
    # gitgov's testing-approach: `**/*.test.ts` matches, a second glob does not (issue 34).
    (repo / ".pi/rules/testing.md").write_text(
        _native("Testing", "Test behaviour.", globs='["tests/**/*.py", "e2e/**"]', match="touched"), encoding="utf-8")
    data = json.loads(_run(capsys, repo, "--json")[1])
    assert data["dead"] == ["legacy"]  # positive control: every glob of legacy is dead
    assert data["partlyDead"] == ["testing"]
    assert "testing" in _folder(data, "tests")  # the rule applies there, as the folders say


def test_the_shared_page_embeds_project_relative_paths(capsys, repo, tmp_path):
    (repo / "packages" / "app").mkdir(parents=True)
    (repo / "packages" / "app" / "main.py").write_text("x\n", encoding="utf-8")
    global_rules = tmp_path / "home" / ".pi" / "agent" / "rules"
    global_rules.mkdir(parents=True)
    (global_rules / "mine.md").write_text(_native("Mine", "My own rule.", alwaysApply="true"), encoding="utf-8")
    page = tmp_path / "map.html"
    assert run_in(capsys, repo / "packages" / "app", "map", "-o", str(page))[0] == 0
    html = page.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="map-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    paths = {r["id"]: r["path"] for r in data["rules"]}
    assert str(tmp_path) not in html  # no folder of this machine in a page meant to be shared
    assert data["cwd"] == "project/packages/app"
    assert paths["style"] == "../../.pi/rules/style.md"  # an ancestor's rule, from the mapped folder
    assert paths["mine"] == "~/.pi/agent/rules/mine.md"  # outside the project: the home folder's
    # The JSON keeps absolute paths (docs/map.md, "Paths"): scripts on this machine open them.
    data = json.loads(_run(capsys, repo, "--json")[1])
    assert {r["id"]: r["path"] for r in data["rules"]}["style"] == "<tmp>/project/.pi/rules/style.md"


def test_gitignored_folders_are_not_mapped(capsys, repo):
    data = json.loads(_run(capsys, repo, "--json")[1])
    paths = [f["path"] for f in data["folders"]]
    assert "build" not in paths and "src/heavy" in paths and ".git" not in paths


def test_host_leaves_out_what_its_agent_reads_itself(capsys, repo):
    plain = json.loads(_run(capsys, repo, "--json")[1])
    pi = json.loads(_run(capsys, repo, "--json", "--host", "pi")[1])
    agents = next(r["id"] for r in plain["rules"] if r["format"] == "agents-md")
    assert agents in _folder(plain, ".") and agents not in _folder(pi, ".")
    assert pi["host"] == "pi"


def test_unknown_host_is_refused_with_the_known_ones(capsys, repo):
    code, _, err = run_in(capsys, repo, "map", "--host", "nope", "--json")
    assert code == 2 and "unknown host 'nope'" in err and "pi" in err


def test_untrusted_project_maps_no_project_rule(capsys, repo):
    data = json.loads(_run(capsys, repo, "--json", "--untrusted")[1])
    assert [f["path"] for f in data["folders"]] == ["."]
    assert data["rules"] == [] and _folder(data, ".") == {}


def test_crowded_folder_is_sampled_one_file_per_extension_first(capsys, repo):
    crowded = repo / "src" / "crowded"
    crowded.mkdir()
    for n in range(MAX_FILES_PER_FOLDER + 20):
        (crowded / f"a{n:03d}.txt").write_text("x")
    (crowded / "zz.ts").write_text("x")  # sorts last: only the per-extension pick reaches it
    data = json.loads(_run(capsys, repo, "--json")[1])
    [folder] = [f for f in data["folders"] if f["path"] == "src/crowded"]
    assert (folder["files"], folder["sampled"]) == (MAX_FILES_PER_FOLDER + 21, MAX_FILES_PER_FOLDER)
    assert "typescript" in _folder(data, "src/crowded")


def test_html_page_is_one_self_contained_file_with_escaped_bodies(capsys, repo, tmp_path):
    page = tmp_path / "out" / "map.html"
    page.parent.mkdir()
    code, out = _run(capsys, repo, "-o", str(page))
    assert code == 0 and "map written to" in out and list(page.parent.iterdir()) == [page]
    html = page.read_text(encoding="utf-8")
    assert "http:" not in html and "https:" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "<script>alert" not in html and "</script></script>" not in html
    assert html.count("</script>") == 2  # the data element and the program: no body closed one
    assert "\\\\u200b" in html and "\u200b" not in html  # the hidden character is shown, not kept


def test_html_is_written_to_rules_map_html_by_default(capsys, repo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, repo)[0] == 0
    assert (tmp_path / "rules-map.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _tiny_map(body: str, rule_id: str) -> RepoMap:
    rule = MapRule(rule_id, "native", "native", "x.md", "/p/.pi/rules/x.md", "project", body[:40], "pinned", 3,
                   {"globs": ["src/**"]}, body, False)
    folder = Folder(".", 0, 1, 1, (FolderRule(rule_id, "active", "path", 3, "touched " + body[:20]),), 3, False)
    return RepoMap("/p", None, 2000, (folder,), (rule,), (), (), (), False, ())


@settings(max_examples=150, deadline=None)
@given(body=st.text(), rule_id=st.text(min_size=1, max_size=30))
def test_no_rule_text_can_break_out_of_the_page(body, rule_id):
    html = render_html(_tiny_map(body, rule_id), 2)
    assert html.count("</script>") == 2 and html.lower().count("<script") == 2
    data = re.search(r'<script id="map-data" type="application/json">(.*?)</script>', html, re.S)
    assert data is not None
    parsed = json.loads(data.group(1))  # still valid JSON, whatever the body held
    assert len(parsed["rules"]) == 1 and parsed["folders"][0][6][0][0] == 0


# -- the page in a real browser -----------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip("Chromium is not installed and could not be installed here (.ci/install-chromium "
                    "needs root and apt-get); the map page's browser test needs a real browser")
    return binary


def test_map_page_in_headless_chromium_lists_rules_and_shows_a_clicked_body(capsys, repo, tmp_path, chromium):
    page = tmp_path / "rules-map.html"
    assert _run(capsys, repo, "-o", str(page), "--depth", "2")[0] == 0
    with Browser(chromium, tmp_path / "profile") as browser:
        browser.open(page.as_uri(), width=1500, height=900)
        assert browser.wait_for("document.querySelectorAll('.row').length > 5")
        api = browser.value("document.querySelector('.row[data-path=\"src/api\"]').dataset.rules.split(' ')")
        assert {"python", "api-ref", "style", "style-copy", "no-print"} <= set(api)
        assert "typescript" not in api
        heavy_over = browser.value("document.querySelector('.row[data-path=\"src/heavy\"]').classList.contains('over')")
        assert heavy_over is True
        dead = browser.value("[...document.querySelectorAll('aside .chip')].map(c => c.textContent)")
        assert "legacy" in dead and "style-copy" in dead
        # A person clicks the hostile rule's chip in the docs row, then reads its body.
        browser.click('.row[data-path="docs"] .chip[data-rule="hostile"]')
        body = browser.value("document.getElementById('detail-body').textContent")
        assert "<script>alert('x')</script>" in body and "\\u200b" in body
        assert browser.value("document.querySelectorAll('script').length") == 2  # the body stayed text
        browser.click('.row[data-path="src/api"] .chip[data-rule="python"]')
        assert browser.value("document.getElementById('detail-body').textContent") == "Type-hint every function."
        shot = browser.screenshot()
    (tmp_path / "map.png").write_bytes(shot)
    assert shot.startswith(b"\x89PNG") and len(shot) > 20_000  # a drawn page, not a blank one
    if os.environ.get("PI_RULES_MAP_SCREENSHOT"):  # how docs/map.png is refreshed on purpose
        shutil.copyfile(tmp_path / "map.png", os.environ["PI_RULES_MAP_SCREENSHOT"])


# -- a minimal DevTools-protocol driver over --remote-debugging-pipe (no extra dependency) --

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars",
                  "--remote-debugging-pipe")
REPLY_TIMEOUT_S = 60  # a bound on a hung browser, not an assertion on speed
POLLS = 200


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (replies out),
    messages separated by NUL: the protocol without a websocket client."""

    def __init__(self, binary: str, profile: Path) -> None:
        self._binary, self._profile = binary, profile
        self._next = 0
        self._buffer = b""
        self._session: str | None = None

    def __enter__(self) -> Browser:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Moved above the fds the child's 3 and 4 become, so the dup2s cannot clobber them.
        high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 20)
        high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 20)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def child() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self._process = subprocess.Popen(
            [self._binary, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=child,
        )
        os.close(high_r)
        os.close(high_w)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._send("Browser.close", {}, session=False)
        except Exception:  # noqa: BLE001 - closing anyway below
            pass
        try:
            self._process.wait(timeout=REPLY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)

    def open(self, url: str, *, width: int, height: int) -> None:
        target = self._send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self._session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   session=False)["sessionId"]
        self._send("Emulation.setDeviceMetricsOverride",
                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self._send("Page.enable", {})
        self._send("Page.navigate", {"url": url})

    def value(self, expression: str) -> Any:
        reply = self._send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise AssertionError(f"page script failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, condition: str) -> bool:
        """Poll ``condition`` a bounded number of times (counted, never timed)."""
        for _ in range(POLLS):
            try:
                if self.value(f"document.readyState === 'complete' && ({condition})"):
                    return True
            except AssertionError:
                pass
            self.value("new Promise(r => setTimeout(r, 50))")
        return False

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element, as a person would click it."""
        box = self.value(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
                         " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self._send("Input.dispatchMouseEvent",
                       {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    def screenshot(self) -> bytes:
        return base64.b64decode(self._send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False})["data"])

    def _send(self, method: str, params: dict[str, Any], *, session: bool = True) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session and self._session is not None:
            message["sessionId"] = self._session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = json.loads(self._read())
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise AssertionError(f"{method} failed: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> bytes:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_chrome], [], [], REPLY_TIMEOUT_S)
            if not ready:
                raise AssertionError("Chromium sent no reply (hung?)")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise AssertionError("Chromium closed the DevTools pipe (did it start?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return message
