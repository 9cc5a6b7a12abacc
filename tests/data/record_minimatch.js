// Records minimatch's answers for tests/data/minimatch.jsonl (the `continue` importer's
// glob dialect, docs/importers.md "Glob dialects"). Run once, on purpose:
//   node tests/data/record_minimatch.js /usr/lib/node_modules/npm/node_modules/minimatch > tests/data/minimatch.jsonl
// Continue calls minimatch(path, glob) with no options; `dot` is recorded too because
// pi-rules matches dot files in every dialect (a documented difference).
const { minimatch } = require(process.argv[2]);
const version = require(process.argv[2] + "/package.json").version;

const fixed = [
  "src/**/[!.]*.ts", "src/**/[^.]*.ts", "[!a]*.md", "[!ab]x", "[]]x", "[!]]x", "a[!/]b",
  "src/(a|b).ts", "src/@(a|b).ts", "src/!(a).ts", "src/*(a|b).ts", "src/+(a|b).ts", "src/?(a|b).ts",
  "a+b.ts", "[0-9]+.md", "v1+/**", "a|b", "docs/(draft)/*.md", "x(y", "x)y",
  "**/*.ts", "*.ts", "src/**", "src/*", "**/test/**/*.py", "{a,b}/*.md", "*.{ts,tsx}",
  "a\\(b\\).md", "a\\[b].md", "[[:alpha:]]*.md", "?.md", "**/.github/**", ".*", "**/*",
];
const atoms = ["a", "b", "*", "?", "**", "[!a]", "[^b]", "[ab]", "(a|b)", "@(a|b)", "+", "|", "{a,b}", ".", "x", "[!.]"];
let seed = 12345;
const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const generated = new Set();
while (generated.size < 120) {
  const segments = [];
  for (let s = 0, n = 1 + rand(3); s < n; s++) {
    let seg = "";
    for (let k = 0, m = 1 + rand(3); k < m; k++) seg += atoms[rand(atoms.length)];
    segments.push(seg);
  }
  generated.add(segments.join("/"));
}
const paths = [
  "src/utils/helper.ts", "src/utils/.helper.ts", "src/a.ts", "src/b.ts", "src/c.ts", "src/ab.ts",
  "src/(a|b).ts", "src/a+b.ts", "a+b.ts", "aab.ts", "1+.md", "11.md", "v1+/x", "a|b", "a", "b", "x",
  "docs/(draft)/x.md", "docs/d/x.md", "x(y", "x)y", "a(b).md", "a[b].md", "ab.md", "!x", "]x", "ax",
  "bx", "cx", "a/b", "a/a", "b/b", "ab/ab", "a.b", ".a", "x.ts", "x.tsx", "a/x.md", "b/x.md", ".github/x.yml",
  "a/.github/x", "test/a/b.py", "src/test/x/y.py", ".md", "a.md", "README.md", "?.md", "q.md", "a/b/c",
  "a+", "aa", "ba", "a.", "aab", "abab", "x/y/z.ts", ".x/y.ts",
];
const rows = [];
for (const pattern of [...fixed, ...generated]) {
  for (const path of paths) {
    rows.push({ pattern, path, match: minimatch(path, pattern), match_dot: minimatch(path, pattern, { dot: true }) });
  }
}
console.log(JSON.stringify({ minimatch: version, options: "{} (Continue's call) and {dot: true}" }));
for (const row of rows) console.log(JSON.stringify(row));
