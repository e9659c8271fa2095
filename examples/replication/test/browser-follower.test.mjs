// A browser tab is a follower too: it connects to NATS over the server's WebSocket listener,
// consumes the change stream with the same follower loop as Node (src/follower.mjs, bundled),
// applies it to a database in OPFS opened with `{ follower: true }`, and converges to the
// leader's checksum.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, test } from "node:test";
import { buildPage, launchChromium, noChromium, serve } from "./browser.mjs";
import { scratch, spawnScript, startNatsServer, stop } from "./harness.mjs";

test("a browser follower over NATS's WebSocket listener converges to the leader", { skip: noChromium }, async () => {
  const nats = await startNatsServer();
  const tmp = scratch();
  await buildPage(join(tmp.dir, "app"));
  const server = await serve(join(tmp.dir, "app"));
  const browser = await launchChromium(tmp.dir);
  after(async () => {
    await browser.close().catch(() => {});
    await server.close();
    await nats.stop();
    tmp.remove();
  });
  const page = await browser.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await page.goto(`${server.origin}/app/index.html`);
  await page.waitForFunction(() => globalThis.ready === true);

  const leader = spawnScript("leader.mjs", { data: `${tmp.dir}/leader`, nats: nats.url, batches: 300, rate: 300 });
  await leader.waitFor("ready");
  await page.evaluate(async (wsUrl) => {
    const { shaledb, follower } = globalThis;
    const db = await shaledb.open("replica", { follower: true, keyEncoding: "binary", valueEncoding: "binary" });
    const nc = await follower.connectOverWebSocket(wsUrl);
    const run = await follower.startFollower(db, nc, { durable: "browser" });
    run.done.catch((e) => (globalThis.followerError = `${e?.code ?? ""} ${e?.message ?? e}`));
    Object.assign(globalThis, { db, nc, run });
  }, nats.wsUrl);
  await leader.waitFor("written");
  const l = await stop(leader);
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const done = await page.evaluate(
      async (seq) => globalThis.followerError !== undefined || (await globalThis.db.sequence()) >= seq,
      l.sequence,
    );
    if (done) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const s = await page.evaluate(async () => ({
    error: globalThis.followerError ?? null,
    sequence: await globalThis.db.sequence(),
    ...(await globalThis.follower.checksum(globalThis.db)),
  }));
  assert.equal(s.error, null);
  assert.deepEqual(pageErrors, []);
  assert.equal(s.sequence, l.sequence);
  assert.equal(s.entries, l.entries);
  assert.equal(s.sha256, l.sha256);
});
