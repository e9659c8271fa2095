// Each keyspace's encodings are recorded in the database in browsers too (the owner's worker
// checks them, for its own tab and for tabs it serves): opening with others is ENCODING_MISMATCH
// and the data is untouched; a binary view reads any keyspace.
import { describe, expect, it } from "vitest";

import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

describe("keyspace encodings", () => {
  it("reopening a keyspace with another value encoding is ENCODING_MISMATCH; its data is untouched", async () => {
    const page = await session.page();
    const result = await page.evaluate(async () => {
      const code = (p: Promise<unknown>) =>
        p.then(
          () => "resolved",
          (e: { code?: string; message?: string }) => `${e.code}: ${e.message}`,
        );
      const db = await shaledb.open("enc-mismatch");
      await (await db.keyspace("users", { valueEncoding: "json" })).put("ada", { born: 1815 });
      await db.close();
      const again = await shaledb.open("enc-mismatch");
      const mismatch = await code(again.keyspace("users"));
      const kept = await (await again.keyspace("users", { valueEncoding: "json" })).get("ada");
      const raw = await (await again.keyspace("users", { valueEncoding: "binary" })).get("ada");
      await again.put("k", "text");
      await again.close();
      // The default keyspace records the open() encodings.
      const reopened = await code(shaledb.open("enc-mismatch", { valueEncoding: "json" }));
      const after = await shaledb.open("enc-mismatch");
      const value = await after.get("k");
      await after.close();
      return { mismatch, kept, raw: new TextDecoder().decode(raw), reopened, value };
    });
    expect(result.mismatch).toMatch(/^ENCODING_MISMATCH: .*"users".*"json".*"utf8"/);
    expect(result.kept).toEqual({ born: 1815 });
    expect(result.raw).toBe('{"born":1815}');
    expect(result.reopened).toMatch(/^ENCODING_MISMATCH: .*default keyspace/);
    expect(result.value).toBe("text");
    await page.close();
  });

  it("a tab served by another tab's worker gets ENCODING_MISMATCH too", async () => {
    const [owner, served] = [await session.page(), await session.page()];
    await owner.evaluate(async () => {
      const db = await shaledb.open("enc-tabs");
      await (await db.keyspace("docs", { valueEncoding: "json" })).put("d", [1]);
      (globalThis as { held?: unknown }).held = db;
    });
    const result = await served.evaluate(async () => {
      const db = await shaledb.open("enc-tabs"); // served by the first tab's worker
      const mismatch = await db.keyspace("docs", { valueEncoding: "utf8" }).then(
        () => "resolved",
        (e: { code?: string }) => e.code,
      );
      const value = await (await db.keyspace("docs", { valueEncoding: "json" })).get("d");
      await db.close();
      return { mismatch, value };
    });
    expect(result).toEqual({ mismatch: "ENCODING_MISMATCH", value: [1] });
    await owner.close();
    await served.close();
  });
});
