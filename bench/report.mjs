#!/usr/bin/env node
// Renders bench/results/REPORT.md and one SVG chart per suite from bench/results/*.jsonl.
// For every (suite, case, metric, engine) the figure of the latest run that measured it is used;
// ratios compare ShaleDB with a peer only when both come from the same run.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const dir = join(dirname(fileURLToPath(import.meta.url)), "results");
// Latency percentiles shown only in the tail-latency table (p99 is also in the suite's table).
const tailOnly = /^us\/(p50|p99\.9|max)$/;
const higherIsBetter = (metric) => !/(us|ms|ns)\/op|^(us|ms|ns)(\/|$)|bytes|amplification|^kB$/i.test(metric);

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
// A figure: the value, and for a median of repeated runs its range (bench/common/median.mjs).
const cell = (r) =>
  !r ? "" : r.spread ? `${fmt(r.value)} (${fmt(r.spread[0])}–${fmt(r.spread[1])})` : fmt(r.value);

// `cap`: the axis ends there; longer bars are cut at it (their label still gives the ratio).
function chart(suite, rows, cap = Infinity) {
  const bar = 18, gap = 8, left = 230, width = 420, top = 30;
  const max = Math.max(2, ...rows.map((r) => Math.min(r.ratio, cap)));
  const x = (v) => left + (Math.min(v, max) / max) * width;
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
  if (suite === "node") {
    renderNode(map);
    continue;
  }
  if (suite === "browser") {
    renderBrowser(map);
    continue;
  }
  const rows = [...map.values()];
  const hosts = [...new Set(rows.map((r) => r.host).filter(Boolean))];
  const runs = [...new Set(rows.map((r) => r.run).filter(Boolean))].sort();
  out.push(`## ${suite}`, "", `Machine: ${hosts.join("; ") || "unknown"}. Runs: ${runs.join(", ") || "unknown"}.`, "");
  const engines = [...new Set(rows.map((r) => r.engine))].sort((a, b) => (a === "shaledb" ? -1 : b === "shaledb" ? 1 : a.localeCompare(b)));
  // The tail-latency table below shows every percentile; this one keeps p99 (and ops/s).
  const cases = [...new Set(rows.filter((r) => !tailOnly.test(r.metric)).map((r) => `${r.case}\u0000${r.metric}`))];
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
    out.push(`| ${c} | ${metric} | ${engines.map((e) => cell(get(e))).join(" | ")} | ${ratioText} |`);
  }
  out.push("");
  if (ratios.length) {
    writeFileSync(join(dir, `${suite}.svg`), chart(suite, ratios));
    out.push(`![${suite} ratios](${suite}.svg)`, "");
  }
  renderTail(rows, engines);
  renderTargets(suite, map);
}

// Tail latency (bench/native `latency/` cases): one row per case and engine with its ops/s and
// its percentiles of µs per operation (metrics `us/p50`, `us/p99`, `us/p99.9`, `us/max`).
function renderTail(rows, engines) {
  const tail = rows.filter((r) => r.metric === "us/p50");
  if (!tail.length) return;
  const get = (c, metric, e) => rows.find((r) => r.case === c && r.metric === metric && r.engine === e);
  const metrics = ["ops/s", "us/p50", "us/p99", "us/p99.9", "us/max"];
  out.push("Tail latency: every operation timed, for the same duration on every engine (µs per operation; lower is better).", "",
    "| case | engine | ops/s | p50 | p99 | p99.9 | max |", "|---|---|---:|---:|---:|---:|---:|");
  for (const c of [...new Set(tail.map((r) => r.case))]) {
    for (const e of engines.filter((e) => get(c, "us/p50", e))) {
      out.push(`| ${c} | ${e} | ${metrics.map((m) => cell(get(c, m, e))).join(" | ")} |`);
    }
  }
  out.push("");
}

