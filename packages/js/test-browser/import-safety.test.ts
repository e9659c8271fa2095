// importDatabase never replaces good data with bad, and never leaves half a database: the files
// are written aside, every block of every file verified (the core's shaledb::verify), and one
// atomic step (the POOL marker) switches to them. A damaged backup is refused before anything
// changes; an import cut short at any moment (its worker ended, its tab closed) leaves the old
// database whole and openable, and what it left behind is removed at the next open.
import type { TestPage as Page } from "./fixtures/browser.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { openSync } from "shaledb";

import { readTar } from "../src/archive/tar/reader.js";
import { TarWriter } from "../src/archive/tar/writer.js";
import { directoryArchive, flipBytes, logOf } from "../test/fixtures/archive-damage.js";
import { tempDir } from "../test/fixtures/processes.js";
import { Session } from "./fixtures/session.js";

const session = new Session();
let page: Page;

beforeAll(async () => {
  await session.start();
  page = await session.page();
});

afterAll(async () => {
  await session.stop();
});

/**
 * In `p`: database `name` holding `count` entries `<prefix><n>` (values of `size` bytes, made
 * incompressible by `random`), flushed into tables, plus a few in the log; closed.
 */
function fill(p: Page, name: string, prefix: string, count: number, size = 100, random = false): Promise<void> {
  return p.evaluate(
    async ([n, pre, c, s, r]) => {
      const db = await shaledb.open(n, { valueEncoding: "binary", compression: false });
      for (let i = 0; i < c; i += 500) {
        const batch = db.batch();
        for (let j = i; j < Math.min(c, i + 500); j++) {
          const value = new Uint8Array(s).fill(j % 251);
          if (r) crypto.getRandomValues(value.subarray(0, Math.min(s, 65536)));
          batch.put(`${pre}${String(j).padStart(6, "0")}`, value);
        }
        await batch.write();
      }
      await db.flush();
      await db.put(`${pre}in-the-log`, new Uint8Array(3));
      await db.close();
    },
    [name, prefix, count, size, random] as const,
  );
}

/** In `p`: the export of database `name`, base64. */
function exportOf(p: Page, name: string): Promise<string> {
  return p.evaluate(async (n) => {
    const db = await shaledb.open(n, { createIfMissing: false });
    const blob = await db.export();
    await db.close();
    return toBase64(new Uint8Array(await blob.arrayBuffer()));
  }, name);
}

/** In `p`: database `name` read whole (every block), as counts of keys by prefix; or the error. */
function readWhole(p: Page, name: string): Promise<Record<string, number> | { error: string }> {
  return p.evaluate(async (n) => {
    try {
      const db = await shaledb.open(n, { createIfMissing: false, valueEncoding: "binary" });
      const counts: Record<string, number> = {};
      try {
        for await (const [key] of db.iterator()) {
          const prefix = String(key).split(":")[0] as string;
          counts[prefix] = (counts[prefix] ?? 0) + 1;
        }
      } finally {
        await db.close();
      }
      return counts;
    } catch (error) {
      return { error: `${(error as { code?: string }).code}: ${String(error)}` };
    }
  }, name);
}

/** In `p`: the entries of OPFS directory shaledb/<name>/ (directories end in `/`), sorted. */
function entriesOf(p: Page, name: string): Promise<string[]> {
  return p.evaluate(async (n) => {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle("shaledb")).getDirectoryHandle(n);
    const names: string[] = [];
    for await (const handle of dir.values()) names.push(handle.kind === "directory" ? `${handle.name}/` : handle.name);
    return names.sort();
  }, name);
}

/** Pool directories and marker among `entries` (slot files left out). */
const poolsOf = (entries: string[]): string[] => entries.filter((e) => !e.startsWith("slot-"));

