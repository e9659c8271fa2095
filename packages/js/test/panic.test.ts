// A panic in Rust traps the WebAssembly instance. It must surface as a ShaleError with code
// PANIC carrying the panic's message, and poison the module rather than fail silently. (vitest
// runs each test file in its own module graph, so this poisoning stays in this file.)
import { beforeAll, expect, it } from "vitest";

import { ShaleError, init, version } from "shaledb";
import { debugPanic } from "shaledb/testing";

beforeAll(async () => {
  await init();
});

it("a panic becomes a PANIC error with the message, and later calls fail with PANIC", () => {
  let error: unknown;
  try {
    debugPanic("boom from the test");
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ShaleError);
  expect((error as ShaleError).code).toBe("PANIC");
  expect((error as ShaleError).message).toContain("boom from the test");

  expect(() => version()).toThrow(ShaleError);
  try {
    version();
  } catch (e) {
    expect((e as ShaleError).code).toBe("PANIC");
  }
});

it("after a panic every handle fails with PANIC, the lock is released and the next open starts a fresh module", async () => {
  const { mkdtempSync, existsSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { openSync } = await import("shaledb");
  const dir = mkdtempSync(join(tmpdir(), "shaledb-panic-"));
  try {
    // The earlier test left the module panicked: opening instantiates a fresh one.
    const db = openSync(dir);
    db.put("kept", "yes", { sync: true });
    const iterator = db.iterator();
    const snapshot = db.snapshot();
    expect(() => debugPanic("second boom")).toThrow(ShaleError);

    for (const use of [() => db.get("kept"), () => iterator.next(), () => db.get("kept", { snapshot })]) {
      let code: unknown;
      try {
        use();
      } catch (e) {
        code = (e as ShaleError).code;
      }
      expect(code).toBe("PANIC");
    }
    expect(existsSync(join(dir, "LOCK"))).toBe(false);

    const reopened = openSync(dir);
    expect(reopened.get("kept")).toBe("yes");
    expect(version()).toMatch(/^\d+\.\d+\.\d+/);
    reopened.close();
    db.close(); // a dead handle closes quietly
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
