"""The delivery audit (issue 24, part 1): replay one scripted session over a real layout and
compare what reached the model with what ``pi-rules report`` admits, step by step.

A layout is a folder of tests/fixtures/delivery/ (rule files from a real repository, see
its SOURCE). The session — start, a prompt, a read and writes in three packages, a second
prompt, a compaction, more tool calls — is replayed through a host:

- ``claude-code``: ``pi-rules hook claude-code`` as a real subprocess per event, with the
  payload shapes the real client sends (tests/fixtures/claude_code_payloads/);
- ``pi``: one ``pi-rules serve --host pi`` process fed JSON lines (docs/protocol.md);
- ``none``: ``pi-rules render`` at each step (no host reads anything by itself).

At each step the *view* — the text the model holds from pi-rules plus the rule files the
host reads by itself — is checked against ``report --host H --json`` for the same facts.
Texts are recognised by their canary lines: the lines of a rule's body that no other rule
body has. Every problem is a ``Finding`` naming layout, host, step, rule and what was wrong.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LAYOUTS = Path(__file__).resolve().parent / "fixtures" / "delivery"
PAYLOADS = Path(__file__).resolve().parent / "fixtures" / "claude_code_payloads"
HOSTS = ("claude-code", "pi", "none")
PROMPTS = ("Carry out the scripted steps.", "Continue with the next step.")
# A canary must be long enough not to occur by chance in unrelated text.
_CANARY_MIN = 24
_INDEX_LINE = re.compile(r"^- (?P<ref>\S+) — .*\((?:fetch with the read_rule tool|read it with the Read tool)\)$")
_STOPPED_LINE = re.compile(r"^- (?P<id>\S+) no longer applies ")
# The reasons report gives a file the host's agent reads by itself (hosts/natives).
_NATIVE_REASON = re.compile(r"reads this file")


@dataclass(frozen=True)
class Step:
    kind: str  # start, prompt, read, write, compact
    arg: str = ""  # the prompt, or the touched path relative to the project

    def __str__(self) -> str:
        return f"{self.kind} {self.arg}".strip()


# What a finding is about: the view disagrees with the report (``agreement``); the budget
# left a rule out and the model is not told (``silent-drop``); a rule points at another that
# the same delivery does not carry (``dangling-pointer``); a touched package's own memory
# file did not reach the model whole (``package-memory``).
KINDS = ("agreement", "silent-drop", "dangling-pointer", "package-memory")
_MEMORY_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
_POINTER = re.compile(r"\((?P<name>[^()\s]+) reaches you as a rule of its own\)")


@dataclass(frozen=True)
class Finding:
    kind: str
    layout: str
    host: str
    step: int
    action: str
    rule: str
    problem: str

    def __str__(self) -> str:
        return f"{self.layout} [{self.host}] step {self.step} ({self.action}): {self.rule}: {self.problem}"


@dataclass
class Project:
    name: str
    root: Path
    home: Path
    touched_paths: list[str]
    bodies: dict[str, str] = field(default_factory=dict)  # rule path -> body text

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rules_hosts", *args], cwd=self.root, env=_env(self.home),
                              capture_output=True, text=True, timeout=120)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_RULES_") or k == "PI_RULES_HOOK_SERVER"}
    env.update(HOME=str(home), XDG_STATE_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    return env


def layouts() -> list[str]:
    return sorted(p.name for p in LAYOUTS.iterdir() if (p / "SOURCE").is_file())


def make_project(name: str, tmp: Path) -> Project:
    """The layout as a real git repository with one commit (links stay links)."""
    root, home = tmp / name, tmp / "home"
    shutil.copytree(LAYOUTS / name, root, symlinks=True)
    source = (root / "SOURCE").read_text()
    (root / "SOURCE").unlink()
    home.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "layout"]):
        subprocess.run(["git", *args], cwd=root, env=_env(home), check=True, capture_output=True)
    touched = [line.strip() for line in source.split("Empty placeholders", 1)[1].splitlines()[1:] if line.strip()]
    project = Project(name, root, home, touched)
    if name not in _BODIES:
        bodies = {}
        for rule in project_rules(project):
            done = project.cli("read", rule["relativePath"], "--json")
            data = json.loads(done.stdout)
            assert "content" in data, f"{name}: pi-rules read {rule['relativePath']}: {done.stdout}{done.stderr}"
            bodies[os.path.relpath(rule["path"], root)] = data["content"]
        _BODIES[name] = bodies
    project.bodies = {str(root / rel): body for rel, body in _BODIES[name].items()}
    return project


# Each layout's rule bodies, read once per test run (they do not depend on the host).
_BODIES: dict[str, dict[str, str]] = {}


def project_rules(project: Project) -> list[dict[str, Any]]:
    done = project.cli("list", "--json")
    return list(json.loads(done.stdout)["rules"])


def script(project: Project) -> list[Step]:
    """Start, a prompt, read/write/read in three packages, a prompt, an edit, a
    compaction, and the first two packages again."""
    one, two, three = project.touched_paths[:3]
    return [Step("start"), Step("prompt", PROMPTS[0]), Step("read", one), Step("write", two), Step("read", three),
            Step("prompt", PROMPTS[1]), Step("write", one), Step("compact"), Step("read", two), Step("write", three)]


def report(project: Project, host: str, touched: list[str], prompt: str) -> dict[str, Any]:
    args = ["report", "--json", "--prompt", prompt, *[a for p in touched for a in ("--touched", p)]]
    if host != "none":
        args += ["--host", host]
    done = project.cli(*args)
    assert done.returncode == 0, f"{project.name}: pi-rules {' '.join(args)}: {done.stderr}"
    return dict(json.loads(done.stdout))


# -- replaying the session through a host -------------------------------------------------


class _Claude:
    """Claude Code: one hook process per event, payloads shaped like the real client's."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.templates = {p.stem: p.read_text() for p in PAYLOADS.glob("*.json")}
        self.calls = 0

    def _payload(self, key: str, **fields: Any) -> dict[str, Any]:
        raw = self.templates[key].replace("/home/user/project", str(self.project.root))
        raw = raw.replace("/home/user", str(self.project.home))
        return {**json.loads(raw), **fields}

    def _send(self, payload: dict[str, Any]) -> str:
        done = subprocess.run([sys.executable, "-m", "rules_hosts", "hook", "claude-code"],
                              input=json.dumps(payload), capture_output=True, text=True,
                              env=_env(self.project.home), cwd=self.project.home, timeout=60)
        assert done.returncode == 0, f"{self.project.name}: hook {payload['hook_event_name']}: {done.stderr}"
        if not done.stdout.strip():
            return ""
        return str(json.loads(done.stdout).get("hookSpecificOutput", {}).get("additionalContext") or "")

    def run(self, step: Step) -> str:
        if step.kind in ("start", "compact"):
            return self._send(self._payload("SessionStart", source="startup" if step.kind == "start" else "compact"))
        if step.kind == "prompt":
            return self._send(self._payload("UserPromptSubmit", prompt=step.arg))
        self.calls += 1
        path = str(self.project.root / step.arg)
        call = f"toolu_audit{self.calls:02d}"
        tool = "Read" if step.kind == "read" else "Write"
        content = f"// written by the audit, step {self.calls}\n"
        tool_input = {"file_path": path} if tool == "Read" else {"file_path": path, "content": content}
        pre = self._send(self._payload(f"PreToolUse-{tool}", tool_input=tool_input, tool_use_id=call))
        if tool == "Write":
            Path(path).write_text(content)
            response: dict[str, Any] = {"type": "update", "filePath": path, "content": content,
                                        "structuredPatch": [], "originalFile": "", "userModified": False}
        else:
            response = {"type": "text", "file": {"filePath": path, "content": "", "numLines": 1, "startLine": 1,
                                                 "totalLines": 1}}
        post = self._send(self._payload(f"PostToolUse-{tool}", tool_input=tool_input, tool_response=response,
                                        tool_use_id=call))
        return "\n".join(t for t in (pre, post) if t)

    def close(self) -> None:
        pass


