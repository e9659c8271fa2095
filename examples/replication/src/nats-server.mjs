// A real nats-server for the tests, the demo and the benchmark: JetStream on, its store in a
// temporary directory, client and WebSocket listeners on free loopback ports. It can be killed
// and started again on the same ports and store (a server restart), and is stopped for good by
// `stop()`, which also removes the directory.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The nats-server binary: $SHALEDB_NATS_SERVER, else the one `scripts/setup.sh --nats` installs
 * ($HOME/.cache/shaledb/bin/nats-server), else `nats-server` on the PATH.
 */
export function natsServerBinary() {
  if (process.env.SHALEDB_NATS_SERVER) return process.env.SHALEDB_NATS_SERVER;
  const installed = join(homedir(), ".cache", "shaledb", "bin", "nats-server");
  return existsSync(installed) ? installed : "nats-server";
}

/** A free TCP port on 127.0.0.1 (free when asked; the server binds it right after). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts nats-server and resolves once it accepts clients:
 * `{ url, wsUrl, dir, kill(signal), restart(), stop() }`. `kill` ends the process (default
 * SIGKILL) and resolves when it has exited; `restart` starts it again on the same ports and
 * JetStream store; `stop` ends it and removes its directory.
 */
export async function startNatsServer({ readyMs = 20_000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "shaledb-nats-"));
  const [port, wsPort] = [await freePort(), await freePort()];
  const config = join(dir, "nats.conf");
  writeFileSync(
    config,
    [
      `listen: "127.0.0.1:${port}"`,
      `jetstream { store_dir: ${JSON.stringify(join(dir, "jetstream"))} }`,
      `websocket { listen: "127.0.0.1:${wsPort}", no_tls: true }`,
      "",
    ].join("\n"),
  );
  let proc;
  let exited;
  const launch = () =>
    new Promise((resolve, reject) => {
      proc = spawn(natsServerBinary(), ["-c", config], { stdio: ["ignore", "ignore", "pipe"] });
      exited = new Promise((r) => proc.once("exit", (code, signal) => r({ code, signal })));
      let log = "";
      const timer = setTimeout(() => reject(new Error(`nats-server not ready in ${readyMs} ms:\n${log}`)), readyMs);
      proc.stderr.on("data", (d) => {
        if (log.length < 100_000) log += d;
        if (log.includes("Server is ready")) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot run ${natsServerBinary()} (scripts/setup.sh --nats installs it): ${e.message}`));
      });
      exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited (${code ?? signal}) before it was ready:\n${log}`));
      });
    });
  await launch();
  const kill = async (signal = "SIGKILL") => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    dir,
    kill,
    restart: launch,
    async stop() {
      await kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