// The performance issue's targets for the native suites, each checked on figures of one run.
// `ratio(c, metric, a, b)`: a's figure over b's, oriented so that > 1 means a is better.
function renderTargets(suite, map) {
  const get = (c, metric, e) => map.get(`${c}\u0000${metric}\u0000${e}`);
  const ratio = (c, metric, a, b) => {
    const x = get(c, metric, a);
    const y = get(c, metric, b);
    if (!x || !y || x.run !== y.run || !x.value || !y.value) return undefined;
    return higherIsBetter(metric) ? x.value / y.value : y.value / x.value;
  };
  /** shaledb's figure against `peer`'s, needing at least `min`. */
  const atLeast = (c, metric, peer, min) => () => {
    const r = ratio(c, metric, "shaledb", peer);
    return r === undefined ? "not measured" : `${r >= min ? "met" : "missed"}: ${r.toFixed(2)}x`;
  };
  /** shaledb's time per op (`metric`) against the OS's bare `osCase`: within `factor`. */
  const within = (c, metric, osCase, factor) => () => {
    const ours = get(c, metric, "shaledb");
    const os = get(osCase, metric, "os");
    if (!ours || !os || ours.run !== os.run || !os.value) return "not measured";
    const r = ours.value / os.value;
    return `${r <= factor ? "met" : "missed"}: ${r.toFixed(2)}x the bare fdatasync (${fmt(ours.value)} vs ${fmt(os.value)} ${metric})`;
  };
  const targets = {
    recordio: [
      ["uncompressed 1 KiB record writes ≥ 1.3x go-sstables", atLeast("write/none/1KiB", "MB/s", "go-sstables", 1.3)],
      ["uncompressed 1 MB record writes ≥ 1.0x go-sstables", atLeast("write/none/1MB", "MB/s", "go-sstables", 1)],
      ["synced 1 KiB writes within 1.1x of a bare fdatasync", within("write/sync/1KiB", "us/op", "fdatasync/1KiB", 1.1)],
    ],
    db: [
      ...["fillseq", "fillrandom", "overwrite", "mixed/50-50/1000keys"].map((c) => [`${c} ≥ fjall`, atLeast(c, "ops/s", "fjall", 1)]),
      ["synced put ≤ fjall's time", atLeast("put/sync/100B", "us/op", "fjall", 1)],
      ["synced put within 1.1x of a bare fdatasync", within("put/sync/100B", "us/op", "fdatasync/100B", 1.1)],
      ...["readrandom", "readseq"].flatMap((c) => ["fjall", "rocksdb"].map((p) => [`${c} ahead of ${p}`, atLeast(c, "ops/s", p, 1)])),
    ],
    queue: queueTargets(map, get),
    // The topic-log issue (14): minikafka's own benchmark over loopback TCP against minikafka
    // and the log server (examples/log-server), and in-process (bench/run-topic.sh).
    topic: [
      ...["Publish1Topic", "Throughput", "EndToEndLatency"].map((c) => [`${c} over TCP ahead of minikafka (us/op)`, atLeast(c, "us/op", "minikafka", 1)]),
      ["EndToEndLatency p99 over TCP ahead of minikafka", atLeast("EndToEndLatency/p99", "us", "minikafka", 1)],
      ["in-process end-to-end p99 < 100 µs at 50% load", () => {
        const r = get("inproc/EndToEndLatency/50%load/p99", "us", "shaledb");
        return r ? `${r.value < 100 ? "met" : "missed"}: ${fmt(r.value)} µs` : "not measured";
      }],
    ],
    // The change-feed issue (15): bench/run-replication.sh (a real nats-server on loopback).
    replication: [
      ...["1f", "3f"].map((f) => [`lag p99 < 5 ms at 50% load (${f === "1f" ? "1 follower" : "3 followers"})`, () => {
        const r = get(`lag/p99/50pct/${f}`, "ms", "shaledb");
        return r ? `${r.value < 5 ? "met" : "missed"}: ${fmt(r.value)} ms` : "not measured";
      }]),
      ["forwarding keeps up with the leader's unsynced rate, batches of 100", () => {
        const fwd = get("forward/batches/max/1f", "batches/s", "shaledb");
        const wrote = get("write/batches/max/1f", "batches/s", "shaledb");
        const alone = get("leader/batches/max", "batches/s", "shaledb");
        if (!fwd || !wrote || fwd.run !== wrote.run) return "not measured";
        const r = fwd.value / wrote.value;
        const aloneText = alone && alone.run === fwd.run ? `; the leader alone: ${fmt(alone.value)} batches/s` : "";
        return `${r >= 0.99 ? "met" : "missed"}: ${fmt(fwd.value)} batches/s forwarded while the leader wrote ${fmt(wrote.value)}${aloneText}`;
      }],
      ["the forwarder alone outpaces the leader's unsynced rate, batches of 100", () => {
        const fwd = get("forward/batches/backlog", "batches/s", "shaledb");
        const wrote = get("write/batches/backlog", "batches/s", "shaledb");
        if (!fwd || !wrote || fwd.run !== wrote.run) return "not measured";
        return `${fwd.value >= wrote.value ? "met" : "missed"}: a backlog forwarded at ${fmt(fwd.value)} batches/s; the leader wrote it at ${fmt(wrote.value)}`;
      }],
    ],
  }[suite];
  if (!targets) return;
  out.push("Targets (same run):", "", "| target | result |", "|---|---|", ...targets.map(([name, check]) => `| ${name} | ${check()} |`), "");
}
// The queue issue's targets (bench/queue, bash bench/run-queue.sh), each on figures of one run:
// flood ahead of siberite and darner at every connection count; packing throughput flat (the
// last backlog step within 20% of the empty queue's; siberite's published run drops 38%); RSS
// below siberite's at every step; in-process Node push+reserve+ack ≥ 200k items/s in batches
// of 100.
function queueTargets(map, get) {
  const allQueueRows = [...map.values()];
  const sameRun = (a, b) => a && b && a.run === b.run && a.value && b.value;
  const flood = [1, 10, 100, 1000].flatMap((n) =>
    ["siberite", "darner"].map((peer) => [
      `flood/${n}conns ahead of ${peer}`,
      () => {
        const ours = get(`flood/${n}conns`, "ops/s", "shaledb");
        const theirs = get(`flood/${n}conns`, "ops/s", peer);
        if (!sameRun(ours, theirs)) return "not measured";
        const r = ours.value / theirs.value;
        return `${r >= 1 ? "met" : "missed"}: ${r.toFixed(2)}x`;
      },
    ]),
  );
  // Growth steps of one engine's packing run: [backlog, figure] sorted by backlog.
  const growth = (size, engine) => {
    const steps = [];
    for (const r of allQueueRows) {
      const m = new RegExp(`^packing/${size}/(\\d+)$`).exec(r.case);
      if (m && r.engine === engine && r.metric === "ops/s") steps.push([Number(m[1]), r]);
    }
    return steps.sort((a, b) => a[0] - b[0]);
  };
  // Flat: the last backlog step, and the queue drained back to empty, each within 20% of the
  // empty queue's throughput at the start.
  const flat = (size) => () => {
    const steps = growth(size, "shaledb");
    if (steps.length < 2) return "not measured";
    const [first, last] = [steps[0], steps[steps.length - 1]];
    const drained = get(`packing/${size}/0/draining`, "ops/s", "shaledb");
    if (!sameRun(first[1], last[1])) return "not measured in one run";
    const up = last[1].value / first[1].value;
    const down = sameRun(first[1], drained) ? drained.value / first[1].value : undefined;
    const worst = Math.min(up, down ?? up);
    const peers = ["siberite", "darner"]
      .map((p) => {
        const ps = growth(size, p);
        const a = ps.find(([b]) => b === first[0]);
        const z = ps.find(([b]) => b === last[0]);
        const d = get(`packing/${size}/0/draining`, "ops/s", p);
        if (!sameRun(a?.[1], z?.[1]) || a[1].run !== last[1].run) return "";
        const back = sameRun(a[1], d) ? `, ${(d.value / a[1].value).toFixed(2)}x drained` : "";
        return `${p} ${(z[1].value / a[1].value).toFixed(2)}x${back}`;
      })
      .filter(Boolean);
    const downText = down === undefined ? "" : `, ${down.toFixed(2)}x drained back to empty (${fmt(drained.value)})`;
    return `${worst >= 0.8 ? "met" : "missed"}: ${up.toFixed(2)}x at ${last[0].toLocaleString("en")} items (${fmt(last[1].value)} vs ${fmt(first[1].value)} ops/s)${downText}${peers.length ? `; ${peers.join("; ")}` : ""}`;
  };
  const rss = () => {
    const rows = allQueueRows.filter((r) => r.engine === "shaledb" && r.case.startsWith("rss/1KiB/"));
    const checked = rows.map((r) => [r, get(r.case, "kB", "siberite")]).filter(([a, b]) => sameRun(a, b));
    if (!checked.length) return "not measured";
    const missed = checked.filter(([a, b]) => a.value >= b.value);
    const most = checked.reduce((x, y) => (y[0].value / y[1].value > x[0].value / x[1].value ? y : x));
    return missed.length
      ? `missed at ${missed.map(([a, b]) => `${a.case.split("/")[2]} items (${fmt(a.value)} vs ${fmt(b.value)} kB)`).join(", ")}`
      : `met at all ${checked.length} steps (highest ${(most[0].value / most[1].value).toFixed(2)}x siberite's, ${most[0].case.split("/")[2]} items)`;
  };
  const nodeInproc = () => {
    const r = get("inproc/node/push+reserve+ack/batch100", "items/s", "shaledb");
    if (!r) return "not measured (bench/queue measures the Rust API in-process only)";
    return `${r.value >= 200_000 ? "met" : "missed"}: ${fmt(r.value)} items/s`;
  };
  return [
    ...flood,
    ["packing 1 KiB flat: the last backlog step and the drained queue ≥ 0.8x the empty queue's", flat("1KiB")],
    ["packing 64 B flat: the last backlog step and the drained queue ≥ 0.8x the empty queue's", flat("64B")],
    ["RSS below siberite's at every step (1 KiB items, set then get)", rss],
    ["in-process Node push+reserve+ack ≥ 200k items/s in batches of 100", nodeInproc],
  ];
}

