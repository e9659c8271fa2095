// The queue server driven by a real memcache client library (npm `memcached`, text protocol)
// over loopback: Kestrel's reads (open, close, abort, peek, t=), disconnects, a crash.
import assert from "node:assert/strict";
import { createConnection } from "node:net";
import { after, before, describe, test } from "node:test";
import { client, dataDir, raw, sleep, startServer } from "./harness.mjs";

describe("queue server with one data directory", () => {
  let data;
  let server;
  const clients = [];
  const connect = () => {
    const c = client(server.port);
    clients.push(c);
    return c;
  };

  before(async () => {
    data = dataDir();
    server = await startServer(data.dir);
  });
  after(async () => {
    for (const c of clients) c.end();
    server.kill("SIGTERM");
    const { code } = await server.exited;
    data.remove();
    assert.equal(code, 0, "a clean stop on SIGTERM");
  });

  test("items come out in the order they were set, then the queue is empty", async () => {
    const c = connect();
    assert.equal(await c.set("fifo", "one"), true);
    assert.equal(await c.set("fifo", "two"), true);
    assert.equal(await c.get("fifo"), "one");
    assert.equal(await c.get("fifo"), "two");
    assert.equal(await c.get("fifo"), undefined);
  });

  test("an open read is invisible to others until closed, and gone after", async () => {
    const a = connect();
    const b = connect();
    await a.set("open", "job");
    assert.equal(await a.get("open/open"), "job");
    assert.equal(await b.get("open"), undefined, "reserved for a");
    assert.equal(await a.get("open/close"), undefined);
    assert.equal(await b.get("open"), undefined, "acknowledged");
  });

  test("a second open read on the same queue is refused until the first is closed", async () => {
    const a = connect();
    await a.set("twice", "x");
    await a.set("twice", "y");
    assert.equal(await a.get("twice/open"), "x");
    await assert.rejects(a.get("twice/open"), /close current item first/);
    assert.equal(await a.get("twice/close/open"), "y", "close then open in one request");
    assert.equal(await a.get("twice/close/open"), undefined);
  });

  test("an aborted read goes back to the head of the queue", async () => {
    const a = connect();
    const b = connect();
    await a.set("abort", "first");
    await a.set("abort", "second");
    assert.equal(await a.get("abort/open"), "first");
    assert.equal(await a.get("abort/abort"), undefined);
    assert.equal(await b.get("abort"), "first");
    assert.equal(await b.get("abort"), "second");
  });

  test("peek returns the head without removing it", async () => {
    const a = connect();
    await a.set("peek", "head");
    assert.equal(await a.get("peek/peek"), "head");
    assert.equal(await a.get("peek/peek"), "head");
    assert.equal(await a.get("peek"), "head");
    assert.equal(await a.get("peek/peek"), undefined);
  });

  test("a read with t= waits for a set from another client, or times out empty", async () => {
    const a = connect();
    const b = connect();
    let t0 = Date.now();
    assert.equal(await a.get("wait/t=300"), undefined);
    const waited = Date.now() - t0;
    assert.ok(waited >= 250 && waited < 3000, `timed out after ${waited} ms`);

    t0 = Date.now();
    const pending = a.get("wait/open/t=5000");
    await sleep(200);
    await b.set("wait", "late");
    assert.equal(await pending, "late");
    assert.ok(Date.now() - t0 < 4000, "woken by the set, not by the timeout");
    assert.equal(await a.get("wait/close"), undefined);
    assert.equal(await b.get("wait"), undefined);
  });

  test("an open read goes back when its client disconnects", async () => {
    const a = client(server.port);
    const b = connect();
    await b.set("disconnect", "unfinished");
    assert.equal(await a.get("disconnect/open"), "unfinished");
    assert.equal(await b.get("disconnect"), undefined);
    a.end();
    assert.equal(await b.get("disconnect/t=3000"), "unfinished");
  });

  test("an item that comes for a client that left during its wait stays in the queue", async () => {
    const b = connect();
    const leaver = createConnection({ host: "127.0.0.1", port: server.port });
    await new Promise((r) => leaver.once("connect", r));
    leaver.write("get leave/t=5000\r\n");
    await sleep(100);
    leaver.end();
    await sleep(100);
    await b.set("leave", "kept");
    assert.equal(await b.get("leave/t=3000"), "kept");
  });

  test("a plain get that waited removes its item", async () => {
    const a = connect();
    const b = connect();
    const pending = a.get("waited/t=5000");
    await sleep(100);
    await b.set("waited", "once");
    assert.equal(await pending, "once");
    assert.equal(await b.get("waited/t=200"), undefined);
  });

  test("delete drops a queue, flush empties it, stats count items per queue", async () => {
    const a = connect();
    await a.set("stats", "1");
    await a.set("stats", "22");
    const [stats] = await a.stats();
    assert.equal(stats.queue_stats_items, 2);
    assert.equal(stats.queue_stats_bytes, 3);
    assert.ok(stats.cmd_set >= 2);
    assert.equal((await raw(server.port, "flush stats\r\n")).data, "END\r\n");
    assert.equal(await a.get("stats"), undefined);
    await a.set("gone", "x");
    assert.equal(await a.del("gone"), true);
    assert.equal(await a.get("gone"), undefined);
    const [after] = await a.stats();
    assert.equal(after.queue_stats_items, 0);
  });

  test("version answers the server's name and version", async () => {
    const [v] = await connect().version();
    assert.match(v.version, /^\d+\.\d+\.\d+$/);
  });

  test("malformed requests get CLIENT_ERROR or ERROR, never a crash", async () => {
    assert.deepEqual(await raw(server.port, "bogus\r\nversion\r\n"), {
      data: "ERROR\r\nVERSION shaledb-queue-server-0.1.0\r\n",
      closed: false,
    });
    assert.equal((await raw(server.port, "get q/nope\r\n")).data, "CLIENT_ERROR unknown get option\r\n");
    const badLength = await raw(server.port, "set q 0 0 abc\r\n");
    assert.deepEqual(badLength, { data: "CLIENT_ERROR bad data chunk length\r\n", closed: true });
    const badChunk = await raw(server.port, "set q 0 0 2\r\nabcd\r\n");
    assert.deepEqual(badChunk, { data: "CLIENT_ERROR bad data chunk\r\n", closed: true });
    const longLine = await raw(server.port, "get " + "q".repeat(5000) + "\r\n");
    assert.deepEqual(longLine, { data: "CLIENT_ERROR line too long\r\n", closed: true });
    const tooBig = await raw(server.port, `set q 0 0 ${64 << 20}\r\n`);
    assert.deepEqual(tooBig, { data: "CLIENT_ERROR object too large\r\n", closed: true });
    assert.equal(await connect().get("q"), undefined, "nothing was stored");
  });
});

