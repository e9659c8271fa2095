// Bad input in the browser gets a clear, typed error and loses no data: wrong types and sizes,
// bad names and options, damaged files in OPFS, archives that are not databases, a storage quota
// running out, and a panic inside the WebAssembly module.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

import type { CDPSession } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { openSync } from "shaledb";

import { SLOT_HEADER_SIZE, decodeSlotHeader } from "../src/browser/opfs/slot-header.js";
import { TarWriter } from "../src/archive/tar/writer.js";
import { tempDir } from "../test/fixtures/processes.js";
import { FIREFOX, type TestPage as Page } from "./fixtures/browser.js";
import { Session } from "./fixtures/session.js";

const session = new Session();
const temp = tempDir("browser-bad-input");
let page: Page;

beforeAll(async () => {
  await session.start();
  page = await session.page();
});

afterAll(async () => {
  await session.stop();
  temp.cleanup();
});

/** The slot file holding engine file `wanted` (a predicate on names) of database `name`. */
async function slotOf(name: string, wanted: (file: string) => boolean): Promise<{ slot: string; file: string }> {
  const slots = await page.evaluate(async (db) => {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle("shaledb")).getDirectoryHandle(db);
    const out: [string, string][] = [];
    for await (const handle of dir.values()) {
      if (handle.kind === "file") {
        const file = await (handle as FileSystemFileHandle).getFile();
        out.push([handle.name, toBase64(new Uint8Array(await file.slice(0, 4096).arrayBuffer()))]);
      }
    }
    return out;
  }, name);
  for (const [slot, header] of slots) {
    const decoded = decodeSlotHeader(Buffer.from(header, "base64"));
    const file = decoded.current === undefined ? undefined : decoded.copies[decoded.current]?.name;
    if (file !== undefined && wanted(file)) {
      return { slot, file };
    }
  }
  throw new Error(`no slot of ${name} holds the file wanted`);
}

/** Overwrites bytes of engine file data (after the slot header) in an OPFS slot file. */
async function damage(name: string, slot: string, offset: number, bytes: number[]): Promise<void> {
  await page.evaluate(
    async ([db, s, at, data]) => {
      const root = await navigator.storage.getDirectory();
      const dir = await (await root.getDirectoryHandle("shaledb")).getDirectoryHandle(db);
      const writable = await (await dir.getFileHandle(s)).createWritable({ keepExistingData: true });
      await writable.write({ type: "write", position: at, data: new Uint8Array(data) });
      await writable.close();
    },
    [name, slot, SLOT_HEADER_SIZE + offset, bytes] as const,
  );
}

