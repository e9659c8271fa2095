#!/usr/bin/env node
// Reduces repeated benchmark figures to one line each: reads JSON lines (bench/results format)
// from the files named on the command line, groups them by (suite, case, engine, metric), and
// prints one line per group whose value is the median, with "spread": [min, max] and
// "repeats": n; "run" and "host" come from the first line of the group.
//
//   node bench/common/median.mjs /tmp/rounds/*.jsonl >> bench/results/recordio.jsonl
import { readFileSync } from "node:fs";

const groups = new Map();
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    const key = [r.suite, r.case, r.engine, r.metric].join("\u0000");
    const g = groups.get(key) ?? { first: r, values: [] };
    g.values.push(r.value);
    groups.set(key, g);
  }
}
for (const { first, values } of groups.values()) {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  const round = (x) => Math.round(x * 1000) / 1000;
  console.log(
    JSON.stringify({
      ...first,
      value: round(median),
      spread: [round(v[0]), round(v[v.length - 1])],
      repeats: v.length,
    }),
  );
}
