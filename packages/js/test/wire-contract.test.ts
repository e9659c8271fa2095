// The JS ↔ WebAssembly byte contract is written once per language (src/encoding/wire.ts and
// crates/wasm/src/wire.rs): both must hold the same constants, by name and value.
import { readFileSync } from "node:fs";

import { describe, expect, it } from "vitest";

import * as wire from "../src/encoding/wire.js";

/** The constants of crates/wasm/src/wire.rs (`pub const NAME: type = value;`), by name. */
function rustConstants(): Record<string, number> {
  const source = readFileSync(new URL("../../../crates/wasm/src/wire.rs", import.meta.url), "utf8");
  const out: Record<string, number> = {};
  for (const [, name, value] of source.matchAll(/^pub const ([A-Z_0-9]+): u(?:8|16|32|64) = ([0-9A-Fa-fx_]+);$/gm)) {
    out[name as string] = Number((value as string).replaceAll("_", ""));
  }
  return out;
}

describe("the wire contract", () => {
  it("holds the same constants in TypeScript and in the Rust bindings", () => {
    const rust = rustConstants();
    const ts = Object.fromEntries(Object.entries(wire).filter(([, v]) => typeof v === "number"));
    expect(Object.keys(rust).length).toBeGreaterThan(15);
    expect(ts).toEqual(rust);
  });
});
