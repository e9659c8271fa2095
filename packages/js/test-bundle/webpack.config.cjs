// The README's webpack 5 recipes for Node, built by scripts/pack-smoke.sh through webpack's Node
// API (`webpack(configs(outDir))`) into outDir/<name>: the package's own entry as an ES module
// (webpack sees the package's `new URL("...wasm", import.meta.url)` and emits the module beside
// the bundle: nothing to give init()), and `shaledb/inline` as CommonJS (one file). Not minified:
// terser would add ~6 s of CPU time to the test and nothing it checks (a minified build of both
// ran the same when this was written).
const { join } = require("node:path");

/** webpack's configurations, writing into `outDir`. */
module.exports = (outDir) => [
  {
    name: "webpack-esm",
    mode: "production",
    optimization: { minimize: false },
    target: "node20.19",
    context: __dirname,
    entry: "./app-plain.mjs",
    output: { path: join(outDir, "webpack-esm"), filename: "app.mjs", module: true, chunkFormat: "module" },
    experiments: { outputModule: true },
  },
  {
    name: "webpack-inline-cjs",
    mode: "production",
    optimization: { minimize: false },
    target: "node20.19",
    context: __dirname,
    entry: "./app-inline.mjs",
    output: { path: join(outDir, "webpack-inline-cjs"), filename: "app.cjs" },
  },
];
