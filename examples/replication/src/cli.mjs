// What the entry points share: `--name value` arguments (with environment fallbacks), JSON
// event lines on stdout (the tests, the demo and the benchmark read them), and a stop signal
// aborted by SIGTERM or SIGINT.
import { parseArgs } from "node:util";

/** Parses `--key value` options of `spec` ({ key: default }); NATS_URL is `--nats`'s fallback. */
export function options(spec) {
  const { values } = parseArgs({
    options: Object.fromEntries(Object.keys(spec).map((k) => [k, { type: "string" }])),
    strict: true,
  });
  const out = {};
  for (const [k, d] of Object.entries(spec)) {
    const v = values[k] ?? (k === "nats" ? process.env.NATS_URL : undefined);
    out[k] = v === undefined ? d : typeof d === "number" ? Number(v) : v;
  }
  return out;
}

/** Prints one event line: `{"event": name, ...fields}`. */
export function emit(event, fields = {}) {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

/** An AbortSignal aborted by the first SIGTERM or SIGINT. */
export function stopSignal() {
  const controller = new AbortController();
  for (const s of ["SIGTERM", "SIGINT"]) process.once(s, () => controller.abort());
  return controller.signal;
}
