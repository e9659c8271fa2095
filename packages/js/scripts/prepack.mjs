// `npm pack` / `npm publish` (the prepack script): makes sure what the tarball holds is built.
// Builds the WebAssembly module (scripts/build-wasm.sh at the repository's root: needs Rust and
// wasm-bindgen, see docs/CONTRIBUTING.md) if it is missing, and the package (npm run build) if
// any of its outputs is missing. When both are there it does nothing: rebuild them yourself
// after changing the sources (the test command does).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const here = (path) => new URL(`../${path}`, import.meta.url);
const run = (command, args, cwd) => {
  console.log(`prepack: ${command} ${args.join(" ")}`);
  execFileSync(command, args, { stdio: "inherit", cwd: cwd === undefined ? undefined : cwd });
};

if (
  !existsSync(here("wasm/shaledb_wasm_bg.wasm")) ||
  !existsSync(here("wasm/shaledb_kv_bg.wasm")) ||
  !existsSync(here("wasm/shaledb_wasm.js"))
) {
  run("bash", ["scripts/build-wasm.sh"], new URL("../../..", import.meta.url));
}
const outputs = ["dist/node.js", "dist/browser.js", "dist/browser/worker.js", "dist/node-inline.js", "dist/wasm-inline.js"];
if (outputs.some((path) => !existsSync(here(path)))) {
  run("npm", ["run", "build"], here(""));
}