describe("a damaged backup", () => {
  it("whose table has 16 flipped bytes is refused with CORRUPTION naming the table, and replaces nothing", async () => {
    await fill(page, "precious", "old:", 2000);
    const archive = Buffer.from(await exportOf(page, "precious"), "base64");
    // Damage the first table's first data block (after the 8-byte RecordIO file header).
    const { directory, files } = readTar(archive);
    const table = files.find((f) => f.name.endsWith(".sst"));
    expect(table).toBeDefined();
    const damaged = new TarWriter(directory ?? "db", 0);
    for (const file of files) {
      const data = Buffer.from(file.data);
      if (file === table) for (let i = 100; i < 116; i++) data[i] = (data[i] as number) ^ 0xff;
      damaged.addFile(file.name, data);
    }
    const bytes = Buffer.from(await damaged.finish().arrayBuffer()).toString("base64");
    // The database has moved on since the backup: that is what must survive.
    await page.evaluate(async () => {
      const db = await shaledb.open("precious");
      await db.put("later:1", "written after the backup");
      await db.close();
    });
    const imported = await page.evaluate(
      (b) => outcome(shaledb.importDatabase("precious", fromBase64(b), { overwrite: true })),
      bytes,
    );
    expect(imported?.code).toBe("CORRUPTION");
    expect(imported?.message).toContain(table!.name);
    expect(await readWhole(page, "precious")).toEqual({ old: 2001, later: 1 });
    // Nothing of the attempt is left beside the database.
    expect(poolsOf(await entriesOf(page, "precious"))).toEqual([]);

    // As a new database: refused, and no trace of it.
    const fresh = await page.evaluate(async (b) => {
      const result = await outcome(shaledb.importDatabase("never-made", fromBase64(b)));
      return { code: result?.code, listed: (await shaledb.listDatabases()).includes("never-made") };
    }, bytes);
    expect(fresh).toEqual({ code: "CORRUPTION", listed: false });

    // The undamaged backup imports, and reads back whole.
    await page.evaluate(
      (b) => shaledb.importDatabase("precious", fromBase64(b), { overwrite: true }),
      archive.toString("base64"),
    );
    expect(await readWhole(page, "precious")).toEqual({ old: 2001 });
  });
});

describe("a damaged backup's log", () => {
  // Issue 22: 16 bytes flipped in an exported log restored with 6 to 91 of 400 keys missing and
  // no error (read as a torn tail of a crash). An archive is a complete copy: damage in a log
  // is refused like damage in a table, here as in Node.
  it("with 16 flipped bytes is refused with CORRUPTION, never restored with writes missing", async () => {
    // A copy of a live directory written by Node: 300 keys in a table, 100 in the log.
    const temp = tempDir("damaged-log");
    try {
      const db = openSync(temp.path, { autoMaintenance: false });
      for (let i = 0; i < 300; i++) db.put(`raw:${String(i).padStart(3, "0")}`, "v".repeat(50));
      db.flush();
      for (let i = 300; i < 400; i++) db.put(`raw:${String(i).padStart(3, "0")}`, "v".repeat(50));
      const raw = await directoryArchive(temp.path);
      db.close();
      // This browser's export of a database with a table and writes in its log.
      await fill(page, "logged", "exp:", 300);
      const exported = new Uint8Array(Buffer.from(await exportOf(page, "logged"), "base64"));
      for (const [what, archive] of [["raw", raw], ["exp", exported]] as const) {
        for (const fraction of [0.1, 0.5, 0.95]) {
          const damaged = Buffer.from(await flipBytes(archive, logOf(archive), fraction)).toString("base64");
          const result = await page.evaluate(
            (b) => outcome(shaledb.importDatabase("restored", fromBase64(b), { overwrite: true })),
            damaged,
          );
          expect(result?.code, `${what} at ${fraction}`).toBe("CORRUPTION");
          expect(result?.message).toContain(logOf(archive));
        }
        await page.evaluate(
          (b) => shaledb.importDatabase("restored", fromBase64(b), { overwrite: true }),
          Buffer.from(archive).toString("base64"),
        );
        expect(await readWhole(page, "restored")).toEqual(what === "raw" ? { raw: 400 } : { exp: 301 });
      }
    } finally {
      temp.cleanup();
    }
  });
});