class _Pi:
    """Pi: one ``serve --host pi`` process; the section is replaced each turn, tool results
    carry mid-run attachments."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.proc = subprocess.Popen([sys.executable, "-m", "rules_hosts", "serve", "--host", "pi"],
                                     cwd=project.root, env=_env(project.home), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.ids = 0
        self.section = ""

    def call(self, method: str, **params: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids += 1
        self.proc.stdin.write(json.dumps({"id": self.ids, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert "result" in answer, f"{self.project.name}: serve {method}: {answer}"
        return answer["result"]

    def run(self, step: Step) -> str:
        if step.kind == "start":
            self.call("session_start", reason="startup", entries=[])
            return ""
        if step.kind == "compact":
            self.call("compact")
            return ""
        if step.kind == "prompt":
            turn = self.call("before_agent_start", prompt=step.arg, model=None, tools=["read", "write", "edit"])
            if turn["action"] == "patch":
                self.section = turn["section"]
            elif turn["action"] == "remove":
                self.section = ""
            return ""
        tool = "read" if step.kind == "read" else "write"
        self.call("tool_start", tool=tool, args={"path": step.arg})
        if tool == "write":
            (self.project.root / step.arg).write_text("// written by the audit\n")
        parts = [{"type": "text", "text": "ok"}]
        effect = self.call("tool_result", tool=tool, content=parts, is_error=False)
        added = (effect.get("content") or parts)[len(parts):]
        return "\n".join(str(p.get("text", "")) for p in added)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


# -- the comparison -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Texts:
    """Rule bodies grouped by identical text (a link and its target, byte-identical copies),
    each group with the canary lines no other group has."""

    group_of: dict[str, int]  # rule path -> group
    canaries: dict[int, list[str]]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _texts(bodies: dict[str, str]) -> _Texts:
    distinct = sorted(set(bodies.values()))
    group_of = {path: distinct.index(body) for path, body in bodies.items()}
    per_group = [Counter(_lines(body)) for body in distinct]
    seen = Counter(line for counts in per_group for line in counts)
    canaries = {g: [line for line, n in counts.items() if n == 1 and seen[line] == 1 and len(line) >= _CANARY_MIN]
                for g, counts in enumerate(per_group)}
    return _Texts(group_of, canaries)


def _count(view: Counter[str], canaries: list[str]) -> int:
    """How many times a text is in the view: its least-seen canary line (a text cut short or
    sent twice shows in its canaries)."""
    return min(view[line] for line in canaries)


def _indexed(view_lines: list[str], rule: dict[str, Any], root: Path) -> int:
    refs = {rule["path"], rule["relativePath"], os.path.relpath(rule["path"], root)}
    return sum(1 for line in view_lines if (m := _INDEX_LINE.match(line)) and m["ref"] in refs)


def check_step(project: Project, host: str, number: int, step: Step, facts: dict[str, Any],
               delivered: str, stale_ok: bool = False, pointer_ok: bool = False) -> list[Finding]:
    """``delivered`` is what the model holds from pi-rules at this step. ``stale_ok``: a text
    delivered earlier that the report no longer admits may still be there (Claude Code keeps
    what it was given until the next prompt withdraws it; Pi's section is replaced only at
    the next turn). ``pointer_ok``: an admitted rule may come as its reference line (Pi's
    mid-run attachment, RULE-SPEC §6: the next turn's section sends the text)."""
    rules = facts["rules"]
    texts = _texts({r["path"]: project.bodies[r["path"]] for r in rules if r["path"] in project.bodies})
    native = [r for r in rules if r["status"] == "inactive" and any(_NATIVE_REASON.search(x) for x in r["reasons"])]
    # What the host reads by itself is in the model's context as it is on disk, once per file.
    native_text = "\n".join({os.path.realpath(r["path"]): project.bodies.get(r["path"], "") for r in native}.values())
    view_lines = _lines(native_text + "\n" + delivered)
    view = Counter(view_lines)
    stopped = {m["id"] for line in _lines(delivered) if (m := _STOPPED_LINE.match(line))}
    found: list[Finding] = []

    def bad(rule: str, problem: str, kind: str = "agreement") -> None:
        found.append(Finding(kind, project.name, host, number, str(step), rule, problem))

    groups: dict[int, list[dict[str, Any]]] = {}
    for rule in rules:
        groups.setdefault(texts.group_of.get(rule["path"], -1), []).append(rule)
    for group, members in groups.items():
        canaries = texts.canaries.get(group, [])
        names = ", ".join(r["id"] for r in members)
        seen = _count(view, canaries) if canaries else None
        wanted = any(r["delivery"] == "section" for r in members) or any(r in native for r in members)
        pointers = sum(_indexed(view_lines, r, project.root) for r in members)
        for rule in members:
            if rule["delivery"] == "index" and _indexed(view_lines, rule, project.root) != 1:
                bad(rule["id"], f"report lists it as an index line; the model got "
                                f"{_indexed(view_lines, rule, project.root)} index lines for it")
        if seen is None:
            continue
        if wanted and seen == 0 and not (pointer_ok and pointers):
            how = "as a pointer only" if pointers else "not at all"
            bad(names, f"report admits it ({_statuses(members)}) but its text reached the model {how}")
        elif seen > 1:
            bad(names, f"its text reached the model {seen} times ({_statuses(members)})")
        elif not wanted and seen == 1 and not stale_ok and not any(r["id"] in stopped for r in members):
            bad(names, f"report does not admit it ({_statuses(members)}) but its text reached the model")
        if seen and pointers:
            bad(names, f"its text reached the model and an index line offers it again ({_statuses(members)})")
        for rule in members:
            if rule["status"] == "dropped" and rule["cause"] == "budget" and not seen and not pointers:
                bad(rule["id"], f"the budget left it out ({rule['tokens']} tokens) and the model is not told "
                                "(no index line)", "silent-drop")
    _dangling(project, rules, native, view, view_lines, texts, bad)
    if step.kind in ("read", "write"):
        _package_memory(project, rules, step.arg, (view, view_lines), texts, bad, pointer_ok)
    return found


def _dangling(project: Project, rules: list[dict[str, Any]], native: list[dict[str, Any]], view: Counter[str],
              view_lines: list[str], texts: _Texts, bad: Any) -> None:
    """A delivered text that says another file "reaches you as a rule of its own" must be
    beside that file's text or index line in the same view (issue 24, part 5)."""
    by_path = {r["path"]: r for r in rules}
    for rule in rules:
        if rule["delivery"] != "section":
            continue
        for match in _POINTER.finditer(project.bodies.get(rule["path"], "")):
            target = by_path.get(str(Path(rule["path"]).parent / match["name"]))
            canaries = texts.canaries.get(texts.group_of.get(target["path"], -1), []) if target else []
            if target is None or (canaries and _count(view, canaries)) or _indexed(view_lines, target, project.root):
                continue
            if target in native:
                continue
            bad(rule["id"], f"says {match['name']} reaches the model as a rule of its own, but "
                            f"{target['id']} is {target['status']}/{target['delivery']} and not in the delivery",
                "dangling-pointer")


def _package_memory(project: Project, rules: list[dict[str, Any]], touched: str,
                    views: tuple[Counter[str], list[str]], texts: _Texts, bad: Any, pointer_ok: bool) -> None:
    """Touching a file in a package brings that package's own memory files (every
    AGENTS.md, CLAUDE.md or GEMINI.md in a folder between the project root and the file)
    whole, from pi-rules or from the host (issue 24, "Done when"); under Pi mid-run, its
    reference line will do (the next turn's section sends the text)."""
    view, view_lines = views
    folders = [str(project.root / parent) for parent in Path(touched).parents if str(parent) != "."]
    for rule in rules:
        path = Path(rule["path"])
        if path.name not in _MEMORY_FILES or str(path.parent) not in folders:
            continue
        canaries = texts.canaries.get(texts.group_of.get(rule["path"], -1), [])
        if pointer_ok and _count(view, canaries) == 0 and _indexed(view_lines, rule, project.root) == 1:
            continue
        if canaries and _count(view, canaries) != 1:
            bad(rule["id"], f"touching {touched} should bring this package memory file whole; it reached the "
                            f"model {_count(view, canaries)} times ({_statuses([rule])})", "package-memory")


def summary(findings: list[Finding]) -> str:
    """One line per layout, host, rule and problem, naming every step it was seen at."""
    steps: dict[tuple[str, str, str, str], list[str]] = {}
    for f in findings:
        steps.setdefault((f.layout, f.host, f.rule, f.problem), []).append(f"{f.step} ({f.action})")
    return "\n".join(f"{layout} [{host}] {rule}: {problem} — at step {', '.join(at)}"
                     for (layout, host, rule, problem), at in steps.items())


def _statuses(members: list[dict[str, Any]]) -> str:
    return "; ".join(f"{r['id']}: {r['status']}/{r['delivery']}"
                     + (f" ({r['reasons'][0][:80]})" if r["status"] == "inactive" and r["reasons"] else "")
                     for r in members)


def audit(project: Project, host: str) -> list[Finding]:
    """Replay the script through ``host`` and check the view after every step."""
    driver: _Claude | _Pi | None = _Claude(project) if host == "claude-code" else _Pi(project) if host == "pi" else None
    touched: list[str] = []
    prompt, segment, turn = "", "", ""
    found: list[Finding] = []
    try:
        for number, step in enumerate(script(project), 1):
            if step.kind in ("read", "write") and step.arg not in touched:
                touched.append(step.arg)
            # Mid-run evaluations use no prompt (docs/session.md); a prompt step uses its own.
            prompt = step.arg if step.kind == "prompt" else ""
            facts = report(project, host, touched, prompt)
            if driver is None:
                done = project.cli("render", "--prompt", prompt, *[a for p in touched for a in ("--touched", p)])
                found += check_step(project, host, number, step, facts, done.stdout)
                continue
            said = driver.run(step)
            if isinstance(driver, _Claude):
                # Deliver-once: the conversation since the start or the last compaction.
                segment = said if step.kind == "compact" else segment + "\n" + said
                found += check_step(project, host, number, step, facts, segment,
                                    stale_ok=step.kind in ("read", "write"))
            else:
                # Pi: the turn's section plus what this turn's tool results attached.
                turn = "" if step.kind == "prompt" else turn + "\n" + said
                if step.kind in ("start", "compact"):
                    continue  # Pi has no section before its first turn; compaction keeps it
                mid_run = step.kind in ("read", "write")
                found += check_step(project, host, number, step, facts, driver.section + "\n" + turn,
                                    stale_ok=mid_run, pointer_ok=mid_run)
    finally:
        if driver is not None:
            driver.close()
    return found
