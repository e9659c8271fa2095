/**
 * The WebAssembly instance: loading it, calling into it, and replacing it after a panic.
 *
 * A panic in Rust (a bug) traps the instance and leaves its memory in an unknown state. Then
 * every handle of that instance fails with `PANIC` (handles remember the generation of the
 * instance that made them), the listeners registered with {@link onPanic} release what the dead
 * instance held (open files, locks), and the next load instantiates a fresh module.
 *
 * @module
 */
import * as wasm from "../../wasm/shaledb_wasm.js";
import { ShaleError, type ShaleErrorCode } from "../errors.js";
import { noteModuleExports } from "./module-parts.js";

type State = "uninitialized" | "ready" | "panicked";

let state: State = "uninitialized";
let panicMessage = "";
/** Increments with every instantiation; 0 before the first. */
let generation = 0;
let syncLoader: (() => void) | undefined;
const panicListeners = new Set<() => void>();

/** The raw exports of the current instance (call them through {@link call}). */
export { wasm };

/** Whether the next instance continues the generation of one let go while idle. */
let resumeGeneration = false;

/**
 * Records that a fresh instance, with `exports`, is ready (called by the entry points after
 * instantiating).
 */
export function markReady(exports: object): void {
  noteModuleExports(exports);
  state = "ready";
  if (!resumeGeneration) {
    generation += 1;
  }
  resumeGeneration = false;
}

/**
 * Lets go of the current instance while nothing is open on it, so that its memory (which
 * WebAssembly never shrinks: a 100 MiB value leaves it 100s of MiB large) is freed; the next
 * call instantiates a fresh one. Only where a synchronous loader is registered (Node). The
 * generation stays: every handle of the old instance is closed, and reports `CLOSED` as before.
 * Returns whether it let go.
 */
export function releaseIdleInstance(): boolean {
  if (state !== "ready" || syncLoader === undefined) {
    return false;
  }
  state = "uninitialized";
  resumeGeneration = true;
  wasm.forgetInstance();
  return true;
}

/** Whether an instance is ready for calls. */
export function isReady(): boolean {
  return state === "ready";
}

/** Whether the module must be (re)loaded before use: never loaded, or panicked. */
export function needsLoad(): boolean {
  return state !== "ready";
}

/** The generation of the current instance; a handle made by an older one is dead. */
export function currentGeneration(): number {
  return generation;
}

/** Registers how to instantiate the module synchronously (Node). */
export function setSyncLoader(loader: () => void): void {
  syncLoader = loader;
}

/** Makes sure an instance is ready, loading a fresh one synchronously if needed (Node). */
export function ensureLoadedSync(): void {
  if (state === "ready") {
    return;
  }
  if (syncLoader === undefined) {
    throw new ShaleError("NOT_INITIALIZED", "shaledb: call and await init() first");
  }
  syncLoader();
}

/**
 * Calls `fn` to release resources if the instance panics; returns a function that unregisters
 * it. Listeners run once, right after the panic is detected.
 */
export function onPanic(listener: () => void): () => void {
  panicListeners.add(listener);
  return () => panicListeners.delete(listener);
}

/** Throws `PANIC` if `handleGeneration` is not the current, live instance. */
export function checkGeneration(handleGeneration: number): void {
  // An instance let go while idle (`releaseIdleInstance`) is not dead: its handles are closed,
  // and say so themselves.
  const live = state === "ready" || (state === "uninitialized" && resumeGeneration);
  if (handleGeneration !== generation || !live) {
    throw new ShaleError(
      "PANIC",
      `shaledb: the WebAssembly module panicked earlier (${panicMessage || "unknown cause"}); ` +
        "this handle is dead, open the database again",
    );
  }
}

function hasStringCode(error: unknown): error is Error & { code: string } {
  return error instanceof Error && typeof (error as { code?: unknown }).code === "string";
}

/**
 * Runs `fn`, a call into the instance, translating what comes out: a core error (a JS `Error`
 * with a `code`) becomes a {@link ShaleError} with that code; a trap becomes `PANIC`, kills the
 * instance and runs the panic listeners.
 */
export function call<T>(fn: () => T): T {
  if (state === "uninitialized" && syncLoader !== undefined) {
    syncLoader();
  }
  if (state !== "ready") {
    if (state === "uninitialized") {
      throw new ShaleError("NOT_INITIALIZED", "shaledb: call and await init() first");
    }
    throw new ShaleError(
      "PANIC",
      `shaledb: the WebAssembly module panicked earlier and cannot be used: ${panicMessage}`,
    );
  }
  try {
    return fn();
  } catch (error) {
    throw translateError(error);
  }
}

/**
 * What {@link call} throws for `error`, thrown by a call into the instance. For hot paths that
 * call the instance directly (no closure) after checking their handle, which implies a ready
 * instance.
 */
export function translateError(error: unknown): unknown {
  if (error instanceof WebAssembly.RuntimeError) {
    let message = error.message;
    try {
      message = wasm.takePanicMessage() ?? message;
    } catch {
      // The instance may be too broken to answer; keep the trap's message.
    }
    poison(message);
    return new ShaleError("PANIC", `shaledb: panic in WebAssembly: ${message}`, { cause: error });
  }
  if (error instanceof ShaleError) {
    return error;
  }
  if (hasStringCode(error)) {
    const details = errorDetails(error);
    return new ShaleError(error.code as ShaleErrorCode, error.message, { cause: error, details });
  }
  return error;
}

/** The figures the module set on error `error` (`ShaleError.details`), if any. */
function errorDetails(error: object): Record<string, number> | undefined {
  let details: Record<string, number> | undefined;
  for (const name of DETAIL_NAMES) {
    const value = (error as Record<string, unknown>)[name];
    if (typeof value === "number") {
      details ??= {};
      details[name] = value;
    }
  }
  return details;
}

/** The properties of the module's errors that are figures (`crates/wasm/src/errors.rs`). */
const DETAIL_NAMES = ["first", "next", "since", "oldest", "expected", "got"] as const;

function poison(message: string): void {
  state = "panicked";
  panicMessage = message;
  wasm.forgetInstance();
  const listeners = [...panicListeners];
  panicListeners.clear();
  for (const listener of listeners) {
    try {
      listener();
    } catch {
      // Releasing is best effort; one failure must not keep the others from running.
    }
  }
}