// What the Node and browser suites' renderings share: the figures of one suite (the latest of
// each), its engines in `engineOrder` (then by name), cases ranked by `opOrder` (an op matches an
// entry equal to it or starting with it) then by `metricOrder`, value sizes, the head of a size's
// table, and ShaleDB's ratio to a peer on one figure (> 1: ShaleDB better), defined only when
// both come from the same run.
function suiteView(map, engineOrder, opOrder, metricOrder) {
  const rows = [...map.values()];
  const hosts = [...new Set(rows.map((r) => r.host).filter(Boolean))];
  const runs = [...new Set(rows.map((r) => r.run).filter(Boolean))].sort();
  const rank = (e) => (engineOrder.includes(e) ? engineOrder.indexOf(e) : engineOrder.length);
  const engines = [...new Set(rows.map((r) => r.engine))].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const peers = engines.filter((e) => e !== "shaledb");
  const opRank = (op) => {
    const i = opOrder.findIndex((o) => op === o || op.startsWith(o));
    return i < 0 ? opOrder.length : i;
  };
  const sizeOf = (c) => c.slice(c.lastIndexOf("/") + 1);
  const opOf = (c) => c.slice(0, c.lastIndexOf("/"));
  const sizes = [...new Set(rows.map((r) => sizeOf(r.case)))].sort((a, b) => (a === "100B" ? -1 : b === "100B" ? 1 : a.localeCompare(b)));
  const get = (c, metric, e) => map.get(`${c}\u0000${metric}\u0000${e}`);
  const ratio = (c, metric, e) => {
    const ours = get(c, metric, "shaledb");
    const p = get(c, metric, e);
    if (!ours || !p || ours.run !== p.run || !ours.value || !p.value) return undefined;
    return higherIsBetter(metric) ? ours.value / p.value : p.value / ours.value;
  };
  const metricRank = (m) => (metricOrder.includes(m) ? metricOrder.indexOf(m) : metricOrder.length);
  /** The `case\u0000metric` pairs of one value size, in table order. */
  const casesOf = (size) =>
    [...new Set(rows.filter((r) => sizeOf(r.case) === size).map((r) => `${r.case}\u0000${r.metric}`))].sort((a, b) => {
      const [ca, ma] = a.split("\u0000");
      const [cb, mb] = b.split("\u0000");
      return opRank(opOf(ca)) - opRank(opOf(cb)) || opOf(ca).localeCompare(opOf(cb)) || metricRank(ma) - metricRank(mb);
    });
  const tableHead = [
    `| case | metric | ${engines.join(" | ")} | ${peers.map((p) => `vs ${p}`).join(" | ")} |`,
    `|---|---|${engines.map(() => "---:").join("|")}|${peers.map(() => "---:").join("|")}|`,
  ];
  return { rows, hosts, runs, engines, peers, opRank, sizeOf, opOf, sizes, get, ratio, casesOf, tableHead };
}

