"""``pi-rules stats`` output: the JSON of CONTRACT §7 (with a few more counts), advice
lines, text and one self-contained HTML page with small inline-SVG charts."""

from __future__ import annotations

import html
import json
from typing import Any, Mapping, Sequence

from rules_core.model import Rule

from .read import COUNTS, Stats

ALWAYS_MIN_TURNS = 5  # fewer turns say nothing about "always"
UNREAD_MIN_LISTINGS = 5


def stats_json(stats: Stats, rules: Sequence[Rule], violations: Mapping[str, int] | None = None) -> dict[str, Any]:
    """``violations``: per rule, eval runs that had the rule and still failed (``--eval-results``)."""
    known = {r.id: r for r in rules}
    ids = sorted(set(stats.rules) | set(known))
    rows = [{"id": i, **(stats.rules[i].counts if i in stats.rules else dict.fromkeys(COUNTS, 0))} for i in ids]
    if violations is not None:
        for row in rows:
            row["violations"] = violations.get(row["id"], 0)
    rows.sort(key=lambda row: (-row["tokens"], -row["delivered"], row["id"]))
    return {
        "sessions": len(stats.sessions), "turns": stats.turns, "sinceDays": stats.since_days, "rules": rows,
        "sessionTokens": [{"session": s.name, "host": s.host, "turns": s.turns, "tokens": s.tokens,
                           "oldFormat": s.old}
                          for s in sorted(stats.sessions, key=lambda s: (-s.tokens, s.name))],
        "oldSessions": [old.as_json() for old in sorted(stats.old, key=lambda o: (o.host, o.name))],
        "advice": advice(stats, rows, known),
    }


def advice(stats: Stats, rows: list[dict[str, Any]], known: dict[str, Rule]) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    turns = stats.turns
    for row in rows:
        rule = known.get(row["id"])
        if rule is not None and stats.sessions and not any(row[k] for k in ("active", "listed", "delivered",
                                                                           "reads", "fires")):
            found.append({"id": row["id"], "code": "never-active",
                          "message": f"never active in {stats.since_days} days: dead? remove it or fix its globs"})
        elif turns >= ALWAYS_MIN_TURNS and row["active"] == turns and (rule is None or rule.load != "on-demand"):
            found.append({"id": row["id"], "code": "always-active",
                          "message": f"always active ({turns} of {turns} turns), never relevant? "
                                     "make it on-demand or scope it"})
        if row["listed"] + row["pointers"] >= UNREAD_MIN_LISTINGS and row["reads"] == 0:
            found.append({"id": row["id"], "code": "listed-never-read",
                          "message": f"listed {row['listed']} times, never read: say in its description "
                                     "when it applies, or pin it"})
        if row.get("violations"):
            found.append({"id": row["id"], "code": "violated",
                          "message": f"delivered and still violated {row['violations']} times: make it a stream rule"})
    return found


