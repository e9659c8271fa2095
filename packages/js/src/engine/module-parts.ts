/**
 * The parts of the engine a WebAssembly module may leave out. The package has two modules:
 * `wasm/shaledb_wasm_bg.wasm`, the whole engine, and `wasm/shaledb_kv_bg.wasm`, the key-value
 * engine alone (keyspaces, batches, iterators, snapshots, transactions, maintenance, checkpoints
 * and export), without queues, topics, the change feed and verify: the bindings built without
 * their `full` feature, whose exports `crates/wasm/full-exports.json` lists. Both run with the
 * same glue. Using a part the loaded module lacks is `NOT_IN_MODULE`.
 *
 * @module
 */
import { ShaleError } from "../errors.js";

/** A part of the engine the key-value module leaves out. */
export type EnginePart = "queues" | "topics" | "changes" | "verify";

/**
 * For each part, the export present exactly when the part is: the first export listed for it
 * in `crates/wasm/full-exports.json` (a test checks the two agree).
 */
export const PART_PROBES: Readonly<Record<EnginePart, string>> = {
  queues: "dbQueue",
  topics: "dbTopic",
  changes: "dbChangesRead",
  verify: "verifyStorage",
};

const DESCRIPTIONS: Readonly<Record<EnginePart, string>> = {
  queues: "queues",
  topics: "topic logs",
  changes: "change feed",
  verify: "verify",
};

/** The parts the current instance lacks (none until a module is loaded). */
let missing = new Set<EnginePart>();

/** Records which parts the instance just made has, from its `exports`. */
export function noteModuleExports(exports: object): void {
  const present = exports as Readonly<Record<string, unknown>>;
  missing = new Set(
    (Object.keys(PART_PROBES) as EnginePart[]).filter((part) => typeof present[PART_PROBES[part]] !== "function"),
  );
}

/** Throws `NOT_IN_MODULE` if the loaded module lacks `part`. */
export function requirePart(part: EnginePart): void {
  if (missing.has(part)) {
    throw new ShaleError(
      "NOT_IN_MODULE",
      `shaledb: the loaded WebAssembly module has no ${DESCRIPTIONS[part]}: it is the key-value ` +
        "module (shaledb_kv_bg.wasm); open without `module: \"kv\"` (or init() with " +
        "shaledb_wasm_bg.wasm) for the whole engine",
    );
  }
}
