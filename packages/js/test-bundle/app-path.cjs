// The README's bundling recipe, CommonJS: the bundle beside a copy of shaledb.wasm.
const { join } = require("node:path");
const { init, open, openSync, version } = require("shaledb");
const { exercise } = require("./exercise.mjs");

init(join(__dirname, "shaledb.wasm"))
  .then(() => exercise({ open, openSync, version }, process.argv[2]))
  .then(console.log, (error) => {
    console.error(error);
    process.exitCode = 1;
  });
