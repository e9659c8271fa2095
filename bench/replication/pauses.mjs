// What stalls a benchmark process: its event loop's delay (perf_hooks.monitorEventLoopDelay,
// sampled every 1 ms) and its garbage collections (PerformanceObserver "gc"), summarized for the
// run's report so a lag tail can be told apart from the feed's own cost.
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";

/** Starts recording; `summary()` returns `{ cores (CPU time of all threads / wall time), loopP99, loopMax, gcCount, gcMs, gcMax }` in ms. */
export function recordPauses() {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const gc = { count: 0, ms: 0, max: 0 };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.ms += e.duration;
      gc.max = Math.max(gc.max, e.duration);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    summary() {
      loop.disable();
      observer.disconnect();
      const ms = (ns) => Math.round(ns / 1e4) / 100;
      const cpu = process.cpuUsage(cpu0);
      const cores = Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100) / 100;
      return { cores, loopP99: ms(loop.percentile(99)), loopMax: ms(loop.max), gcCount: gc.count, gcMs: Math.round(gc.ms), gcMax: Math.round(gc.max * 100) / 100 };
    },
  };
}
