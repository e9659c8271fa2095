// The package's entry with nothing given to init(), for a bundler that carries the `.wasm` the
// package names by `new URL("...", import.meta.url)`: webpack emits it beside the bundle.
import { open, openSync, version } from "shaledb";

import { exercise } from "./exercise.mjs";

console.log(await exercise({ open, openSync, version }, process.argv[2]));