describe("wrong arguments are INVALID_ARGUMENT", () => {
  it("names, options, keys, values and ranges of the wrong type or size", async () => {
    const codes = await page.evaluate(async () => {
      const code = async (f: () => unknown): Promise<string | undefined> => {
        try {
          await f();
          return "resolved";
        } catch (error) {
          return (error as { code?: string }).code;
        }
      };
      const db = await shaledb.open("bad-arguments");
      const json = await shaledb.open("bad-arguments-json", { valueEncoding: "json" });
      const other = await shaledb.open("bad-arguments-other");
      const snapshot = await other.snapshot();
      const result = {
        emptyName: await code(() => shaledb.open("")),
        numberName: await code(() => shaledb.open(42 as unknown as string)),
        badOption: await code(() => shaledb.open("x", { memtableSize: "big" as unknown as number })),
        badExclusive: await code(() => shaledb.open("x", { exclusive: "yes" as unknown as boolean })),
        badEncoding: await code(() => shaledb.open("x", { keyEncoding: "latin1" as "utf8" })),
        unknownOption: await code(() => shaledb.open("x", { readonly: true } as never)),
        // One worker owns a database's OPFS files: no read-only secondary in browsers.
        readOnly: await code(() => shaledb.open("x", { readOnly: true })),
        catchUp: await code(() => db.catchUp()),
        numberKey: await code(() => db.put(1 as unknown as string, "v")),
        numberValue: await code(() => db.put("k", 1 as unknown as string)),
        hugeKey: await code(() => db.put("k".repeat(65 * 1024), "v")),
        bigint: await code(() => json.put("k", 1n as unknown as number)),
        limit: await code(() => db.iterator({ limit: 1.5 }).next()),
        reverse: await code(() => db.keys({ reverse: "yes" as unknown as boolean }).all()),
        syncOption: await code(() => db.put("k", "v", { sync: 1 as unknown as boolean })),
        reserved: await code(() => db.keyspace("default")),
        batchType: await code(() => db.batch([{ type: "nope" } as never])),
        getMany: await code(() => db.getMany("k" as unknown as string[])),
        budget: await code(() => db.maintain(-1)),
        checkpoint: await code(() => db.checkpoint("")),
        foreignSnapshot: await code(() => db.get("k", { snapshot })),
        importNotBlob: await code(() => shaledb.importDatabase("x", "tar" as unknown as Blob)),
        importGarbage: await code(() => shaledb.importDatabase("garbage", new Uint8Array(1024).fill(7))),
      };
      snapshot.close();
      await Promise.all([db.close(), json.close(), other.close()]);
      return { ...result, leftBehind: (await shaledb.listDatabases()).filter((n) => n === "x" || n === "garbage") };
    });
    expect(codes).toEqual({
      emptyName: "INVALID_ARGUMENT",
      numberName: "INVALID_ARGUMENT",
      badOption: "INVALID_ARGUMENT",
      badExclusive: "INVALID_ARGUMENT",
      badEncoding: "INVALID_ARGUMENT",
      unknownOption: "INVALID_ARGUMENT",
      readOnly: "INVALID_ARGUMENT",
      catchUp: "INVALID_ARGUMENT",
      numberKey: "INVALID_ARGUMENT",
      numberValue: "INVALID_ARGUMENT",
      hugeKey: "INVALID_ARGUMENT",
      bigint: "INVALID_ARGUMENT",
      limit: "INVALID_ARGUMENT",
      reverse: "INVALID_ARGUMENT",
      syncOption: "INVALID_ARGUMENT",
      reserved: "INVALID_ARGUMENT",
      batchType: "INVALID_ARGUMENT",
      getMany: "INVALID_ARGUMENT",
      budget: "INVALID_ARGUMENT",
      checkpoint: "INVALID_ARGUMENT",
      foreignSnapshot: "INVALID_ARGUMENT",
      importNotBlob: "INVALID_ARGUMENT",
      importGarbage: "INVALID_ARGUMENT",
      leftBehind: [],
    });
  });
});

describe("damaged files are CORRUPTION, naming the file", () => {
  it("a damaged table block fails the read that meets it, not the others", async () => {
    await page.evaluate(async () => {
      const db = await shaledb.open("damaged-table");
      const batch = db.batch();
      for (let i = 0; i < 2000; i++) batch.put(`k${String(i).padStart(5, "0")}`, `value-${i}-${"x".repeat(50)}`);
      await batch.write();
      await db.flush();
      await db.put("in-the-wal", "fine");
      await db.close();
    });
    const { slot, file } = await slotOf("damaged-table", (f) => f.endsWith(".sst"));
    await damage("damaged-table", slot, 40, [1, 2, 3, 4, 5, 6, 7, 8]);
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("damaged-table", { createIfMissing: false });
      const scan = await outcome(db.iterator().all());
      const fine = await db.get("in-the-wal");
      await db.close();
      return { scan, fine };
    });
    expect(result.scan?.code).toBe("CORRUPTION");
    expect(result.scan?.message).toContain(file);
    expect(result.fine).toBe("fine");
  });

  it("a damaged CURRENT fails the open", async () => {
    await page.evaluate(async () => {
      const db = await shaledb.open("damaged-current");
      await db.put("k", "v");
      await db.close();
    });
    const { slot } = await slotOf("damaged-current", (f) => f === "CURRENT");
    await damage("damaged-current", slot, 0, [...Buffer.from("NOT-A-MANIFEST\n")]);
    const opened = await page.evaluate(async () => outcome(shaledb.open("damaged-current")));
    expect(opened?.code).toBe("CORRUPTION");
  });

  it("an archive whose manifest is damaged is refused and leaves nothing behind", async () => {
    // A real database, written by Node, its manifest damaged after the RecordIO file header.
    const dir = join(temp.path, "damaged-manifest");
    const db = openSync(dir);
    db.put("k", "v");
    db.close();
    const tar = new TarWriter("db", 0);
    for (const name of readdirSync(dir).filter((n) => n !== "LOCK")) {
      const data = readFileSync(join(dir, name));
      if (name.startsWith("MANIFEST-")) {
        data.fill(0x5a, 20, 28);
      }
      tar.addFile(name, data);
    }
    const bytes = Buffer.from(await tar.finish().arrayBuffer()).toString("base64");
    const result = await page.evaluate(async (b) => {
      const imported = await outcome(shaledb.importDatabase("bad-manifest", fromBase64(b)));
      return { code: imported?.code, listed: (await shaledb.listDatabases()).includes("bad-manifest") };
    }, bytes);
    expect(result).toEqual({ code: "CORRUPTION", listed: false });
  });
});