describe("an import cut short", () => {
  for (const halt of ["writing", "verified"] as const) {
    it(`(its worker ended while ${halt === "writing" ? "writing the files" : "about to switch"}) leaves the old database whole; the next open removes what it left`, async () => {
      const name = `cut-${halt}`;
      await fill(page, name, "old:", 300);
      await fill(page, "new-source", "new:", 1200);
      const archive = await exportOf(page, "new-source");
      const result = await page.evaluate(
        ([n, b, h]) =>
          outcome(shaledb.importDatabase(n, fromBase64(b), { overwrite: true, debug: { halt: h } } as { overwrite: boolean })),
        [name, archive, halt] as const,
      );
      expect(result?.message).toContain("test hook"); // stopped there, its worker ended
      expect(poolsOf(await entriesOf(page, name))).toEqual(["pool-1/"]); // the new files, aside
      expect(await readWhole(page, name)).toEqual({ old: 301 });
      expect(poolsOf(await entriesOf(page, name))).toEqual([]); // removed by that open
      // A later import goes through.
      await page.evaluate(([n, b]) => shaledb.importDatabase(n, fromBase64(b), { overwrite: true }), [name, archive] as const);
      expect(await readWhole(page, name)).toEqual({ new: 1201 });
      expect(poolsOf(await entriesOf(page, name))).toEqual(["POOL", "pool-1/"]);
    });
  }

  it("(its worker ended right after the switch) leaves the new database whole; the next open removes the old files", async () => {
    await fill(page, "cut-switched", "old:", 300);
    await fill(page, "new-source", "new:", 1200);
    const archive = await exportOf(page, "new-source");
    const result = await page.evaluate(
      (b) =>
        outcome(
          shaledb.importDatabase("cut-switched", fromBase64(b), { overwrite: true, debug: { halt: "switched" } } as {
            overwrite: boolean;
          }),
        ),
      archive,
    );
    expect(result?.message).toContain("test hook");
    const before = await entriesOf(page, "cut-switched");
    expect(before.some((e) => e.startsWith("slot-"))).toBe(true); // the old pool's files
    expect(await readWhole(page, "cut-switched")).toEqual({ new: 1201 });
    const after = await entriesOf(page, "cut-switched");
    expect(after).toEqual(["POOL", "pool-1/"]);
    // Imported again over it: pool 2 becomes live, pool 1 goes.
    await fill(page, "third-source", "third:", 10);
    const third = await exportOf(page, "third-source");
    await page.evaluate((b) => shaledb.importDatabase("cut-switched", fromBase64(b), { overwrite: true }), third);
    expect(await readWhole(page, "cut-switched")).toEqual({ third: 11 });
    expect(await entriesOf(page, "cut-switched")).toEqual(["POOL", "pool-2/"]);
  });

  // Closed at several moments, relative to how long an import of the same archive into a new
  // database takes (measured first; replacing one may take longer).
  for (const fraction of [0.6, 0.9, 1.2, 1.5, 1.8]) {
    it(`by closing its tab at ${fraction}× the time an import takes leaves a database that opens, old or new but whole`, async () => {
      const name = `tab-closed-${fraction}`;
      const victim = await session.page();
      await fill(victim, name, "old:", 300);
      // A backup large enough that its import takes a while: ~12 MiB of incompressible values.
      await fill(victim, "big-source", "new:", 3000, 4096, true);
      const duration = await victim.evaluate(async (n) => {
        const db = await shaledb.open("big-source");
        const blob = await db.export();
        await db.close();
        const started = performance.now();
        await shaledb.importDatabase("timing-probe", blob);
        const took = performance.now() - started;
        await shaledb.deleteDatabase("timing-probe");
        // The real one: not awaited, the tab closes under it.
        void shaledb.importDatabase(n, blob, { overwrite: true }).catch(() => undefined);
        return took;
      }, name);
      await new Promise((resolve) => setTimeout(resolve, duration * fraction));
      await victim.close();
      const read = await readWhole(page, name);
      expect([{ old: 301 }, { new: 3001 }]).toContainEqual(read);
      const pools = poolsOf(await entriesOf(page, name)).filter((e) => e !== "POOL");
      expect(pools.length).toBeLessThanOrEqual(1); // what the import left was removed by the open
    });
  }
});
