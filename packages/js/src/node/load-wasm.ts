/**
 * Loading the WebAssembly module in Node: synchronously, on first use (and afresh after a
 * panic), from the module given to {@link init} if any, else from the package's own `.wasm` file.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { initSync } from "../../wasm/shaledb_wasm.js";
import { ShaleError, invalidArgument } from "../errors.js";
import { ensureLoadedSync, markReady, needsLoad, setSyncLoader } from "../engine/instance.js";
import { setMemory } from "../engine/scratch.js";
import { compiledModule, provideModule } from "./wasm-module.js";

/**
 * Where {@link init} takes the WebAssembly module (`shaledb.wasm`) from: its bytes, a `file:`,
 * `http:`, `https:` or `data:` URL, or a file path. (A `WebAssembly.Module` is taken too; it is
 * left out of this type so that it needs no DOM or WebAssembly declarations.)
 */
export type WasmSource = Uint8Array | ArrayBuffer | URL | string;

/** Where the package's own `.wasm` is, or a `NOT_INITIALIZED` error saying how to give it. */
function packagedWasm(): Uint8Array {
  let url: URL;
  try {
    // In a CommonJS bundle `import.meta.url` is undefined and this throws.
    url = new URL("../../wasm/shaledb_wasm_bg.wasm", import.meta.url);
  } catch (error) {
    throw notFoundInBundle(String(error));
  }
  try {
    return readFileSync(url);
  } catch (error) {
    throw notFoundInBundle(error instanceof Error ? error.message : String(error));
  }
}

function notFoundInBundle(reason: string): ShaleError {
  return new ShaleError(
    "NOT_INITIALIZED",
    "shaledb: the WebAssembly module is not beside the package (in a bundle?): " +
      "call `await init(bytesOrPathOfShaledbWasm)` first, or import from `shaledb/inline` " +
      `(${reason})`,
  );
}

/**
 * Instantiates the module (fresh after a panic, or after the last database closed and its
 * instance was let go): compiled once per thread.
 */
function loadSync(): void {
  let module = compiledModule();
  if (module === undefined) {
    module = new WebAssembly.Module(packagedWasm() as BufferSource);
    provideModule(module);
  }
  const instance = initSync({ module });
  setMemory(instance.memory);
  markReady(instance);
}

/** Lets the engine load the module by itself on first use. Idempotent and cheap. */
export function useNodeLoader(): void {
  setSyncLoader(loadSync);
}

/** Compiles `bytes`; bytes that are not a WebAssembly module are `INVALID_ARGUMENT`. */
function compile(bytes: BufferSource): WebAssembly.Module {
  try {
    return new WebAssembly.Module(bytes);
  } catch (error) {
    throw invalidArgument(
      `the module given to init() does not compile: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** Reads the file at `path` (a path or `file:` URL); a missing file is `NOT_FOUND`. */
function readModuleFile(path: string | URL): WebAssembly.Module {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code === "ENOENT" ? "NOT_FOUND" : "IO";
    throw new ShaleError(code, `shaledb: init() cannot read ${String(path)}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return compile(bytes as BufferSource);
}

/** Compiles the module `source` names (see {@link WasmSource}). */
async function compileSource(source: unknown): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) {
    return source;
  }
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    return compile(source as BufferSource);
  }
  let url: URL | undefined;
  if (source instanceof URL) {
    url = source;
  } else if (typeof source === "string") {
    url = /^(file|https?|data):/i.test(source) ? new URL(source) : undefined;
    if (url === undefined) {
      if (source === "") {
        throw invalidArgument("init() needs the module's bytes, URL or path, not an empty string");
      }
      return readModuleFile(source);
    }
  } else {
    throw invalidArgument(
      "init() takes the module's bytes (Uint8Array, ArrayBuffer), a WebAssembly.Module, a URL or a path",
    );
  }
  if (url.protocol === "file:") {
    return readModuleFile(fileURLToPath(url));
  }
  if (url.protocol !== "http:" && url.protocol !== "https:" && url.protocol !== "data:") {
    throw invalidArgument(`init() cannot load a module from a ${url.protocol} URL`);
  }
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new ShaleError("IO", `shaledb: init() cannot fetch ${url.href}`, { cause: error });
  }
  if (!response.ok) {
    throw new ShaleError(response.status === 404 ? "NOT_FOUND" : "IO", `shaledb: init(): ${url.href} answers ${response.status}`);
  }
  return compile(new Uint8Array(await response.arrayBuffer()));
}

/**
 * Loads the WebAssembly module. Without an argument it is the package's own `shaledb.wasm`,
 * which `open` and `openSync` load by themselves on first use: calling `init()` is needed only
 * where that file is not beside the package, as in a bundle: then give the module's bytes, the
 * module compiled, its path or its URL (`file:`, `http:`, `https:`, `data:`), before the first
 * open. The module given is used for the rest of the process's life (by the engine workers of
 * `open` too); a module loaded already stays.
 *
 * @throws {ShaleError} (as a rejection) `INVALID_ARGUMENT` for a `source` of another type or
 *   bytes that do not compile; `NOT_FOUND` for a missing file or URL; `IO`.
 */
export function init(source?: WasmSource): Promise<void> {
  useNodeLoader();
  if (source === undefined) {
    try {
      if (needsLoad()) {
        ensureLoadedSync();
      }
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
  return compileSource(source).then((module) => {
    provideModule(module);
    if (needsLoad()) {
      ensureLoadedSync();
    }
  });
}
