/**
 * The environment-independent part of the `shaledb` API. The entry points `node.ts` and
 * `browser.ts` add `init()`, which loads the WebAssembly module the way each environment can.
 *
 * @module
 */
import * as wasm from "../wasm/shaledb_wasm.js";
import { poison, status } from "./state.js";

/**
 * Stable error codes, shared with the Rust core (`shaledb::Error::code`). New codes may be added
 * in minor versions; `PANIC` means a bug inside the WebAssembly module (the module is then
 * unusable, and every later call fails with `PANIC` too), `NOT_INITIALIZED` that `init()` has not
 * completed.
 */
export type ShaleErrorCode =
  | "IO"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "LOCKED"
  | "CORRUPTION"
  | "VERSION_UNSUPPORTED"
  | "UNSUPPORTED_COMPRESSION"
  | "RECORD_TOO_LARGE"
  | "INVALID_ARGUMENT"
  | "CLOSED"
  | "PANIC"
  | "NOT_INITIALIZED";

/** Every error thrown by `shaledb`. Test `code`, not the message: codes are stable. */
export class ShaleError extends Error {
  /** The stable code of this error. */
  readonly code: ShaleErrorCode;

  constructor(code: ShaleErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ShaleError";
    this.code = code;
  }
}

/** The record compressions ShaleDB writes. (`lzw`, go-sstables' legacy codec, is read only.) */
export type Compression = "none" | "snappy" | "gzip";

/**
 * The RecordIO format written: `"shale"`, ShaleDB's own (every byte checksummed, compression per
 * record), or `"go-v4"`, go-sstables' version 4, for interchange.
 */
export type RecordioFormat = "shale" | "go-v4";

/** A RecordIO record: bytes (possibly empty), or `null` for a nil record. */
export type RecordValue = Uint8Array | null;

function hasStringCode(error: unknown): error is Error & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === "string"
  );
}

/**
 * Runs `call` into the WebAssembly module, translating what comes out of it: a core error (a JS
 * `Error` with a `code`) becomes a {@link ShaleError} with that code; a trap (a panic in Rust)
 * becomes a `PANIC` error and poisons the module.
 */
function callWasm<T>(call: () => T): T {
  const { state, panicMessage } = status();
  if (state === "uninitialized") {
    throw new ShaleError("NOT_INITIALIZED", "shaledb: call and await init() first");
  }
  if (state === "panicked") {
    throw new ShaleError(
      "PANIC",
      `shaledb: the WebAssembly module panicked earlier and cannot be used: ${panicMessage}`,
    );
  }
  try {
    return call();
  } catch (error) {
    if (error instanceof WebAssembly.RuntimeError) {
      let message = error.message;
      try {
        message = wasm.takePanicMessage() ?? message;
      } catch {
        // The instance may be too broken to answer; keep the trap's message.
      }
      poison(message);
      throw new ShaleError("PANIC", `shaledb: panic in WebAssembly: ${message}`, {
        cause: error,
      });
    }
    if (hasStringCode(error)) {
      throw new ShaleError(error.code as ShaleErrorCode, error.message, { cause: error });
    }
    throw error;
  }
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
 * @throws {ShaleError} `INVALID_ARGUMENT` for an unknown compression or format or a record that is
 *   neither a `Uint8Array` nor `null`; any error of the core.
 */
export function recordioRoundTrip(
  records: readonly RecordValue[],
  options: { compression?: Compression; format?: RecordioFormat } = {},
): RecordValue[] {
  const compression: string = options.compression ?? "none";
  const format: string = options.format ?? "shale";
  return callWasm(() => wasm.recordioRoundTrip([...records], compression, format));
}

/** Triggers a panic inside the WebAssembly module. For tests of the panic path only. @internal */
export function debugPanic(message: string): never {
  callWasm(() => wasm.debugPanic(message));
  throw new ShaleError("PANIC", "shaledb: debugPanic returned");
}
