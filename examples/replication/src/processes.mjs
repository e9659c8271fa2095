// The example's processes spawned from another program (the demo, the tests, the benchmark):
// each prints JSON event lines (cli.mjs), collected here, and waits can be set on them.
import { spawn } from "node:child_process";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

const src = dirname(fileURLToPath(import.meta.url));

/**
 * Spawns `script` (a file of this folder, or an absolute path) with `--key value` arguments. Returns `{ events, waitFor(event, pred,
 * ms), last(event), kill(signal), exited }`; an `error` event or a non-zero exit rejects pending
 * waits (with the process's stderr).
 */
export function spawnScript(script, args) {
  const argv = Object.entries(args).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const proc = spawn(process.execPath, [isAbsolute(script) ? script : join(src, script), ...argv], { stdio: ["ignore", "pipe", "pipe"] });
  const events = [];
  const waiters = new Set();
  let stderr = "";
  let buffered = "";
  const check = () => {
    for (const w of waiters) {
      const e = events.find((x) => x.event === w.event && w.pred(x));
      if (e) {
        waiters.delete(w);
        w.resolve(e);
      }
    }
  };
  const failAll = (why) => {
    for (const w of waiters) w.reject(new Error(`${script}: ${why}\nstderr: ${stderr.slice(-4000)}`));
    waiters.clear();
  };
  proc.stdout.on("data", (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        continue;
      }
      // Progress lines are many: keep only the last of each kind besides all others.
      if (e.event === "progress") {
        const i = events.findIndex((x) => x.event === "progress");
        if (i >= 0) events.splice(i, 1);
      }
      events.push(e);
      if (e.event === "error") failAll(`error event: ${e.error}`);
    }
    check();
  });
  proc.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) =>
    proc.once("exit", (code, signal) => {
      if (code) failAll(`exited with ${code}`);
      resolve({ code, signal });
    }),
  );
  return {
    events,
    get stderr() {
      return stderr;
    },
    exited,
    last: (event) => events.findLast((e) => e.event === event),
    waitFor(event, pred = () => true, ms = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`${script}: no ${event} event in ${ms} ms; last events: ${JSON.stringify(events.slice(-5))}\nstderr: ${stderr.slice(-4000)}`));
        }, ms);
        const w = {
          event,
          pred,
          resolve: (e) => (clearTimeout(timer), resolve(e)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        };
        waiters.add(w);
        check();
      });
    },
    kill: (signal = "SIGTERM") => proc.kill(signal),
  };
}

/** Stops a process with SIGTERM and resolves with its `stopped` event. */
export async function stop(p, ms = 30_000) {
  const stopped = p.waitFor("stopped", () => true, ms);
  p.kill("SIGTERM");
  const e = await stopped;
  await p.exited;
  return e;
}

/** Waits until follower `p` reports sequence `seq` or beyond. */
export function caughtUp(p, seq, ms = 60_000) {
  return p.waitFor("progress", (e) => e.sequence >= seq, ms);
}

