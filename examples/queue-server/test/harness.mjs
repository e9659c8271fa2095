// What the server's tests share: starting the built server on a free loopback port, a real
// memcache client (npm `memcached`, text protocol) with Promise methods, and a raw socket for
// what no client library sends (malformed requests).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Memcached from "memcached";

const repo = join(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The server binary: $SHALEDB_QUEUE_SERVER, else cargo's debug build. */
export const serverBinary =
  process.env.SHALEDB_QUEUE_SERVER ?? join(repo, "target", "debug", "shaledb-queue-server");

/** A fresh data directory, removed by the returned function. */
export function dataDir() {
  const dir = mkdtempSync(join(tmpdir(), "shaledb-queue-server-test-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts the server on 127.0.0.1 (a free port) over `dir`, resolving once it listens:
 * `{ port, proc, kill(signal), exited }`.
 */
export function startServer(dir, extraArgs = []) {
  const proc = spawn(serverBinary, ["--listen", "127.0.0.1:0", "--data", dir, ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 10 s: ${stderr}`)), 10_000);
    let out = "";
    proc.stdout.on("data", (d) => {
      out += d;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), proc, exited, kill: (signal = "SIGTERM") => proc.kill(signal) });
      }
    });
    proc.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening: ${stderr}`));
    });
  });
}

/**
 * A memcache client of the server at `port`: one connection (open reads belong to a
 * connection), kept while idle, no retries. Methods return Promises.
 */
export function client(port) {
  const mc = new Memcached(`127.0.0.1:${port}`, {
    poolSize: 1,
    idle: 120_000,
    retries: 0,
    failures: 0,
    timeout: 10_000,
    reconnect: 1_000,
  });
  const call = (method, ...args) =>
    new Promise((resolve, reject) => mc[method](...args, (err, res) => (err ? reject(err) : resolve(res))));
  return {
    set: (key, value, ttl = 0) => call("set", key, value, ttl),
    get: (key) => call("get", key),
    del: (key) => call("del", key),
    stats: () => call("stats"),
    version: () => call("version"),
    end: () => mc.end(),
  };
}

/** Sends `bytes` on a fresh connection and resolves with everything the server answered until it closed the connection or `quietMs` passed without data. */
export function raw(port, bytes, quietMs = 300) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let data = "";
    let closed = false;
    let timer;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ data, closed });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    };
    socket.on("connect", () => {
      socket.write(bytes);
      arm();
    });
    socket.on("data", (d) => {
      data += d.toString("latin1");
      arm();
    });
    socket.on("end", () => {
      closed = true;
      done();
    });
    socket.on("error", reject);
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
