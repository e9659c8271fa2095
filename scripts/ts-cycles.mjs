#!/usr/bin/env node
// Checks that the files of a TypeScript tree import each other without cycles.
// Usage: node scripts/ts-cycles.mjs <src dir>   (e.g. packages/js/src)
//
// A file depends on another when it imports or re-exports from it (`import ... from "./x.js"`,
// `import type`, `export ... from`, `import("./x.js")` in a type) by a relative path. Every
// such edge counts, type-only ones too: a cycle of types is a tangle of concepts even where
// it costs nothing at run time. Prints each folder's imports of other folders; exits 1 and
// prints every cycle (as the files on it) if there is one.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const srcDir = process.argv[2];
if (!srcDir) {
  console.error("usage: node scripts/ts-cycles.mjs <src dir>");
  process.exit(2);
}
const root = resolve(srcDir);

function* tsFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* tsFiles(path);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) yield path;
  }
}

/** The files of this tree that `file` imports by relative path. */
function importsOf(file, code) {
  const out = new Set();
  const specifiers = [
    ...code.matchAll(/\bfrom\s+"(\.[^"]+)"/g),
    ...code.matchAll(/\bimport\s*\(\s*"(\.[^"]+)"\s*\)/g),
    ...code.matchAll(/^\s*import\s+"(\.[^"]+)"/gm),
  ];
  for (const [, spec] of specifiers) {
    const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
    if (target.startsWith(root + sep)) out.add(target);
  }
  return out;
}

const deps = new Map();
for (const file of tsFiles(root)) {
  // Comments may name files (`../x.ts`) but import nothing.
  const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  deps.set(file, importsOf(file, code));
}
for (const set of deps.values()) for (const f of set) if (!deps.has(f)) set.delete(f);

// Strongly connected components (Tarjan): each with more than one file is a cycle.
let index = 0;
const indexOf = new Map(), low = new Map(), stack = [], onStack = new Set(), cycles = [];
function visit(v) {
  indexOf.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of deps.get(v)) {
    if (!indexOf.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v), indexOf.get(w)));
    }
  }
  if (low.get(v) === indexOf.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component);
  }
}
for (const v of deps.keys()) if (!indexOf.has(v)) visit(v);

const rel = (f) => relative(root, f);
const folderOf = (f) => dirname(rel(f)) || ".";
const folders = new Map();
for (const [file, set] of deps) {
  const from = folderOf(file);
  if (!folders.has(from)) folders.set(from, new Set());
  for (const target of set) if (folderOf(target) !== from) folders.get(from).add(folderOf(target));
}
for (const [folder, set] of [...folders].sort()) console.log(`${folder} -> ${[...set].sort().join(" ")}`);
if (cycles.length) {
  console.error(`import cycles in ${srcDir}:`);
  for (const c of cycles) console.error(`  ${c.map(rel).sort().join(", ")}`);
  process.exit(1);
}
console.log(`no import cycles between the ${deps.size} files of ${srcDir}`);