// The guard of the synchronous API's random get (the boundary issue): its µs per get beside
// native ShaleDB's and the synchronous peers' of the same run, flagged when it falls behind
// any peer or below 0.8x native speed, so a regression of the hottest call shows in the report.
// Measured on a quiet machine: 2.3–2.75 µs native, 4.2–4.4 µs classic-level getSync, 2.4–2.5 µs
// lmdb, 7.4–7.6 µs better-sqlite3, 8.1–11.5 µs ShaleDB before the boundary work.
function syncGetGuard(sizes, get) {
  const peers = ["shaledb-native", "classic-level", "lmdb", "better-sqlite3"];
  const rowsOut = [];
  for (const size of sizes) {
    const c = `get/random/${size}`;
    const ours = get(c, "us/op", "shaledb");
    if (!ours) continue;
    const same = (e) => {
      const r = get(c, "us/op", e);
      return r && r.run === ours.run ? r.value : undefined;
    };
    const cells = peers.map((e) => (same(e) === undefined ? "" : fmt(same(e))));
    const problems = [];
    const native = same("shaledb-native");
    if (native !== undefined && ours.value > native / 0.8) {
      problems.push(`${(native / ours.value).toFixed(2)}x native (< 0.8x)`);
    }
    for (const e of peers.slice(1)) {
      const theirs = same(e);
      if (theirs !== undefined && ours.value > theirs) problems.push(`behind ${e}`);
    }
    rowsOut.push(`| ${size} | ${fmt(ours.value)} | ${cells.join(" | ")} | ${problems.length ? `**FLAG**: ${problems.join(", ")}` : "ok"} |`);
  }
  if (!rowsOut.length) return [];
  return [
    "Guard: the synchronous API's random get, µs per get (lower is better; same run). Flagged when",
    "ShaleDB is below 0.8x native speed or behind a synchronous peer (classic-level's getSync,",
    "lmdb, better-sqlite3). Before the boundary work (a quiet machine): ShaleDB 8.1–11.5 µs, native",
    "2.3–2.75, classic-level 4.2–4.4, lmdb 2.4–2.5, better-sqlite3 7.4–7.6.", "",
    `| size | shaledb | ${peers.join(" | ")} | verdict |`,
    `|---|---:|${peers.map(() => "---:").join("|")}|---|`,
    ...rowsOut, "",
  ];
}

