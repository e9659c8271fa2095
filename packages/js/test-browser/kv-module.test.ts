// The key-value module in browsers (`module: "kv"`): the worker loads wasm/shaledb_kv_bg.wasm,
// the key-value API works on it, queues and topics are NOT_IN_MODULE, and the files it writes
// open unchanged with the whole engine.
import { describe, expect, it } from "vitest";

import { appWorker, type Outcome } from "./fixtures/app-worker.js";
import type { Db } from "./fixtures/open-in.js";
import { sessionForThisFile } from "./fixtures/session.js";

const session = sessionForThisFile();

describe("the key-value module in browsers", () => {
  it("stores and reads with module: \"kv\", says NOT_IN_MODULE for queues and topics, and its files open with the whole engine", async () => {
    const page = await session.page();
    const result = await page.evaluate(async () => {
      const codeOf = async (run: () => Promise<unknown>): Promise<string> => {
        try {
          await run();
          return "none";
        } catch (error) {
          return (error as { code?: string }).code ?? String(error);
        }
      };
      const db: Db = await shaledb.open("kv-notes", { module: "kv" });
      await db.put("a", "1");
      await db.batch([
        { type: "put", key: "b", value: "2" },
        { type: "delete", key: "a" },
      ]);
      const seen: string[] = [];
      for await (const [k, v] of db.iterator()) {
        seen.push(`${k}=${v}`);
      }
      const queue = await codeOf(() => db.queue("jobs"));
      const topic = await codeOf(() => db.topic("events"));
      const after = await db.get("b");
      await db.close();
      const full: Db = await shaledb.open("kv-notes");
      const reopened = await full.get("b");
      const q = await full.queue("jobs");
      await q.push("x");
      const taken = (await q.take())?.value;
      await full.close();
      const badModule = await codeOf(() => shaledb.open("kv-bad", { module: "tiny" } as never));
      return { seen, queue, topic, after, reopened, taken, badModule };
    });
    expect(result).toEqual({
      seen: ["b=2"],
      queue: "NOT_IN_MODULE",
      topic: "NOT_IN_MODULE",
      after: "2",
      reopened: "2",
      taken: "x",
      badModule: "INVALID_ARGUMENT",
    });
  });

  it("loads in an application's own worker (openInWorker)", async () => {
    const page = await session.page();
    const run = await appWorker(page);
    const outcome: Outcome = await run(`
      const db = await shaledb.openInWorker("kv-sync", { module: "kv" });
      db.put("k", "v");
      let queue = "none";
      try {
        db.queue("jobs");
      } catch (error) {
        queue = error.code;
      }
      const got = db.get("k");
      await db.close();
      return { got, queue };
    `);
    expect(outcome).toMatchObject({ ok: true, value: { got: "v", queue: "NOT_IN_MODULE" } });
  });
});
