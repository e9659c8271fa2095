// Outside a secure context (plain http from a LAN address) browsers offer neither OPFS nor Web
// Locks: every entry point fails at once with a typed error that says so and what to do (serve
// over https or from localhost), not with a TypeError from deep inside the worker.
import { describe, expect, it } from "vitest";

import { INSECURE_HOST, openPage } from "./fixtures/browser.js";
import { TEST_PAGE, sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

/** What each entry point of the package does on the current page, as { code, message }. */
async function entryPoints(): Promise<Record<string, { code: string | undefined; message: string } | null>> {
  return {
    open: await outcome(shaledb.open("notes")),
    importDatabase: await outcome(shaledb.importDatabase("notes", new Uint8Array(1024))),
    deleteDatabase: await outcome(shaledb.deleteDatabase("notes")),
    listDatabases: await outcome(shaledb.listDatabases()),
  };
}

describe("outside a secure context", () => {
  it("open, importDatabase, deleteDatabase and listDatabases fail with IO saying https or localhost", async () => {
    const url = session.server.origin.replace("127.0.0.1", INSECURE_HOST) + TEST_PAGE;
    const page = await openPage(session.context, url);
    expect(await page.evaluate(() => globalThis.isSecureContext)).toBe(false);
    const results = await page.evaluate(entryPoints);
    for (const [entry, result] of Object.entries(results)) {
      expect(result?.code, entry).toBe("IO");
      expect(result?.message, entry).toContain("not a secure context");
      expect(result?.message, entry).toContain("https");
      expect(result?.message, entry).toContain("localhost");
      expect(result?.message, entry).toContain("Web Locks");
      expect(result?.message, entry).not.toContain("TypeError");
    }
    await page.close();
  });

  it("a browser without Web Locks gets the same clear error, naming what is missing", async () => {
    const page = await session.page();
    const result = await page.evaluate(async () => {
      // As in a browser (or embedding) that lacks them, in a secure context.
      delete (Navigator.prototype as { locks?: unknown }).locks;
      return outcome(shaledb.open("no-locks"));
    });
    expect(result?.code).toBe("IO");
    expect(result?.message).toContain("Web Locks (navigator.locks)");
    expect(result?.message).not.toContain("Origin Private File System");
    expect(result?.message).not.toContain("TypeError");
    await page.close();
  });
});
