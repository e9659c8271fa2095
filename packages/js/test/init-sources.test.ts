// `init()` in Node takes the WebAssembly module from bytes, a path or a URL (what a bundle that
// does not carry the package's files gives it); anything else is a typed error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { describe, expect, it } from "vitest";

import { ShaleError, init, openSync, version, type WasmSource } from "shaledb";

import { tempDir } from "./helpers.js";

const wasmPath = new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url);

async function rejectionCode(source: unknown): Promise<string> {
  const error: unknown = await init(source as WasmSource).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ShaleError);
  return (error as ShaleError).code;
}

describe("init() in Node", () => {
  it("takes the module's bytes, its path, a file: URL and an ArrayBuffer, then opens", async () => {
    const bytes = readFileSync(wasmPath);
    await init(new Uint8Array(bytes));
    await init(wasmPath);
    await init(wasmPath.href);
    await init(fileURLToPath(wasmPath));
    await init(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expect(version()).toMatch(/^\d+\.\d+\.\d+/);
    const db = openSync(join(tempDir("init"), "db"));
    db.put("k", "v");
    expect(db.get("k")).toBe("v");
    db.close();
  });

  it("rejects a source of another type with INVALID_ARGUMENT", async () => {
    for (const bad of [42, null, {}, [], true, ""]) {
      expect(await rejectionCode(bad)).toBe("INVALID_ARGUMENT");
    }
  });

  it("rejects bytes that are not a WebAssembly module with INVALID_ARGUMENT", async () => {
    expect(await rejectionCode(new Uint8Array([1, 2, 3, 4]))).toBe("INVALID_ARGUMENT");
  });

  it("rejects a missing file with NOT_FOUND", async () => {
    expect(await rejectionCode(join(tempDir("init"), "missing.wasm"))).toBe("NOT_FOUND");
    expect(await rejectionCode(pathToFileURL(join(tempDir("init"), "missing.wasm")))).toBe("NOT_FOUND");
  });

  it("rejects a URL of an unsupported scheme with INVALID_ARGUMENT", async () => {
    expect(await rejectionCode(new URL("ftp://example.invalid/shaledb.wasm"))).toBe("INVALID_ARGUMENT");
  });
});
