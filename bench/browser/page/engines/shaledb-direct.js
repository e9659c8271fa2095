// `shaledb-direct`: the whole workload inside an application worker that opened the database
// with `openInWorker` (shaledb-direct-worker.js), ShaleDB called synchronously — the same
// comparison sqlite-wasm-direct makes for SQLite.

/** @returns {import("./index.js").Adapter} */
export function createDirectAdapter() {
  return {
    name: "shaledb-direct",
    runInWorker(cfg, log) {
      const worker = new Worker(new URL("./shaledb-direct-worker.js", import.meta.url), { type: "module", name: "app" });
      return new Promise((resolve, reject) => {
        worker.onerror = (e) => {
          e.preventDefault();
          worker.terminate();
          reject(new Error(`shaledb-direct worker failed: ${e.message}`));
        };
        worker.onmessage = (e) => {
          const m = e.data;
          if (m.started) return worker.postMessage({ id: 1, cfg });
          if (m.log !== undefined) return log(m.log);
          worker.terminate();
          if (m.error !== undefined) reject(new Error(m.error));
          else resolve(m.result);
        };
      });
    },
  };
}
