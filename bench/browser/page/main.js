// The bench page: the Node runner (../main.mjs) loads it once per engine and value size (and
// twice per engine for open/), and drives it through `globalThis.bench` with page.evaluate.
// Figures go back to the runner, which writes bench/results/browser.jsonl.
import { createAdapter } from "./engines/index.js";
import { measureOpens, prepareOpen, runWorkload } from "./workloads.js";

/** Progress lines, printed by the runner as they come (console.log). */
const log = (line) => console.log(line);

/** Removes everything this origin keeps in OPFS and IndexedDB: each engine starts from nothing. */
async function clearStorage() {
  const root = await navigator.storage.getDirectory();
  for (let attempt = 0; ; attempt++) {
    const left = [];
    for await (const [name] of root.entries()) {
      try {
        await root.removeEntry(name, { recursive: true });
      } catch (err) {
        left.push(`${name} (${err?.name ?? err})`);
      }
    }
    if (!left.length) break;
    // A worker of the page before may still be letting go of its access handles.
    if (attempt === 50) throw new Error(`OPFS entries still in use: ${left.join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const { name } of await indexedDB.databases()) {
    await new Promise((resolve, reject) => {
      const r = indexedDB.deleteDatabase(name);
      r.onsuccess = () => resolve();
      r.onerror = () => reject(r.error);
    });
  }
}

/** The median time (us) of one awaited postMessage round trip to an echoing worker, carrying a
 *  16-byte key and a `valueSize`-byte value, over `n` trips. */
async function roundTrip(n, valueSize) {
  const w = new Worker(new URL("./echo-worker.js", import.meta.url), { type: "module" });
  const key = new Uint8Array(16);
  const value = new Uint8Array(valueSize);
  const trip = () =>
    new Promise((resolve) => {
      w.onmessage = resolve;
      w.postMessage({ id: 1, op: "put", args: [key, value] });
    });
  for (let i = 0; i < 200; i++) await trip();
  const t = performance.now();
  for (let i = 0; i < n; i++) await trip();
  const us = ((performance.now() - t) * 1000) / n;
  w.terminate();
  return us;
}

globalThis.bench = {
  clearStorage,
  roundTrip,
  /** Every case of one size on one engine; returns the figures. */
  async run(engine, cfg) {
    const a = await createAdapter(engine, cfg);
    if (a.runInWorker) return a.runInWorker(cfg, log);
    const figures = [];
    await runWorkload(a, cfg, (f) => figures.push(f), log);
    return figures;
  },
  /** open/, first page load: writes the database to open. */
  async prepareOpen(engine, cfg) {
    const a = await createAdapter(engine, cfg);
    if (a.runInWorker) throw new Error("not measured (opens happen inside the worker)");
    await prepareOpen(a, cfg, log);
  },
  /** open/, second page load: opens it (the first open is this page's first). */
  async measureOpens(engine, cfg) {
    const a = await createAdapter(engine, cfg);
    const figures = [];
    await measureOpens(a, cfg, (f) => figures.push(f), log);
    return figures;
  },
};
globalThis.benchReady = true;
