// The README's bundling recipe, ES modules: the bundle beside a copy of shaledb.wasm.
import { init, open, openSync, version } from "shaledb";

import { exercise } from "./exercise.mjs";

await init(new URL("./shaledb.wasm", import.meta.url));
console.log(await exercise({ open, openSync, version }, process.argv[2]));
