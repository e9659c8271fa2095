// Bad input to watch(), liveQuery() and a live query's subscribe(): INVALID_ARGUMENT at the call,
// nothing watched, in both APIs; CLOSED on a closed database; the database works on after.
import { describe, expect, it } from "vitest";

import { open, openSync, type LiveQuery, type WatchOptions, type WatchRange, type Watchable } from "shaledb";

import { expectCode, freshPath } from "./helpers.js";

const INVALID = "INVALID_ARGUMENT";
const bad = <T>(value: unknown): T => value as T;

/** The bad calls of watch() and liveQuery() on a store with utf8 keys. */
function expectBadInputRefused(store: Watchable<string, string>): void {
  const badRanges: unknown[] = [null, "a", 5, [], [null], [{ gt: "a" }, "b"], { gt: 5 }, { prefix: null }, { from: "a" }];
  for (const range of badRanges) {
    expectCode(() => store.watch(bad<WatchRange<string>>(range)), INVALID);
    expectCode(() => store.liveQuery(bad<WatchRange<string>>(range), () => 1), INVALID);
  }
  const badOptions: unknown[] = [null, "x", { values: "yes" }, { coalesce: "sometimes" }, { coalesce: true }, { signal: {} }, { wait: 1 }];
  for (const options of badOptions) {
    expectCode(() => store.watch({}, bad<WatchOptions>(options)), INVALID);
    expectCode(() => store.watch({}, () => undefined, bad<WatchOptions>(options)), INVALID);
  }
  expectCode(() => store.watch({}, bad<(event: unknown) => void>("not a listener"), {}), INVALID);
  expectCode(() => store.liveQuery({}, () => 1, bad<WatchOptions>({ values: true })), INVALID);
  for (const read of [undefined, null, "read", {}]) {
    expectCode(() => store.liveQuery({}, bad<() => number>(read)), INVALID);
  }
  const live: LiveQuery<number> = store.liveQuery({}, () => 1);
  for (const observer of [null, "x", 5]) {
    expectCode(() => live.subscribe(bad<(n: number) => void>(observer)), INVALID);
  }
}

describe("watch arguments", () => {
  it("synchronous API: INVALID_ARGUMENT for each bad argument, CLOSED once closed", () => {
    const db = openSync(freshPath("watch-bad-sync"));
    expectBadInputRefused(db);
    expectBadInputRefused(db.keyspace("ks"));
    db.put("a", "1");
    expect(db.get("a")).toBe("1");
    db.close();
    expectCode(() => db.watch(), "CLOSED");
    expectCode(() => db.liveQuery({}, () => 1), "CLOSED");
  });

  it("Promise API: INVALID_ARGUMENT for each bad argument, CLOSED once closed", async () => {
    const db = await open(freshPath("watch-bad-promise"));
    expectBadInputRefused(db);
    expectBadInputRefused(await db.keyspace("ks"));
    await db.put("a", "1");
    expect(await db.get("a")).toBe("1");
    await db.close();
    expectCode(() => db.watch(), "CLOSED");
    expectCode(() => db.liveQuery({}, () => 1), "CLOSED");
  });
});
