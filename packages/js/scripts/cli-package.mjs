// Makes the npm package of the command-line tool for one platform, `@shaledb/cli-<platform>`
// (e.g. `@shaledb/cli-linux-x64`), from a `shaledb` binary built for it and the package's
// template, the workspace packages/cli-<platform>: a directory holding its package.json with
// `os`, `cpu` and, on Linux, `libc` fields added (so that npm installs it only there), its
// README.md and bin/shaledb (bin/shaledb.exe on Windows), the binary stripped of its symbols.
// `npm pack` or `npm publish` that directory. The `shaledb` package's launcher
// (src/bin/shaledb.ts) runs it.
//
//   node packages/js/scripts/cli-package.mjs <binary> <out-dir> [--platform linux-x64] [--no-strip]
//
// At release: `cargo build --release -p shaledb-cli` on (or for) each platform, then this script
// with its --platform (the host's by default). A new platform: copy packages/cli-linux-x64 to
// packages/cli-<platform> (its name, description and `files` changed), and add it to the root's
// workspaces and to the optional dependencies of packages/js/package.json. Stripping runs `strip` ($STRIP
// names another, e.g. a cross toolchain's); --no-strip copies the binary as it is.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const usage = "usage: node cli-package.mjs <binary> <out-dir> [--platform <os>-<cpu>] [--no-strip]";

/** Prints `message` and exits with 2 (bad input). */
function fail(message) {
  console.error(`cli-package: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
let platform = `${process.platform}-${process.arch}`;
let strip = true;
const positional = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--platform") {
    platform = args[++i] ?? fail(usage);
  } else if (args[i] === "--no-strip") {
    strip = false;
  } else if (args[i].startsWith("-")) {
    fail(`unknown option ${args[i]}\n${usage}`);
  } else {
    positional.push(args[i]);
  }
}
if (positional.length !== 2) {
  fail(usage);
}
const [binary, outDir] = positional;

const main = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const name = `@shaledb/cli-${platform}`;
if (main.optionalDependencies?.[name] === undefined) {
  fail(`${name} is not an optional dependency of shaledb (packages/js/package.json): add it there first`);
}
if (main.optionalDependencies[name] !== main.version) {
  fail(`shaledb ${main.version} lists ${name}@${main.optionalDependencies[name]}: the versions must be the same`);
}
const [os, cpu] = platform.split("-");
const templateDir = new URL(`../../cli-${platform}/`, import.meta.url);
let template;
try {
  template = JSON.parse(readFileSync(new URL("package.json", templateDir), "utf8"));
} catch (error) {
  fail(`no template packages/cli-${platform}/package.json (${error.message}): copy packages/cli-linux-x64`);
}
if (template.name !== name || template.version !== main.version) {
  fail(`packages/cli-${platform}/package.json is ${template.name}@${template.version}, expected ${name}@${main.version}`);
}

// The binary's format must be the platform's: ELF (Linux), Mach-O (macOS), PE (Windows).
const magics = { linux: ["7f454c46"], darwin: ["cffaedfe", "cefaedfe", "cafebabe"], win32: ["4d5a"] };
if (magics[os] === undefined || cpu === undefined) {
  fail(`unknown platform ${platform} (expected linux-, darwin- or win32- and a Node process.arch)`);
}
let head;
try {
  if (!statSync(binary).isFile()) {
    fail(`${binary} is not a file`);
  }
  const fd = openSync(binary, "r");
  head = Buffer.alloc(4);
  readSync(fd, head, 0, 4, 0);
  closeSync(fd);
} catch (error) {
  fail(`cannot read ${binary}: ${error.message}`);
}
if (!magics[os].some((magic) => head.toString("hex").startsWith(magic))) {
  fail(`${binary} is not a ${os} executable (its first bytes are ${head.toString("hex")})`);
}

const executable = os === "win32" ? "shaledb.exe" : "shaledb";
if (resolve(outDir) === resolve(fileURLToPath(templateDir))) {
  fail(`the output directory ${outDir} is the template itself: name another (it is emptied first)`);
}
rmSync(outDir, { recursive: true, force: true });
mkdirSync(join(outDir, "bin"), { recursive: true });
const target = join(outDir, "bin", executable);
copyFileSync(binary, target);
if (strip) {
  execFileSync(process.env.STRIP || "strip", [target], { stdio: "inherit" });
}
chmodSync(target, 0o755);

if (JSON.stringify(template.files) !== JSON.stringify([`bin/${executable}`])) {
  fail(`packages/cli-${platform}/package.json: "files" must be ["bin/${executable}"]`);
}
// The template is private, so that it is not published by mistake without these fields.
const { private: _private, ...published } = template;
const manifest = { ...published, os: [os], cpu: [cpu], ...(os === "linux" ? { libc: ["glibc"] } : {}) };
writeFileSync(join(outDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
// The README without its paragraph about the repository's template.
const readme = readFileSync(new URL("README.md", templateDir), "utf8").split("\n\nIn the repository")[0];
writeFileSync(join(outDir, "README.md"), `${readme.trimEnd()}\n`);
console.log(`${outDir}: ${name}@${main.version}, bin/${executable} ${statSync(target).size} bytes${strip ? " (stripped)" : ""}`);
