import { openSync } from "shaledb";
import fs from "node:fs";
const dir = "/work/main/demo-data/prof2"; fs.rmSync(dir, { recursive: true, force: true });
const db = openSync(dir, { keyEncoding: "binary", valueEncoding: "binary" });
const N = 200000; const val = new Uint8Array(100); for (let i = 0; i < 100; i++) val[i] = (i * 37 + 11) & 255;
const keys = []; for (let i = 0; i < N; i++) { const k = new Uint8Array(16); new DataView(k.buffer).setUint32(12, (i * 2654435761) >>> 0); new DataView(k.buffer).setUint32(8, i); keys.push(k); }
{ let b = db.batch(); for (let i = 0; i < N; i++) { b.put(keys[i], val); if (b.length === 1000) b.write(); } b.write(); }
console.log(JSON.stringify(db.stats().levels));
let steps = 0; let t0 = performance.now(); while (db.maintain(1 << 20)) steps++; console.log("steps", steps, performance.now() - t0, "ms");
console.log(JSON.stringify(db.stats().levels));
t0 = performance.now();
for (let r = 0; r < 5; r++) for (let i = 0; i < N; i++) db.get(keys[(i * 7919) % N]);
let t = performance.now() - t0; console.log("get/random", (N / t * 1000).toFixed(0), "ops/s");
db.close();
