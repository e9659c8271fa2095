// The key-value module (wasm/shaledb_kv_bg.wasm: the bindings without their `full` feature): the
// whole module's exports minus those crates/wasm/full-exports.json lists, driven by the same glue;
// the key-value API works on it, and the parts it leaves out are NOT_IN_MODULE. This file loads
// the key-value module into its own worker (vitest runs each file in a fresh one).
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { init, open, openSync } from "shaledb";
import { recordioRoundTrip } from "shaledb/testing";

import { PART_PROBES, type EnginePart } from "../src/engine/module-parts.js";
import { expectCode, expectRejects, tempDir } from "./helpers.js";

const full = new WebAssembly.Module(readFileSync(new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url)));
const kvUrl = new URL("../wasm/shaledb_kv_bg.wasm", import.meta.url);
const kv = new WebAssembly.Module(readFileSync(kvUrl));
const leftOut = JSON.parse(
  readFileSync(new URL("../../../crates/wasm/full-exports.json", import.meta.url), "utf8"),
) as Record<EnginePart | "comment", string[]>;

/** The module's functions for the glue to call (not wasm-bindgen's own `__` helpers). */
const exportsOf = (m: WebAssembly.Module) =>
  WebAssembly.Module.exports(m)
    .map((e) => e.name)
    .filter((name) => !name.startsWith("__"));
const importsOf = (m: WebAssembly.Module) => WebAssembly.Module.imports(m).map((i) => `${i.module}.${i.name}`);

describe("the key-value module", () => {
  it("exports the whole module's functions minus exactly the listed ones", () => {
    const listed = Object.entries(leftOut).flatMap(([part, names]) => (part === "comment" ? [] : names));
    const expected = exportsOf(full).filter((name) => !listed.includes(name));
    expect(exportsOf(kv).sort()).toEqual(expected.sort());
    expect(listed.every((name) => exportsOf(full).includes(name))).toBe(true);
  });

  it("probes each part with the first export listed for it", () => {
    for (const [part, probe] of Object.entries(PART_PROBES)) {
      expect(leftOut[part as EnginePart][0]).toBe(probe);
    }
    expect(Object.keys(leftOut).filter((k) => k !== "comment").sort()).toEqual(Object.keys(PART_PROBES).sort());
  });

  it("imports nothing the glue of the whole module does not provide", () => {
    const provided = new Set(importsOf(full));
    expect(importsOf(kv).filter((name) => !provided.has(name))).toEqual([]);
  });

  it("is smaller than the whole module", () => {
    expect(readFileSync(kvUrl).length).toBeLessThan(readFileSync(new URL("../wasm/shaledb_wasm_bg.wasm", import.meta.url)).length * 0.8);
  });

  it("runs the key-value API, and says NOT_IN_MODULE for what it leaves out", async () => {
    await init(kvUrl);
    const path = join(tempDir("kv-module"), "db");
    const db = openSync(path);
    db.put("a", "1");
    db.batch([
      { type: "put", key: "b", value: "2" },
      { type: "delete", key: "a" },
    ]);
    const tx = db.transaction();
    tx.put("c", "3");
    tx.commit();
    expect([...db.iterator()].map(([k, v]) => `${k}=${v}`)).toEqual(["b=2", "c=3"]);
    expectCode(() => db.queue("jobs"), "NOT_IN_MODULE");
    expectCode(() => db.queues(), "NOT_IN_MODULE");
    expectCode(() => db.topic("events"), "NOT_IN_MODULE");
    expectCode(() => db.deleteTopic("events"), "NOT_IN_MODULE");
    expectCode(() => [...db.changes({ since: 0 })], "NOT_IN_MODULE");
    expectCode(() => db.ackChanges("cursor", 1), "NOT_IN_MODULE");
    expect(recordioRoundTrip([new Uint8Array([1])])).toEqual([new Uint8Array([1])]);
    // Nothing broke: the database goes on, and reopens with what it held.
    db.put("d", "4");
    db.flush();
    db.close();
    const again = openSync(path);
    expect(again.get("d")).toBe("4");
    expect(again.get("a")).toBeUndefined();
    again.close();
  });

  it.each(["caller", "own"] as const)("serves the Promise API with the engine in the %s thread (engineThread)", async (engineThread) => {
    await init(kvUrl);
    const db = await open(join(tempDir("kv-module"), "db"), { engineThread });
    await db.put("k", "v");
    expect(await db.get("k")).toBe("v");
    await expectRejects(db.queue("jobs"), "NOT_IN_MODULE");
    await expectRejects(db.topic("events"), "NOT_IN_MODULE");
    expect(await db.get("k")).toBe("v");
    await db.close();
  });
});
