#!/usr/bin/env node
// Turns `go test -bench` output of minikafka's benchmark (stdin) into the suite's JSON lines:
//   node go-bench-to-jsonl.mjs ENGINE RUN HOST OUT.jsonl
// BenchmarkX-N  <iterations>  <ns> ns/op  [<ns> ns(p99)  <ns> ns(p50)  <ns> ns(p999)] ...
// -> case X, metric us/op; EndToEndLatency's percentiles -> case EndToEndLatency/pNN, metric us.
// Lines are printed and appended to OUT.jsonl; a benchmark that printed no result line
// (it failed) is reported on stderr and gives no line.
import { appendFileSync, readFileSync } from "node:fs";

const [engine, run, host, out] = process.argv.slice(2);
const expected = ["Publish1Topic", "Throughput", "EndToEndLatency"];
const seen = new Set();
const lines = [];
for (const line of readFileSync(0, "utf8").split("\n")) {
  const m = /^Benchmark(\w+)-\d+\s+(\d+)\s+([\d.]+) ns\/op(.*)$/.exec(line.trim());
  if (!m) continue;
  const [, name, , nsPerOp, rest] = m;
  seen.add(name);
  const emit = (c, metric, value) =>
    lines.push(JSON.stringify({ suite: "topic", case: c, engine, metric, value: Number(value.toFixed(3)), run, host }));
  emit(name, "us/op", Number(nsPerOp) / 1e3);
  for (const [, ns, p] of rest.matchAll(/([\d.]+) ns\((p\d+)\)/g)) emit(`${name}/${p}`, "us", Number(ns) / 1e3);
}
for (const name of expected) if (!seen.has(name)) console.error(`note: ${engine}: Benchmark${name} gave no result (failed?)`);
for (const l of lines) console.log(l);
if (lines.length) appendFileSync(out, lines.map((l) => l + "\n").join(""));