test("a full queue answers NOT_STORED", async () => {
  const data = dataDir();
  const server = await startServer(data.dir, ["--max-items", "2"]);
  const c = client(server.port);
  try {
    assert.equal(await c.set("full", "1"), true);
    assert.equal(await c.set("full", "2"), true);
    await assert.rejects(c.set("full", "3"), (e) => e.notStored === true);
    assert.equal(await c.get("full"), "1");
    assert.equal(await c.set("full", "3"), true);
  } finally {
    c.end();
    server.kill();
    await server.exited;
    data.remove();
  }
});

test("after SIGKILL, an open read is delivered again and an acknowledged one is not", async () => {
  const data = dataDir();
  let server = await startServer(data.dir);
  let c = client(server.port);
  try {
    for (const v of ["acked", "open", "waiting"]) assert.equal(await c.set("crash", v), true);
    assert.equal(await c.get("crash/open"), "acked");
    assert.equal(await c.get("crash/close/open"), "open");
    server.kill("SIGKILL");
    await server.exited;
    c.end();

    server = await startServer(data.dir);
    c = client(server.port);
    assert.equal(await c.get("crash"), "open", "the open read is back at the head");
    assert.equal(await c.get("crash"), "waiting");
    assert.equal(await c.get("crash"), undefined, "the acknowledged item stays gone");
  } finally {
    c.end();
    server.kill();
    await server.exited;
    data.remove();
  }
});
