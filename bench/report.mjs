#!/usr/bin/env node
// Renders bench/results/REPORT.md and one SVG chart per suite from bench/results/*.jsonl.
// For every (suite, case, metric, engine) the figure of the latest run that measured it is used;
// ratios compare ShaleDB with a peer only when both come from the same run.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const dir = join(dirname(fileURLToPath(import.meta.url)), "results");
const higherIsBetter = (metric) => !/(us|ms|ns)\/op|bytes|amplification/i.test(metric);

const suites = new Map();
for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
  for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    const key = `${r.case}\u0000${r.metric}\u0000${r.engine}`;
    const s = suites.get(r.suite) ?? new Map();
    const old = s.get(key);
    if (!old || (r.run ?? "") >= (old.run ?? "")) s.set(key, r);
    suites.set(r.suite, s);
  }
}

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

function chart(suite, rows) {
  const bar = 18, gap = 8, left = 230, width = 420, top = 30;
  const max = Math.max(2, ...rows.map((r) => r.ratio));
  const x = (v) => left + (v / max) * width;
  const h = top + rows.length * (bar + gap) + 30;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + width + 70}" height="${h}" font-family="sans-serif" font-size="12">`,
    `<text x="10" y="18" font-weight="bold">${esc(suite)}: ShaleDB relative to each peer (same run; 1.0 = equal, longer is better)</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * (bar + gap);
    const color = r.ratio >= 1 ? "#2e7d32" : "#c62828";
    parts.push(`<text x="${left - 6}" y="${y + 13}" text-anchor="end">${esc(r.case)}</text>`);
    parts.push(`<rect x="${left}" y="${y}" width="${Math.max(1, x(r.ratio) - left)}" height="${bar}" fill="${color}"/>`);
    parts.push(`<text x="${x(r.ratio) + 4}" y="${y + 13}">${r.ratio.toFixed(2)}x</text>`);
  });
  parts.push(`<line x1="${x(1)}" y1="${top - 4}" x2="${x(1)}" y2="${h - 24}" stroke="#555" stroke-dasharray="4 3"/>`);
  parts.push(`<text x="${x(1)}" y="${h - 8}" text-anchor="middle">1.0x</text></svg>`);
  return parts.join("\n");
}

const out = ["# ShaleDB benchmark report", "",
  "Rendered by `node bench/report.mjs` from `bench/results/*.jsonl` (latest run of each figure).",
  "Ratios compare figures from the same run only; absolute numbers on a shared 2-core machine drift between runs.", ""];
for (const [suite, map] of [...suites].sort()) {
  const rows = [...map.values()];
  const hosts = [...new Set(rows.map((r) => r.host).filter(Boolean))];
  const runs = [...new Set(rows.map((r) => r.run).filter(Boolean))].sort();
  out.push(`## ${suite}`, "", `Machine: ${hosts.join("; ") || "unknown"}. Runs: ${runs.join(", ") || "unknown"}.`, "");
  const engines = [...new Set(rows.map((r) => r.engine))].sort((a, b) => (a === "shaledb" ? -1 : b === "shaledb" ? 1 : a.localeCompare(b)));
  const cases = [...new Set(rows.map((r) => `${r.case}\u0000${r.metric}`))];
  out.push(`| case | metric | ${engines.join(" | ")} | ShaleDB vs peers |`, `|---|---|${engines.map(() => "---:").join("|")}|---:|`);
  const ratios = [];
  for (const cm of cases) {
    const [c, metric] = cm.split("\u0000");
    const get = (e) => map.get(`${c}\u0000${metric}\u0000${e}`);
    const ours = get("shaledb");
    const ratioTexts = [];
    for (const e of engines) {
      const p = get(e);
      if (e === "shaledb" || e === "os" || !ours || !p || p.run !== ours.run) continue;
      const ratio = higherIsBetter(metric) ? ours.value / p.value : p.value / ours.value;
      ratioTexts.push(`${ratio.toFixed(2)}x ${e}`);
      ratios.push({ case: `${c} vs ${e} (${metric})`, ratio, peer: e });
    }
    const ratioText = ratioTexts.join(", ");
    out.push(`| ${c} | ${metric} | ${engines.map((e) => (get(e) ? fmt(get(e).value) : "")).join(" | ")} | ${ratioText} |`);
  }
  out.push("");
  if (ratios.length) {
    writeFileSync(join(dir, `${suite}.svg`), chart(suite, ratios));
    out.push(`![${suite} ratios](${suite}.svg)`, "");
  }
}
writeFileSync(join(dir, "REPORT.md"), out.join("\n"));
console.log(`wrote ${join(dir, "REPORT.md")}`);
