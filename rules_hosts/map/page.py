"""The inline CSS and JavaScript of the ``pi-rules map`` page (``map_html``).

Plain DOM code, no framework. Repository text reaches the page only through
``textContent`` and attribute values set with ``setAttribute``/``dataset``, never
``innerHTML``. Folder rows below the expanded depth are built when first opened, so a
monorepo of thousands of folders opens at once.
"""

from __future__ import annotations

STYLE = r"""
:root{--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#f7f8fa;--panel:#fff;--over:#c62828;--ok:#2e7d32}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
header{padding:18px 24px 12px;background:var(--panel);border-bottom:1px solid var(--line)}
h1{margin:0 0 4px;font-size:20px}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:0 0 8px}
.sub{color:var(--muted);font-size:13px}
.stats{display:flex;gap:18px;margin-top:10px;flex-wrap:wrap}
.stat b{font-size:17px;display:block}
.stat{color:var(--muted);font-size:12px}
.stat.bad b{color:var(--over)}
.legend{display:flex;flex-wrap:wrap;gap:8px 14px;margin-top:12px;align-items:center;font-size:12px;color:var(--muted)}
.sw{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:4px;vertical-align:-1px}
main{display:grid;grid-template-columns:minmax(0,1fr) 400px;gap:16px;padding:16px 24px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.side{display:flex;flex-direction:column;gap:12px;align-self:start;position:sticky;top:12px;max-height:calc(100vh - 24px);overflow:auto}
.tools{display:flex;gap:8px;margin-bottom:8px}
.tools button{font:inherit;font-size:12px;border:1px solid var(--line);background:#fff;border-radius:5px;padding:3px 9px;cursor:pointer}
.row{display:grid;grid-template-columns:minmax(180px,300px) 200px 1fr;gap:10px;align-items:center;padding:3px 4px;border-bottom:1px solid #f0f2f4}
.row:hover{background:#f5f8ff}
.row.over{background:#fff5f5}
.name{display:flex;align-items:center;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.tog{width:18px;flex:none;border:0;background:none;cursor:pointer;color:var(--muted);padding:0;font-size:11px}
.fname{cursor:pointer;overflow:hidden;text-overflow:ellipsis}
.fname:hover{text-decoration:underline}
.files{color:var(--muted);font-size:11px;margin-left:6px}
.cost{display:flex;align-items:center;gap:6px;font-size:11px;color:var(--muted);font-variant-numeric:tabular-nums}
.bar{flex:none;width:80px;height:8px;border-radius:4px;background:#e9edf1;overflow:hidden}
.fill{height:100%;background:var(--ok)}
.over .fill{background:var(--over)}
.flag{color:var(--over);font-weight:600}
.chips{display:flex;flex-wrap:wrap;gap:4px}
.chip{font:inherit;font-size:11.5px;border-radius:10px;padding:1px 8px;border:1.5px solid var(--c);background:var(--c);color:#fff;cursor:pointer;white-space:nowrap}
.chip.k-on-demand{background:#fff;color:var(--c);border-style:dashed}
.chip.k-stream{background:#fff;color:var(--c)}
.chip.k-always::before{content:"\25CF  "}
.chip.k-exists::before{content:"\25C6  "}
.chip.k-stream::before{content:"\26A1 "}
.chip.s-dropped{text-decoration:line-through;opacity:.55}
.chip.more{--c:#9aa5b1;background:#fff;color:var(--muted)}
.chip.sel{outline:2px solid #111;outline-offset:1px}
#detail pre{background:#f4f5f7;border:1px solid var(--line);border-radius:6px;padding:10px;white-space:pre-wrap;word-break:break-word;max-height:360px;overflow:auto;font:12px/1.45 ui-monospace,"DejaVu Sans Mono",monospace}
#detail table{border-collapse:collapse;width:100%;font-size:12.5px;margin:6px 0}
#detail td{border-top:1px solid var(--line);padding:3px 4px;vertical-align:top;overflow-wrap:anywhere}
#detail td:first-child{color:var(--muted);width:96px;white-space:nowrap}
.empty{color:var(--muted);font-size:12.5px}
ul.plain{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:6px}
.group{display:flex;flex-wrap:wrap;gap:4px;align-items:center}
.why{color:var(--muted);font-size:11.5px;margin-left:4px}
.note{font-size:12px;color:var(--muted);margin:4px 0 0}
"""

