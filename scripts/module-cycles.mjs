#!/usr/bin/env node
// Checks that the modules of a Rust crate depend on each other without cycles: the top-level
// modules, and the files within every folder.
// Usage: node scripts/module-cycles.mjs <crate src dir>   (e.g. crates/core/src)
//
// A file depends on another when its non-test code names that file's module by a path: in a
// `use` (brace groups and `self` included) or inline in the code, starting with `crate::`,
// `self::`, `super::` or the name of one of the file's own child modules. The path resolves to
// the deepest module it names: `crate::db::core::DbInner` is `db/core.rs`, `crate::db::Db` is
// `db/mod.rs`, `super::x::Y` from `db/changes/feed.rs` is `db/x.rs`. So a `pub use x::Y` in a
// `mod.rs` makes the `mod.rs` depend on `x.rs`, and a file that names `crate::db::Y` depends on
// `db/mod.rs` (and through it on whatever that re-exports). A `mod x;` declaration is not a
// dependency. Comments, strings and every item under a test-only `#[cfg(...)]` (`test`,
// `all(test, ...)`) are ignored. The crate root
// (`lib.rs`, `main.rs`) is left out: it is the crate's public face, and every file names
// `crate::Result` through it.
//
// A top-level module is a top-level file or folder of src/ (`write/wal/reader.rs` belongs to
// `write`); it depends on another when one of its files depends on one of the other's.
// Prints the module graph and whether there are file cycles; exits 1 and names the modules or
// files on each cycle (with the names each file takes from the next) if there is one.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

const srcDir = process.argv[2];
if (!srcDir) {
  console.error("usage: node scripts/module-cycles.mjs <crate src dir>");
  process.exit(2);
}

function* rustFiles(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* rustFiles(path);
    else if (name.endsWith(".rs")) yield path;
  }
}

/** The module path of a file, relative to src/: `db/core.rs` is `db/core`, `db/mod.rs` is `db`. */
function modulePathOf(file) {
  const parts = file.replace(/\.rs$/, "").split("/");
  if (parts.at(-1) === "mod") parts.pop();
  if (parts.length === 1 && (parts[0] === "lib" || parts[0] === "main")) return "";
  return parts.join("/");
}

