/**
 * The WebAssembly module compiled in this thread, kept for every instantiation: the one given to
 * `init()` (or by the inline entry, or by the engine worker's owner), else the package's own.
 *
 * @module
 */

let wasmModule: WebAssembly.Module | undefined;

/** The compiled module, once one was given or loaded (the engine worker gets it too). */
export function compiledModule(): WebAssembly.Module | undefined {
  return wasmModule;
}

/** Uses `module` for every later load in this thread, unless one was given or loaded already. */
export function provideModule(module: WebAssembly.Module): void {
  wasmModule ??= module;
}
