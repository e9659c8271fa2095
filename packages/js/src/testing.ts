/**
 * `shaledb/testing`: helpers for testing ShaleDB itself, kept out of the main entry. In browsers
 * load the module first (`await init()` from `shaledb`); in Node the `node` condition's entry
 * (`testing-node.ts`) loads it on first use.
 *
 * @module
 */
export {
  debugPanic,
  recordioCompressions,
  recordioRoundTrip,
  type Compression,
  type RecordValue,
  type RecordioFormat,
} from "./engine/module-functions.js";