/** `code` without comments, string and character literals (their contents become spaces). */
function stripLiterals(code) {
  let out = "";
  let i = 0;
  const n = code.length;
  while (i < n) {
    const c = code[i];
    const next = code[i + 1];
    if (c === "/" && next === "/") {
      while (i < n && code[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      let depth = 0;
      do {
        if (code[i] === "/" && code[i + 1] === "*") (depth++, (i += 2));
        else if (code[i] === "*" && code[i + 1] === "/") (depth--, (i += 2));
        else i++;
      } while (i < n && depth > 0);
      out += " ";
    } else if (/[rb]/.test(c) && /^(?:b?r#*"|b")/.test(code.slice(i, i + 4)) && !/\w/.test(code[i - 1] ?? "")) {
      const m = /^(b?)(r?)(#*)"/.exec(code.slice(i));
      i += m[0].length;
      if (m[2]) {
        const end = `"${m[3]}`;
        const at = code.indexOf(end, i);
        i = at < 0 ? n : at + end.length;
      } else {
        while (i < n && code[i] !== '"') i += code[i] === "\\" ? 2 : 1;
        i++;
      }
      out += '""';
    } else if (c === '"') {
      i++;
      while (i < n && code[i] !== '"') i += code[i] === "\\" ? 2 : 1;
      i++;
      out += '""';
    } else if (c === "'") {
      // A character literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
      if (next === "\\") {
        const at = code.indexOf("'", i + 3);
        i = at < 0 ? n : at + 1;
        out += "' '";
      } else if (code[i + 2] === "'" || code.codePointAt(i + 1) > 0xffff) {
        i += code.codePointAt(i + 1) > 0xffff ? 4 : 3;
        out += "' '";
      } else {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Whether a `#[cfg(...)]` condition holds only in tests: `test`, or `all(...)` with `test` in it. */
function testOnly(condition) {
  const c = condition.replace(/\s+/g, "");
  if (c === "test") return true;
  const all = /^all\((.*)\)$/.exec(c);
  if (!all) return false;
  let depth = 0;
  let start = 0;
  const args = [];
  for (let i = 0; i <= all[1].length; i++) {
    const ch = all[1][i];
    if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if ((ch === "," && depth === 0) || i === all[1].length) (args.push(all[1].slice(start, i)), (start = i + 1));
  }
  return args.includes("test");
}

/** `code` (already stripped) without the items under a test-only `#[cfg(...)]`. */
function stripTestItems(code) {
  let out = code;
  let from = 0;
  for (;;) {
    const cfg = /#\s*\[\s*cfg\s*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)\s*\]/g;
    cfg.lastIndex = from;
    const m = cfg.exec(out);
    if (!m) return out;
    if (!testOnly(m[1])) {
      from = m.index + m[0].length;
      continue;
    }
    const at = m.index;
    let i = at + m[0].length;
    let depth = 0;
    while (i < out.length) {
      const c = out[i];
      if (c === "(" || c === "[") depth++;
      else if (c === ")" || c === "]") depth--;
      else if (depth === 0 && c === ";") {
        i++;
        break;
      } else if (depth === 0 && c === "{") {
        let braces = 0;
        for (; i < out.length; i++) {
          if (out[i] === "{") braces++;
          else if (out[i] === "}" && --braces === 0) break;
        }
        i++;
        break;
      }
      i++;
    }
    out = out.slice(0, at) + out.slice(i);
  }
}

/** The paths of a use tree (`a::{b, c::{self, D}}` gives `a::b`, `a::c`, `a::c::D`), as segment lists. */
function useTreePaths(tree) {
  // `x as y` keeps `x`: the dependency is on what is named.
  tree = tree.replace(/\s+as\s+\w+/g, "").replace(/\s+/g, "");
  const paths = [];
  const walk = (prefix, text) => {
    // Split the top level of a brace group's contents on commas.
    const brace = text.indexOf("{");
    if (brace < 0) {
      const segs = text.split("::").filter(Boolean);
      const path = [...prefix, ...segs].filter((s) => s !== "*");
      if (path.at(-1) === "self") path.pop();
      if (path.length) paths.push(path);
      return;
    }
    const head = text.slice(0, brace).split("::").filter(Boolean);
    const inner = text.slice(brace + 1, text.lastIndexOf("}"));
    let depth = 0;
    let start = 0;
    for (let i = 0; i <= inner.length; i++) {
      const c = inner[i];
      if (c === "{") depth++;
      else if (c === "}") depth--;
      else if ((c === "," && depth === 0) || i === inner.length) {
        const part = inner.slice(start, i);
        if (part) walk([...prefix, ...head], part);
        start = i + 1;
      }
    }
  };
  walk([], tree);
  return paths;
}

const files = [...rustFiles(srcDir)].map((p) => relative(srcDir, p).split(sep).join("/"));
const moduleFile = new Map(files.map((f) => [modulePathOf(f), f]));
const hasModule = (path) => moduleFile.has(path.join("/"));

/**
 * The file a path names from module `self`, and the first name after the module (or null when the
 * path leaves the crate or names an item of the crate root only).
 */
function resolve(self, segs) {
  let base;
  let rest;
  if (segs[0] === "crate") [base, rest] = [[], segs.slice(1)];
  else if (segs[0] === "self") [base, rest] = [self, segs.slice(1)];
  else if (segs[0] === "super") {
    base = [...self];
    rest = [...segs];
    while (rest[0] === "super") (base.pop(), rest.shift());
  } else if (hasModule([...self, segs[0]])) [base, rest] = [self, segs];
  else return null;
  const module = [...base];
  let i = 0;
  while (i < rest.length && hasModule([...module, rest[i]])) module.push(rest[i++]);
  const file = moduleFile.get(module.join("/"));
  return file ? { file, name: rest[i] ?? module.at(-1) ?? "crate" } : null;
}

/** file -> (file it depends on -> names it takes from it) */
const deps = new Map();
for (const file of files) {
  const self = modulePathOf(file) ? modulePathOf(file).split("/") : [];
  if (!self.length) continue;
  let code = stripTestItems(stripLiterals(readFileSync(join(srcDir, file), "utf8")));
  code = code.replace(/\bpub\s*\(\s*in\s+[^)]*\)/g, "pub");
  const paths = [];
  code = code.replace(/\buse\s+([^;]+);/g, (_, tree) => {
    paths.push(...useTreePaths(tree));
    return ";";
  });
  const ident = "[A-Za-z_][A-Za-z0-9_]*";
  const inline = new RegExp(`(?<![\\w:])(${ident}(?:\\s*::\\s*${ident})+)`, "g");
  for (const m of code.matchAll(inline)) paths.push(m[1].split(/\s*::\s*/));
  const out = new Map();
  for (const segs of paths) {
    const target = resolve(self, segs);
    if (!target || target.file === file || !modulePathOf(target.file)) continue;
    if (!out.has(target.file)) out.set(target.file, new Set());
    out.get(target.file).add(target.name);
  }
  deps.set(file, out);
}

// The top-level modules, as before: their graph is printed, and a cycle between them fails.
const topOf = (file) => modulePathOf(file).split("/")[0];
const modules = new Map();
for (const [file, out] of deps) {
  const from = topOf(file);
  if (!modules.has(from)) modules.set(from, new Set());
  for (const target of out.keys()) if (topOf(target) !== from) modules.get(from).add(topOf(target));
}

/** A shortest path from `from` back to `to` in `graph` (node -> iterable of nodes), or null. */
function shortestPath(graph, from, to) {
  const before = new Map([[from, null]]);
  const queue = [from];
  while (queue.length) {
    const node = queue.shift();
    for (const next of graph(node)) {
      if (next === to) {
        const path = [to];
        for (let at = node; at !== null; at = before.get(at)) path.unshift(at);
        return path;
      }
      if (!before.has(next)) (before.set(next, node), queue.push(next));
    }
  }
  return null;
}

/** Cycles of `graph` over `nodes`: a shortest one through each node not yet on one printed. */
function cyclesOf(nodes, graph) {
  const covered = new Set();
  const cycles = [];
  for (const node of nodes) {
    if (covered.has(node)) continue;
    const cycle = shortestPath(graph, node, node);
    if (!cycle) continue;
    cycle.forEach((n) => covered.add(n));
    cycles.push(cycle);
  }
  return cycles;
}

let failed = false;
for (const [mod, set] of [...modules].sort()) console.log(`${mod} -> ${[...set].sort().join(" ")}`);
const moduleCycles = cyclesOf([...modules.keys()].sort(), (m) => modules.get(m) ?? []);
if (moduleCycles.length) {
  console.error(`module cycles in ${srcDir}:\n  ${moduleCycles.map((c) => c.join(" -> ")).join("\n  ")}`);
  failed = true;
} else {
  console.log(`no module cycles in ${srcDir}`);
}

const fileCycles = cyclesOf([...deps.keys()].sort(), (f) => [...(deps.get(f)?.keys() ?? [])].sort());
const edgeCount = [...deps.values()].reduce((sum, out) => sum + out.size, 0);
if (fileCycles.length) {
  console.error(`file cycles in ${srcDir} (each file names the next; the names taken in brackets):`);
  for (const cycle of fileCycles) {
    const steps = cycle.slice(1).map((to, i) => {
      const names = [...deps.get(cycle[i]).get(to)].sort().join(", ");
      return `-[${names}]-> ${to}`;
    });
    console.error(`  ${cycle[0]} ${steps.join(" ")}`);
  }
  failed = true;
} else {
  console.log(`no file cycles in ${srcDir} (${deps.size} files, ${edgeCount} dependencies)`);
}
// exitCode rather than exit(): pending writes to a piped stdout or stderr are not cut off.
process.exitCode = failed ? 1 : 0;
