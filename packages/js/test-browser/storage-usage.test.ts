// What an open database costs the origin's storage quota (navigator.storage.estimate().usage):
// near the bytes it stores, not a reservation per slot file. Chromium reserves quota for a
// FileSystemSyncAccessHandle in steps of at least 1 MiB whenever the handle grows its file or
// truncates it (even to the same size), held until the handle closes. The pool therefore writes
// a new slot file's 4096 bytes before opening its handle and skips truncates that change nothing
// (src/browser/opfs/pool-directory.ts, slot.ts); only the slots whose files the engine writes
// (CURRENT, the manifest, the log) still cost that step while the database is open. Measured in
// Chromium 156: 4.0 MiB empty and 25.0 MiB after one 2-byte put before, 3.0 and 3.1 MiB after
// (three files written). Firefox counts the files' bytes only (about 0.5 MB here).
import { expect, it } from "vitest";

import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();
const MiB = 1 << 20;

it("an open empty database, and one after a small put, costs the quota about its written files, not a MiB per slot file", async () => {
  const page = await session.page();
  const figures = await page.evaluate(async () => {
    const usage = async () => (await navigator.storage.estimate()).usage ?? 0;
    const before = await usage();
    const db = await shaledb.open("usage");
    const empty = (await usage()) - before;
    await db.put("k", "v!");
    const onePut = (await usage()) - before;
    const slots = (await db.stats()).slots;
    await db.close();
    const closed = (await usage()) - before;
    return { empty, onePut, closed, slots };
  });
  console.log(`storage usage: ${JSON.stringify(figures)}`);
  // At most Chromium's 1 MiB step for each slot holding a file (3 here), plus the slot files
  // themselves (4 KiB each, 25 of them) and the origin's own overhead: nothing for free slots.
  const bound = figures.slots.used * MiB + 512 * 1024;
  expect(figures.slots.free).toBeGreaterThan(figures.slots.used); // free slots were there to cost
  expect(figures.empty).toBeLessThanOrEqual(bound);
  expect(figures.onePut).toBeLessThanOrEqual(bound);
  // Closed, the reservations are gone: what is left is the files (17 slots of 4 KiB and more).
  expect(figures.closed).toBeLessThanOrEqual(MiB);
  await page.close();
});
