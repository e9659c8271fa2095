/**
 * Whether the WebAssembly module is instantiated, and whether a panic has poisoned it. Internal:
 * not re-exported by the entry points.
 *
 * @module
 */

type State = "uninitialized" | "ready" | "panicked";

let state: State = "uninitialized";
let panicMessage = "";

/** Marks the module as instantiated (by an entry point's `init()`). */
export function markReady(): void {
  if (state === "uninitialized") {
    state = "ready";
  }
}

/** Whether `init()` has completed. */
export function isReady(): boolean {
  return state !== "uninitialized";
}

/** Records that the module trapped: every later call fails with `PANIC`. */
export function poison(message: string): void {
  state = "panicked";
  panicMessage = message;
}

/** The current state and, once panicked, the panic's message. */
export function status(): { state: State; panicMessage: string } {
  return { state, panicMessage };
}