// Skipped in Firefox: it has no per-origin quota to set at run time (the test lowers the origin's
// quota with the Chrome DevTools Protocol's Storage.overrideQuotaForOrigin, which Firefox's
// WebDriver BiDi lacks; its only quota knob is a profile-wide preference read at start-up).
describe.skipIf(FIREFOX)("out of storage quota", () => {
  let cdp: CDPSession;

  beforeAll(async () => {
    const chromium = session.context.chromium;
    const tab = chromium?.pages().at(-1);
    if (chromium === undefined || tab === undefined) throw new Error("no Chromium tab to send CDP commands through");
    cdp = await chromium.newCDPSession(tab);
  });

  afterAll(async () => {
    await cdp.send("Storage.overrideQuotaForOrigin", { origin: session.server.origin });
  });

  it("is QUOTA, and after a reopen every acknowledged write is there", async () => {
    const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
    // Each open access handle reserves quota in chunks as its file grows: leave room for those.
    await cdp.send("Storage.overrideQuotaForOrigin", { origin: session.server.origin, quotaSize: usage + (40 << 20) });
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("quota", { compression: false });
      const value = "q".repeat(8000);
      let acknowledged = 0;
      let failure: { code: string | undefined; message: string } | null = null;
      for (let i = 0; i < 20_000 && failure === null; i++) {
        failure = await outcome(db.put(`k${String(i).padStart(6, "0")}`, value));
        if (failure === null) acknowledged++;
      }
      const later = await outcome(db.put("later", "x"));
      await db.close().catch(() => undefined);
      return { acknowledged, failure, later: later?.code };
    });
    expect(result.failure?.code).toBe("QUOTA");
    expect(result.later).toBe("QUOTA"); // the database stays stopped, and says why
    expect(result.acknowledged).toBeGreaterThan(100);
    await cdp.send("Storage.overrideQuotaForOrigin", { origin: session.server.origin });
    const reopened = await page.evaluate(async () => {
      const db = await shaledb.open("quota", { createIfMissing: false });
      const count = await db.count({ prefix: "k" });
      await db.put("after", "quota is back");
      const after = await db.get("after");
      await db.close();
      return { count, after };
    });
    expect(reopened).toEqual({ count: result.acknowledged, after: "quota is back" });
  });
});

describe("a panic inside the WebAssembly module", () => {
  it("fails every call of that database with PANIC; the next open starts a fresh module", async () => {
    const result = await page.evaluate(async () => {
      const db = await shaledb.open("panics");
      await db.put("kept", "yes");
      const panic = await outcome((db as unknown as { debugPanic(m: string): Promise<void> }).debugPanic("boom"));
      const later = await outcome(db.get("kept"));
      await db.close();
      const again = await shaledb.open("panics");
      const kept = await again.get("kept");
      await again.close();
      return { panic, later: later?.code, kept };
    });
    expect(result.panic?.code).toBe("PANIC");
    expect(result.panic?.message).toContain("boom");
    expect(result.later).toBe("PANIC");
    expect(result.kept).toBe("yes");
  });
});
