/**
 * Calls into the WebAssembly module that no database is needed for: its version, and the test
 * helpers of `shaledb/testing` (`../testing.ts`). The module must be loaded (Node loads it on
 * first use; browsers: `await init()`).
 *
 * @module
 */
import { recordioArguments } from "../arguments/checks.js";
import { ShaleError } from "../errors.js";
import { call as callWasm, wasm } from "./instance.js";

/** The record compressions ShaleDB writes. (`lzw`, go-sstables' legacy codec, is read only.) */
export type Compression = "none" | "snappy" | "gzip";

/**
 * The RecordIO format written: `"shale"`, ShaleDB's own (every byte checksummed, compression per
 * record), or `"go-v4"`, go-sstables' version 4, for interchange.
 */
export type RecordioFormat = "shale" | "go-v4";

/** A RecordIO record: bytes (possibly empty), or `null` for a nil record. */
export type RecordValue = Uint8Array | null;

/**
 * The record compressions this WebAssembly module has, in the order `"none"`, `"snappy"`,
 * `"gzip"`. `"none"` and `"snappy"` are always in; gzip is an optional feature of the core,
 * left out of the package's build to keep the module small (the database never uses it).
 */
export function recordioCompressions(): Compression[] {
  return callWasm(() => wasm.recordioCompressions() as Compression[]);
}

/** The version of the ShaleDB core compiled into the WebAssembly module. */
export function version(): string {
  return callWasm(() => wasm.version());
}

/**
 * Writes `records` into an in-memory RecordIO file through the Rust core (`recordio::Writer`
 * over `MemoryStorage`) and reads them back (`recordio::Reader`). Returns the records read, in
 * order: equal to `records` unless the core has a bug. A smoke test of the whole stack.
 *
 * @throws {ShaleError} `INVALID_ARGUMENT` for `records` that is not an array, a record that is
 *   neither a `Uint8Array` nor `null`, an unknown compression or format;
 *   `UNSUPPORTED_COMPRESSION` for a compression the module lacks ({@link recordioCompressions});
 *   any error of the core.
 */
export function recordioRoundTrip(
  records: readonly RecordValue[],
  options?: { compression?: Compression; format?: RecordioFormat },
): RecordValue[] {
  const checked = recordioArguments(records, options);
  return callWasm(() =>
    wasm.recordioRoundTrip(checked.records as RecordValue[], checked.compression, checked.format),
  );
}

/** Triggers a panic inside the WebAssembly module. For tests of the panic path only. @internal */
export function debugPanic(message: string): never {
  callWasm(() => wasm.debugPanic(message));
  throw new ShaleError("PANIC", "shaledb: debugPanic returned");
}
