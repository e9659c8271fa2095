#!/usr/bin/env node
// Checks that the top-level modules of a Rust crate depend on each other without cycles.
// Usage: node scripts/module-cycles.mjs <crate src dir>   (e.g. crates/core/src)
//
// A module is a top-level file or folder of src/ (`write/wal/reader.rs` belongs to `write`). It
// depends on another when its non-test code names `crate::other...`, directly or in a
// `crate::{a, b::c}` group. Comments and everything after a file's `#[cfg(test)]` are ignored.
// Prints the graph; exits 1 and names the modules on each cycle if there is one.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

const srcDir = process.argv[2];
if (!srcDir) {
  console.error("usage: node scripts/module-cycles.mjs <crate src dir>");
  process.exit(2);
}

function* rustFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* rustFiles(path);
    else if (name.endsWith(".rs")) yield path;
  }
}

/** The top-level module a file belongs to, or null for the crate root. */
function moduleOf(path) {
  const first = relative(srcDir, path).split(sep)[0].replace(/\.rs$/, "");
  return first === "lib" || first === "main" ? null : first;
}

/** The first path segments named after `crate::` in `code`, brace groups included. */
function namedModules(code) {
  const names = new Set();
  for (const m of code.matchAll(/crate::([a-z_0-9]+)/g)) names.add(m[1]);
  for (const m of code.matchAll(/crate::\{([^}]*)\}/g)) {
    for (const part of m[1].split(",")) {
      const name = part.trim().split("::")[0];
      if (/^[a-z_0-9]+$/.test(name)) names.add(name);
    }
  }
  return names;
}

const deps = new Map();
for (const file of rustFiles(srcDir)) {
  const mod = moduleOf(file);
  if (mod === null) continue;
  const code = readFileSync(file, "utf8")
    .split("#[cfg(test)]")[0]
    .split("\n")
    .filter((line) => !line.trim().startsWith("//"))
    .join("\n");
  if (!deps.has(mod)) deps.set(mod, new Set());
  for (const name of namedModules(code)) if (name !== mod) deps.get(mod).add(name);
}
for (const set of deps.values()) for (const name of set) if (!deps.has(name)) set.delete(name);

/** A path from `from` back to `to` through the graph, or null. */
function pathBetween(from, to, seen = new Set()) {
  for (const next of deps.get(from) ?? []) {
    if (next === to) return [from, to];
    if (seen.has(next)) continue;
    seen.add(next);
    const rest = pathBetween(next, to, seen);
    if (rest) return [from, ...rest];
  }
  return null;
}

const cycles = new Set();
for (const [mod, set] of [...deps].sort()) {
  console.log(`${mod} -> ${[...set].sort().join(" ")}`);
  const back = pathBetween(mod, mod);
  if (back) cycles.add(back.join(" -> "));
}
if (cycles.size) {
  console.error(`module cycles in ${srcDir}:\n  ${[...cycles].join("\n  ")}`);
  process.exit(1);
}
console.log(`no module cycles in ${srcDir}`);
