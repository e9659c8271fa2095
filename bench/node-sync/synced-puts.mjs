// Synced puts through Node's Promise API with the engine in the caller's thread
// (`engineThread: "caller"`): 2,000 awaited `put(k, v, { sync: true })` one at a time, then
// 2,000 from 8 concurrent writers (250 each), with the event loop's delay measured meanwhile
// (perf_hooks.monitorEventLoopDelay, 1 ms resolution) and how busy it was
// (performance.eventLoopUtilization). Prints one JSON line per case.
//
//   node bench/node-sync/synced-puts.mjs [path/to/packages/js/dist/node.js] [directory]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

const entry = resolve(process.argv[2] ?? new URL("../../packages/js/dist/node.js", import.meta.url).pathname);
const { open } = await import(pathToFileURL(entry).href);
const parent = process.argv[3] ?? tmpdir();
const N = 2000;
const WRITERS = 8;
const value = new Uint8Array(100).fill(7);

async function run(name, writers) {
  const dir = mkdtempSync(join(parent, "synced-puts-"));
  const db = await open(dir, { engineThread: "caller", keyEncoding: "utf8", valueEncoding: "binary" });
  try {
    await db.put("warm", value, { sync: true });
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const elu = performance.eventLoopUtilization();
    const start = performance.now();
    const per = N / writers;
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < per; i++) {
          await db.put(`k${w}-${i}`, value, { sync: true });
        }
      }),
    );
    const ms = performance.now() - start;
    const busy = performance.eventLoopUtilization(elu);
    delay.disable();
    const line = {
      case: name,
      puts: N,
      writers,
      totalMs: +ms.toFixed(1),
      putsPerSec: Math.round((N / ms) * 1000),
      usPerPut: +((ms * 1000) / N).toFixed(1),
      loopDelayMeanMs: +(delay.mean / 1e6).toFixed(2),
      loopDelayP99Ms: +(delay.percentile(99) / 1e6).toFixed(2),
      loopDelayMaxMs: +(delay.max / 1e6).toFixed(2),
      // Share of the time the event loop was busy (running JS or blocked in a system call).
      loopUtilization: +busy.utilization.toFixed(3),
    };
    console.log(JSON.stringify(line));
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await run("put/sync/1-writer", 1);
await run(`put/sync/${WRITERS}-writers`, WRITERS);
