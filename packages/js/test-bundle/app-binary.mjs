// The README's other recipe: the module imported as bytes (esbuild's `--loader:.wasm=binary`).
import { init, open, openSync, version } from "shaledb";
import shaledbWasm from "shaledb/shaledb.wasm";

import { exercise } from "./exercise.mjs";

await init(shaledbWasm);
console.log(await exercise({ open, openSync, version }, process.argv[2]));
