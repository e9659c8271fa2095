// A panic in Rust traps the WebAssembly instance. It must surface as a ShaleError with code
// PANIC carrying the panic's message, and poison the module rather than fail silently. (vitest
// runs each test file in its own module graph, so this poisoning stays in this file.)
import { beforeAll, expect, it } from "vitest";

import { ShaleError, debugPanic, init, version } from "shaledb";

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