// The Node.js suite (bench/node, bench/run-node.sh): one table per value size with every engine
// side by side, ShaleDB's ratio to each (same run only), the targets, and one chart per size.
function renderNode(map) {
  const opOrder = ["put/seq", "put/random", "put/batch100", "put/batch1000", "get/random", "scan/1000", "put/sync"];
  const { hosts, runs, engines, peers, opOf, sizes, get, ratio, casesOf, tableHead } = suiteView(
    map,
    ["shaledb", "shaledb-promise", "shaledb-promise-caller", "shaledb-native", "classic-level", "lmdb", "better-sqlite3"],
    [...opOrder, "eventloop"],
    ["ops/s", "ms", "ms/max"],
  );

  out.push("## node", "",
    `Machine: ${hosts.join("; ") || "unknown"}. Runs: ${runs.join(", ") || "unknown"}.`, "",
    "The same workloads through each engine's Node.js API (`bash bench/run-node.sh`, see",
    "`bench/node/README.md`), and on the native Rust `shaledb::Db` (`shaledb-native`). 16-byte keys;",
    "ops/s counts puts, gets or scans of 1,000 entries. \"vs X\" is ShaleDB (WebAssembly, Node API)",
    "relative to X in the same run, higher is better for ShaleDB: against `shaledb-native` it is the",
    "share of native speed ShaleDB keeps through WebAssembly and the JS binding.", "");
  for (const size of sizes) {
    const cases = casesOf(size);
    out.push(`### ${size} values`, "", ...tableHead);
    const bars = [];
    for (const cm of cases) {
      const [c, metric] = cm.split("\u0000");
      const cells = engines.map((e) => (get(c, metric, e) ? fmt(get(c, metric, e).value) : ""));
      const ratios = peers.map((p) => {
        const r = ratio(c, metric, p);
        if (r !== undefined && metric === "ops/s") bars.push({ case: `${opOf(c)} vs ${p}`, ratio: r, peer: p });
        return r === undefined ? "" : `${r.toFixed(2)}x`;
      });
      out.push(`| ${opOf(c)} | ${metric} | ${cells.join(" | ")} | ${ratios.join(" | ")} |`);
    }
    out.push("");
    if (bars.length) {
      const file = `node-${size}.svg`;
      writeFileSync(join(dir, file), chart(`node, ${size} values`, bars, 4));
      out.push(`![node ${size} ratios](${file})`, "");
    }
  }

  // Targets of the Node.js suite's issue: faster than classic-level on every workload; random
  // gets at least 0.5x lmdb's synchronous gets; every workload within 2x of native Rust.
  // The boundary issue's: every workload ≥ 0.8x native; random gets ahead of classic-level's
  // getSync, lmdb and better-sqlite3; batches ≥ 1.2x classic-level.
  const targets = [
    { name: "faster than classic-level on every workload", peer: "classic-level", min: 1, ops: null },
    { name: "random gets ≥ 0.5x lmdb's synchronous gets", peer: "lmdb", min: 0.5, ops: ["get/random"] },
    { name: "every workload within 2x of native Rust (≥ 0.5x shaledb-native)", peer: "shaledb-native", min: 0.5, ops: null },
    { name: "every workload ≥ 0.8x native Rust (shaledb-native)", peer: "shaledb-native", min: 0.8, ops: null },
    { name: "random gets ahead of classic-level (getSync)", peer: "classic-level", min: 1, ops: ["get/random"] },
    { name: "random gets ahead of lmdb", peer: "lmdb", min: 1, ops: ["get/random"] },
    { name: "random gets ahead of better-sqlite3", peer: "better-sqlite3", min: 1, ops: ["get/random"] },
    { name: "batches of 100 and 1,000 ≥ 1.2x classic-level", peer: "classic-level", min: 1.2, ops: ["put/batch100", "put/batch1000"] },
  ];
  const lines = [];
  for (const t of targets) {
    const cells = sizes.map((size) => {
      const checked = [];
      for (const op of t.ops ?? opOrder) {
        const r = ratio(`${op}/${size}`, "ops/s", t.peer);
        if (r !== undefined) checked.push({ op, r });
      }
      if (!checked.length) return "not measured";
      const missed = checked.filter((x) => x.r < t.min);
      const worst = checked.reduce((a, b) => (b.r < a.r ? b : a));
      return missed.length
        ? `missed: ${missed.map((x) => `${x.op} ${x.r.toFixed(2)}x`).join(", ")}`
        : `met (lowest ${worst.r.toFixed(2)}x, ${worst.op})`;
    });
    lines.push(`| ${t.name} | ${cells.join(" | ")} |`);
  }
  out.push("Targets (ShaleDB's ratios above, same run):", "",
    `| target | ${sizes.join(" | ")} |`, `|---|${sizes.map(() => "---").join("|")}|`, ...lines, "");
  out.push(...syncGetGuard(sizes, get));

  // The Promise API against classic-level's (both awaited one call at a time), and the event
  // loop's delay while they write and compact: the targets of the one-API issue.
  const promiseEngines = ["shaledb-promise", "shaledb-promise-caller"].filter((e) => engines.includes(e));
  if (promiseEngines.length && engines.includes("classic-level")) {
    // classic-level's `get/random` is its synchronous `getSync`; its Promise `get` is
    // `get/random-promise`, the one a Promise API compares with.
    const theirCase = (c) => c.replace(/^get\/random\//, "get/random-promise/");
    const vs = (c, metric, e) => {
      const ours = get(c, metric, e);
      const theirs = get(theirCase(c), metric, "classic-level");
      if (!ours || !theirs || ours.run !== theirs.run || !ours.value || !theirs.value) return "";
      return `${(higherIsBetter(metric) ? ours.value / theirs.value : theirs.value / ours.value).toFixed(2)}x`;
    };
    const rowsOut = [];
    for (const size of sizes) {
      for (const op of opOrder) {
        rowsOut.push(`| ${op}/${size} | ops/s | ${promiseEngines.map((e) => vs(`${op}/${size}`, "ops/s", e)).join(" | ")} |`);
      }
      const loop = `eventloop/p99-while-writing/${size}`;
      const p99 = (e) => (get(loop, "ms", e) ? `${fmt(get(loop, "ms", e).value)} ms` : "");
      rowsOut.push(`| event-loop p99 while writing and compacting, ${size} (classic-level ${p99("classic-level") || "?"}) | ms | ${promiseEngines.map(p99).join(" | ")} |`);
    }
    out.push("The Promise API against classic-level's (ratio > 1: ShaleDB better; target ≥ 1 on every",
      "workload; gets against classic-level's Promise `get`, not its `getSync`) and the event loop's",
      "99th-percentile delay (target ≤ 5 ms). `shaledb-promise` runs",
      "the engine in a worker thread (the default), `shaledb-promise-caller` in the calling thread",
      "(`engineThread: \"caller\"`).", "",
      `| case | metric | ${promiseEngines.join(" | ")} |`, `|---|---|${promiseEngines.map(() => "---:").join("|")}|`,
      ...rowsOut, "");
  }
}

// The browser suite (bench/browser, bench/run-browser.sh): one table per value size with every
// engine side by side, ShaleDB's ratio to each (same run only), the targets, one chart per size.
function renderBrowser(allRows) {
  // ShaleDB's download sizes (bench/browser/main.mjs, case download/...) are a sentence, not a table.
  const downloads = new Map([...allRows].filter(([, r]) => r.case.startsWith("download/")));
  const map = new Map([...allRows].filter(([, r]) => !r.case.startsWith("download/")));
  const opOrder = ["put/single", "put/batch100", "put/batch1000", "get/random", "scan/1000", "put/sync", "open/"];
  const { rows, hosts, runs, engines, peers, sizeOf, opOf, sizes, get, ratio, casesOf, tableHead } = suiteView(
    map,
    ["shaledb", "shaledb-direct", "indexeddb", "indexeddb-relaxed", "idb-keyval", "sqlite-wasm", "sqlite-wasm-direct"],
    opOrder,
    ["ops/s", "entries/s", "us/op", "ms", "ms/cold", "ms/first-get"],
  );

  out.push("## browser", "",
    `Machine: ${hosts.join("; ") || "unknown"}. Runs: ${runs.join(", ") || "unknown"}.`, "",
    "The same workloads in headless Chromium (`bash bench/run-browser.sh`, see `bench/browser/README.md`),",
    "every operation awaited before the next: ShaleDB's browser entry (its own worker, OPFS), raw IndexedDB",
    "(`default` and `relaxed` durability), idb-keyval, and SQLite Wasm on `opfs-sahpool` in a worker of the page,",
    "one postMessage round trip per operation (`sqlite-wasm-direct`: the same SQLite called synchronously inside",
    "its worker, no round trip — not something a page can do, shown for scale; `shaledb-direct`: ShaleDB's",
    "synchronous API in an application's own worker, `openInWorker`, its counterpart). Writes reach storage without a",
    "flush, except `put/sync` (ShaleDB `{ sync: true }`, IndexedDB `strict`, SQLite `synchronous=FULL`). 16-byte",
    "keys; ops/s counts puts, gets or scans of 1,000 entries; `open/` is ms from calling open until it resolves",
    "(worker start and wasm compile included): `ms` the median of later opens, `ms/cold` the first in a freshly",
    "loaded page, `ms/first-get` one get right after. \"vs X\" is ShaleDB relative to X in the same run, higher is",
    "better for ShaleDB.", "");
  const download = (what, metric) => downloads.get(`download/${what}\u0000${metric}\u0000shaledb`);
  if (download("module", "bytes") && download("worker", "bytes")) {
    const kb = (r) => (r ? `${(r.value / 1000).toFixed(1)} kB` : "?");
    const gz = ["module", "worker"].map((w) => download(w, "bytes/gzip")?.value);
    const total = gz.every((v) => v !== undefined) ? ` (${kb({ value: gz[0] + gz[1] })} gzipped together)` : "";
    out.push(
      `ShaleDB's download as the bench page's build serves it (run ${download("module", "bytes").run}): the WebAssembly module ` +
        `${kb(download("module", "bytes"))}, ${kb(download("module", "bytes/gzip"))} gzipped; the worker bundle ` +
        `${kb(download("worker", "bytes"))}, ${kb(download("worker", "bytes/gzip"))} gzipped${total}.`,
      "",
    );
  }
  for (const size of sizes) {
    const cases = casesOf(size);
    out.push(`### ${size} values`, "", ...tableHead);
    const bars = [];
    for (const cm of cases) {
      const [c, metric] = cm.split("\u0000");
      const cells = engines.map((e) => (get(c, metric, e) ? fmt(get(c, metric, e).value) : ""));
      const ratios = peers.map((p) => {
        const r = ratio(c, metric, p);
        if (r !== undefined && (metric === "ops/s" || metric === "ms")) bars.push({ case: `${opOf(c)} vs ${p}`, ratio: r, peer: p });
        return r === undefined ? "" : `${r.toFixed(2)}x`;
      });
      out.push(`| ${opOf(c)} | ${metric} | ${cells.join(" | ")} | ${ratios.join(" | ")} |`);
    }
    out.push("");
    if (bars.length) {
      const file = `browser-${size}.svg`;
      writeFileSync(join(dir, file), chart(`browser, ${size} values`, bars, 10));
      out.push(`![browser ${size} ratios](${file})`, "");
    }
  }

  // Targets of the browser suite's issue: ≥ 10x IndexedDB's single-put throughput; ahead of
  // sqlite-wasm on every workload; open in under 50 ms for 100k entries.
  const atLeast = (peer, min, ops) => (size) => {
    const checked = [];
    for (const op of ops) {
      const c = rows.find((r) => r.engine === "shaledb" && sizeOf(r.case) === size && (opOf(r.case) === op || (op.endsWith("/") && r.case.startsWith(op))));
      if (!c) continue;
      const metric = opOf(c.case).startsWith("open/") ? "ms" : "ops/s";
      const r = ratio(c.case, metric, peer);
      if (r !== undefined) checked.push({ op: opOf(c.case), r });
    }
    if (!checked.length) return "not measured";
    const missed = checked.filter((x) => x.r < min);
    const worst = checked.reduce((a, b) => (b.r < a.r ? b : a));
    return missed.length
      ? `missed: ${missed.map((x) => `${x.op} ${x.r.toFixed(2)}x`).join(", ")}`
      : `met (${checked.length === 1 ? "" : "lowest "}${worst.r.toFixed(2)}x${checked.length === 1 ? "" : `, ${worst.op}`})`;
  };
  const openTarget = (size) => {
    const r = rows.find((x) => x.engine === "shaledb" && x.metric === "ms" && sizeOf(x.case) === size && x.case.startsWith("open/"));
    if (!r) return size === "100B" ? "not measured" : "";
    const cold = get(r.case, "ms/cold", "shaledb");
    const coldText = cold && cold.run === r.run ? `; first open in a fresh page ${fmt(cold.value)} ms` : "";
    return `${r.value < 50 ? "met" : "missed"}: median ${fmt(r.value)} ms${coldText}`;
  };
  const allOps = opOrder.filter((o) => o !== "open/").concat(["open/"]);
  // shaledb-direct against sqlite-wasm-direct (both synchronous inside a worker), same run.
  const directTarget = (size) => {
    const checked = [];
    for (const r of rows.filter((x) => x.engine === "shaledb-direct" && x.metric === "ops/s" && sizeOf(x.case) === size)) {
      const theirs = get(r.case, "ops/s", "sqlite-wasm-direct");
      if (theirs && theirs.run === r.run && theirs.value) checked.push({ op: opOf(r.case), r: r.value / theirs.value });
    }
    if (!checked.length) return "not measured";
    const missed = checked.filter((x) => x.r < 1);
    const worst = checked.reduce((a, b) => (b.r < a.r ? b : a));
    return missed.length
      ? `missed: ${missed.map((x) => `${x.op} ${x.r.toFixed(2)}x`).join(", ")}`
      : `met (lowest ${worst.r.toFixed(2)}x, ${worst.op})`;
  };
  const targets = [
    { name: "single puts ≥ 10x IndexedDB's, matching durability (`indexeddb-relaxed`)", cell: atLeast("indexeddb-relaxed", 10, ["put/single"]) },
    { name: "single puts ≥ 10x IndexedDB's, its default durability (`indexeddb`)", cell: atLeast("indexeddb", 10, ["put/single"]) },
    { name: "ahead of `sqlite-wasm` on every workload (≥ 1x; open by median ms)", cell: atLeast("sqlite-wasm", 1, allOps) },
    { name: "random gets ≥ 1.3x `sqlite-wasm`'s", cell: atLeast("sqlite-wasm", 1.3, ["get/random"]) },
    { name: "open of a 100k-entry database in under 50 ms (median)", cell: openTarget },
    { name: "`shaledb-direct` ahead of `sqlite-wasm-direct` on every workload", cell: directTarget },
  ];
  out.push("Targets (ShaleDB's ratios above, same run):", "",
    `| target | ${sizes.join(" | ")} |`, `|---|${sizes.map(() => "---").join("|")}|`,
    ...targets.map((t) => `| ${t.name} | ${sizes.map((s) => t.cell(s)).join(" | ")} |`), "");
}

writeFileSync(join(dir, "REPORT.md"), out.join("\n"));
console.log(`wrote ${join(dir, "REPORT.md")}`);
