// ShaleDB's Promise API with `engineThread: "caller"`: the engine in the calling thread, no thread
// hop per call (the Promise API's other mode; see shaledb-promise.mjs).
import { createAdapter as promiseAdapter } from "./shaledb-promise.mjs";

/** @returns {import("./index.mjs").Adapter} */
export function createAdapter() {
  return promiseAdapter("caller");
}