SCRIPT = r"""
"use strict";
const D = JSON.parse(document.getElementById("map-data").textContent);
const PALETTE = {native:"#2563eb", global:"#475569", "agents-md":"#16a34a", cursor:"#7c3aed", copilot:"#0d9488",
  claude:"#d97706", "claude-md":"#b45309", windsurf:"#0891b2", cline:"#db2777", "gemini-md":"#4f46e5",
  agents:"#65a30d", kiro:"#9333ea", continue:"#0369a1", roo:"#be123c", amazonq:"#ea580c", junie:"#059669",
  augment:"#a21caf", zed:"#0f766e", trae:"#ca8a04"};
const EXTRA = ["#e11d48", "#0284c7", "#4d7c0f", "#c2410c", "#6d28d9", "#15803d"];
const KIND_TEXT = {always:"always-on", path:"path rule: a file here matches", exists:"exists: a file somewhere matches",
  "on-demand":"on-demand index entry", stream:"stream rule watching here"};
function colour(format) {
  if (PALETTE[format]) return PALETTE[format];
  let h = 0; for (const ch of format) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return EXTRA[h % EXTRA.length];
}
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = String(text);
  return node;
}
const shared = D.everywhere.map(r => ({rule:r[0], kind:r[1], status:r[2], reason:r[3]}));
function entries(own) {
  const gone = new Set(own.filter(r => r.length === 1).map(r => r[0]));
  const listed = own.filter(r => r.length > 1).map(r => ({rule:r[0], kind:r[1], status:r[2], reason:r[3]}));
  const mine = new Set(listed.map(r => r.rule));
  return listed.concat(shared.filter(r => !gone.has(r.rule) && !mine.has(r.rule)));
}
const folders = D.folders.map(f => ({path:f[0], depth:f[1], files:f[2], sampled:f[3], tokens:f[4], over:f[5],
  rules:entries(f[6]), children:[]}));
const byPath = new Map(folders.map(f => [f.path, f]));
for (const f of folders) {
  if (f.path === ".") continue;
  const cut = f.path.lastIndexOf("/");
  const parent = byPath.get(cut < 0 ? "." : f.path.slice(0, cut));
  if (parent) parent.children.push(f);
}
const root = byPath.get(".");
const everywhere = new Set(root ? root.rules.filter(r => r.kind === "always" || r.kind === "exists").map(r => r.rule) : []);
let selected = null;
const FOLD_AT = 12;  // more shared rules than this fold into one chip in the top row too

function chip(ruleIndex, kind, status, title) {
  const rule = D.rules[ruleIndex];
  const node = el("button", "chip k-" + kind + " s-" + status, rule.id);
  node.style.setProperty("--c", colour(rule.format));
  node.dataset.rule = rule.id;
  node.title = (title ? title + " — " : "") + rule.format + ": " + rule.rel;
  node.addEventListener("click", ev => { ev.stopPropagation(); showRule(ruleIndex, node); });
  return node;
}

function header() {
  const top = el("header");
  top.append(el("h1", "", "Rules map — " + D.name));
  top.append(el("div", "sub", D.cwd + (D.host ? "  ·  as host " + D.host : "") +
    "  ·  which rules a file in each folder activates, evaluated by pi-rules itself"));
  const stats = el("div", "stats");
  const overflowing = folders.filter(f => f.over).length;
  const add = (value, label, bad) => { const s = el("div", "stat" + (bad ? " bad" : "")); s.append(el("b", "", value), label); stats.append(s); };
  add(folders.length, "folders");
  add(D.rules.length, "rules");
  add(D.budget, "token budget");
  add(overflowing, "folders over budget", overflowing > 0);
  add(D.dead.length, "dead rules", D.dead.length > 0);
  add(D.duplicates.length, "duplicate groups", D.duplicates.length > 0);
  top.append(stats);
  const legend = el("div", "legend");
  const formats = [...new Set(D.rules.map(r => r.format))].sort();
  for (const f of formats) { const item = el("span"); const sw = el("span", "sw"); sw.style.background = colour(f); item.append(sw, f); legend.append(item); }
  for (const text of ["● always-on", "◆ a matching file exists somewhere", "solid: path rule", "dashed: on-demand", "⚡ stream", "struck: dropped"]) legend.append(el("span", "", text));
  top.append(legend);
  return top;
}

function row(folder) {
  const line = el("div", "row" + (folder.over ? " over" : ""));
  line.dataset.path = folder.path;
  line.dataset.rules = folder.rules.map(r => D.rules[r.rule].id).join(" ");
  const name = el("div", "name");
  name.style.paddingLeft = (folder.depth * 16) + "px";
  const tog = el("button", "tog", folder.children.length ? (folder.open ? "▾" : "▸") : "");
  tog.setAttribute("aria-label", "expand");
  const label = el("span", "fname", folder.path === "." ? D.name + "/" : folder.path.slice(folder.path.lastIndexOf("/") + 1) + "/");
  label.title = folder.path;
  label.addEventListener("click", () => showFolder(folder));
  name.append(tog, label, el("span", "files", folder.files + (folder.files === 1 ? " file" : " files")));
  const cost = el("div", "cost");
  const bar = el("div", "bar"); const fill = el("div", "fill");
  fill.style.width = Math.min(100, D.budget ? 100 * folder.tokens / D.budget : 0) + "%";
  bar.append(fill);
  cost.append(bar, el("span", "", folder.tokens + " / " + D.budget));
  if (folder.over) cost.append(el("span", "flag", "over"));
  const chips = el("div", "chips");
  let inherited = 0;
  for (const r of folder.rules) {
    if ((folder.path !== "." || everywhere.size > FOLD_AT) && everywhere.has(r.rule) && r.status === "active") { inherited++; continue; }
    chips.append(chip(r.rule, r.kind, r.status, KIND_TEXT[r.kind] + (r.reason ? " (" + r.reason + ")" : "")));
  }
  if (inherited) {
    const more = el("button", "chip more", "+" + inherited + " everywhere");
    more.title = "rules active in every folder (always-on, or a matching file exists)";
    more.addEventListener("click", () => showFolder(folder));
    chips.append(more);
  }
  line.append(name, cost, chips);
  const holder = el("div");
  holder.append(line);
  const kids = el("div");
  holder.append(kids);
  const draw = () => {
    tog.textContent = folder.children.length ? (folder.open ? "▾" : "▸") : "";
    kids.replaceChildren();
    if (folder.open) for (const c of folder.children) kids.append(row(c));
  };
  tog.addEventListener("click", () => { folder.open = !folder.open; draw(); });
  draw();
  return holder;
}

function table(rows) {
  const t = el("table");
  for (const [k, v] of rows) { const tr = el("tr"); tr.append(el("td", "", k), el("td", "", v)); t.append(tr); }
  return t;
}

function showRule(index, node) {
  const rule = D.rules[index];
  if (selected) selected.classList.remove("sel");
  selected = node || null;
  if (selected) selected.classList.add("sel");
  const box = document.getElementById("detail");
  box.replaceChildren(el("h2", "", "Rule"));
  const title = el("div", "group");
  title.append(chip(index, rule.load === "on-demand" ? "on-demand" : rule.stream ? "stream" : "path", "active"));
  title.append(el("span", "why", rule.desc));
  box.append(title);
  const where = folders.filter(f => f.rules.some(r => r.rule === index)).length;
  const rows = [["file", rule.rel], ["path", rule.path], ["format", rule.format + " (" + rule.plugin + ", " + rule.source + ")"],
    ["load", rule.load + (rule.stream ? ", stream rule" : "")], ["tokens", String(rule.tokens)],
    ["applies in", where + " of " + folders.length + " folders"]];
  for (const [k, v] of rule.cond) rows.push([k, v]);
  if (!rule.cond.length) rows.push(["conditions", "none: always on"]);
  box.append(table(rows));
  if (D.dead.includes(index)) box.append(el("p", "note", "No glob of this rule matches a file: it applies nowhere (pi-rules check: dead-glob)."));
  else if ((D.partlyDead || []).includes(index)) box.append(el("p", "note", "Some globs of this rule match no file (pi-rules check: dead-glob); the others apply."));
  const pre = el("pre", "", rule.body);
  pre.id = "detail-body";
  box.append(pre);
}

function showFolder(folder) {
  const box = document.getElementById("detail");
  box.replaceChildren(el("h2", "", "Folder"));
  box.append(table([["folder", folder.path], ["files", folder.files + (folder.sampled < folder.files ? " (" + folder.sampled + " evaluated)" : "")],
    ["tokens", folder.tokens + " / " + D.budget + (folder.over ? " — over budget, rules dropped" : "")]]));
  const list = el("ul", "plain");
  for (const r of folder.rules) {
    const item = el("li", "group");
    item.append(chip(r.rule, r.kind, r.status), el("span", "why", KIND_TEXT[r.kind] + (r.reason ? ": " + r.reason : "")));
    list.append(item);
  }
  if (!folder.rules.length) list.append(el("li", "empty", "No rule applies to a file here."));
  box.append(list);
}

function sideList(title, groups, empty, note) {
  const card = el("section", "card");
  card.append(el("h2", "", title));
  if (!groups.length) { card.append(el("div", "empty", empty)); return card; }
  const list = el("ul", "plain");
  for (const group of groups) { const item = el("li", "group"); for (const i of group) item.append(chip(i, "path", "active")); list.append(item); }
  card.append(list);
  if (note) card.append(el("p", "note", note));
  return card;
}

function setDepth(depth) {
  for (const f of folders) f.open = f.depth < depth;
  const tree = document.getElementById("tree");
  tree.replaceChildren();
  if (root) tree.append(row(root));
}

function page() {
  document.body.append(header());
  const main = el("main");
  const left = el("section", "card");
  left.append(el("h2", "", "Folders"));
  const tools = el("div", "tools");
  const expand = el("button", "", "Expand all"); expand.addEventListener("click", () => setDepth(1e9));
  const collapse = el("button", "", "Collapse to depth " + D.depth); collapse.addEventListener("click", () => setDepth(D.depth));
  tools.append(expand, collapse);
  left.append(tools);
  const tree = el("div"); tree.id = "tree"; left.append(tree);
  if (D.truncated) left.append(el("p", "note", "The walk stopped at its folder or depth cap: deeper folders are not shown."));
  const side = el("aside", "side");
  const detail = el("section", "card"); detail.id = "detail";
  detail.append(el("h2", "", "Details"), el("div", "empty", "Click a rule to see its file, conditions and body; click a folder name for everything that applies there."));
  side.append(detail);
  side.append(sideList("Apply nowhere (dead globs)", D.dead.map(i => [i]), "Every glob matches a file."));
  side.append(sideList("Duplicated across files", D.duplicates, "No rule text is repeated.",
    "Same text in several files: identical copies are sent once, near-copies (blank lines, trailing spaces) twice."));
  if (D.conditional.length) side.append(sideList("Also need a model, branch or tool", D.conditional.map(i => [i]), "",
    "The map evaluates without a model, branch or tools, so these show only where nothing else holds them back."));
  if (D.errors.length) {
    const card = el("section", "card"); card.append(el("h2", "", "Errors"));
    for (const e of D.errors) card.append(el("p", "note", e.kind + " " + e.path + ": " + e.message));
    side.append(card);
  }
  main.append(left, side);
  document.body.append(main);
  setDepth(D.depth);
}
page();
"""