def render_text(data: dict[str, Any]) -> str:
    lines = [_summary(data)]
    header = ("rule", "active", "delivered", "pointers", "tokens", "reads", "fires", "denies")
    width = max([len(header[0])] + [len(r["id"]) for r in data["rules"]])
    lines.append(f"{header[0]:<{width}}  " + "  ".join(f"{h:>9}" for h in header[1:]))
    for row in data["rules"]:
        lines.append(f"{row['id']:<{width}}  " + "  ".join(f"{row[h]:>9}" for h in header[1:]))
    if data["sessionTokens"]:
        lines.append("rule tokens per session:")
        lines.extend(f"  {s['session']} ({s['host']}): {s['tokens']} tokens, {s['turns']} turns"
                     + (" (old format: not recorded)" if s.get("oldFormat") else "")
                     for s in data["sessionTokens"])
    lines.extend(old_lines(data))
    lines.extend(f"advice {a['id']}: {a['message']}" for a in data["advice"])
    return "\n".join(lines) + "\n"


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}
table{border-collapse:collapse}td,th{padding:.2em .6em;text-align:right;border-bottom:1px solid #ddd}
td:first-child,th:first-child{text-align:left}
svg text{font:12px system-ui,sans-serif}
.advice li{margin:.3em 0}.code{font-family:monospace;color:#a40}
"""


def render_html(data: dict[str, Any]) -> str:
    """One self-contained page: no script, nothing fetched (the CSP forbids it)."""
    rules = data["rules"]
    esc = html.escape
    rows = "".join(
        "<tr>" + "".join(f"<td>{esc(str(r[k]))}</td>" for k in ("id", "active", "delivered", "pointers", "tokens",
                                                                   "reads", "fires", "denies")) + "</tr>"
        for r in rules)
    advice = "".join(f"<li><b>{esc(a['id'])}</b> <span class=\"code\">{esc(a['code'])}</span> {esc(a['message'])}</li>"
                     for a in data["advice"]) or "<li>none</li>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        f"<title>pi-rules stats</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>pi-rules stats</h1>\n<p id=\"summary\">{_summary(data)}</p>\n"
        "<h2>Rule tokens delivered</h2>\n" + _bars("chart-tokens", [(r["id"], r["tokens"]) for r in rules]) +
        "<h2>Deliveries</h2>\n" + _bars("chart-delivered", [(r["id"], r["delivered"]) for r in rules]) +
        "<h2>Rule tokens per session</h2>\n" +
        _bars("chart-sessions", [(s["session"], s["tokens"]) for s in data["sessionTokens"]]) +
        "<h2>Rules</h2>\n<table id=\"rules\"><tr><th>rule</th><th>active</th><th>delivered</th><th>pointers</th>"
        f"<th>tokens</th><th>reads</th><th>fires</th><th>denies</th></tr>{rows}</table>\n"
        f"<h2>Advice</h2>\n<ul class=\"advice\">{advice}</ul>\n" + _old_html(data) +
        f"<script type=\"application/json\" id=\"stats-data\">{_json_in_html(data)}</script>\n"
        "</body>\n</html>\n"
    )


def old_lines(data: dict[str, Any]) -> list[str]:
    """What the text report says of old-format journals: which, and what was not counted."""
    old = data.get("oldSessions") or []
    if not old:
        return []
    lines = [f"old-format journals (written before pi-rules recorded statistics): {len(old)}"]
    for session in old:
        if session["counted"]:
            kept = f"{session['deliveries']} deliveries counted" if session["countedFields"] else "no rule recorded"
            lines.append(f"  {session['session']} ({session['host']}): {kept}; "
                         f"not recorded, not counted: {', '.join(session['notCounted'])}")
        else:
            lines.append(f"  {session['session']} ({session['host']}): not counted: {session['why']}")
    return lines


def _old_html(data: dict[str, Any]) -> str:
    lines = old_lines(data)
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line.strip())}</li>" for line in lines[1:])
    return f"<h2>Old-format journals</h2>\n<p>{html.escape(lines[0])}</p>\n<ul id=\"old-sessions\">{items}</ul>\n"


def _summary(data: dict[str, Any]) -> str:
    def count(n: int, word: str) -> str:
        return f"{n} {word}" + ("" if n == 1 else "s")

    return f"{count(data['sessions'], 'session')}, {count(data['turns'], 'turn')} in the last {data['sinceDays']} days"


def _bars(name: str, values: list[tuple[str, int]]) -> str:
    """A horizontal bar chart as inline SVG: one labelled bar per value."""
    if not values:
        return f"<p id=\"{name}\">no data</p>\n"
    top = max(v for _, v in values) or 1
    row, label, width = 20, 180, 320
    parts = [f"<svg id=\"{name}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{label + width + 80}\" "
             f"height=\"{row * len(values) + 4}\" role=\"img\">"]
    for i, (key, value) in enumerate(values):
        y = i * row + 2
        size = round(width * value / top)
        shown = key if len(key) <= 24 else key[:23] + "…"
        parts.append(f"<text x=\"0\" y=\"{y + 14}\">{html.escape(shown)}</text>"
                     f"<rect class=\"bar\" x=\"{label}\" y=\"{y + 2}\" width=\"{size}\" height=\"{row - 6}\" "
                     f"fill=\"#4a7ab5\" data-value=\"{value}\"></rect>"
                     f"<text x=\"{label + size + 6}\" y=\"{y + 14}\">{value}</text>")
    parts.append("</svg>\n")
    return "".join(parts)


def _json_in_html(data: Any) -> str:
    """JSON that cannot end the script element it sits in."""
    return json.dumps(data, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
