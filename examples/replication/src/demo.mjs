// The whole example in one command (`npm run demo -w examples/replication`): starts a
// nats-server, a leader writing 1,000 batches of 100 operations at 250 batches/s while it
// forwards its change feed and publishes a checkpoint every 2 s, two followers tailing the
// stream, and after a second a third follower that bootstraps from the newest checkpoint. It
// prints each process's progress, then stops them all and compares their checksums.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer } from "./nats-server.mjs";
import { caughtUp, spawnScript, stop } from "./processes.mjs";

const dir = mkdtempSync(join(tmpdir(), "shaledb-replication-demo-"));
const nats = await startNatsServer();
console.log(`nats-server: ${nats.url} (WebSocket ${nats.wsUrl}); data in ${dir}`);
const processes = [];
let report;
try {
  const leader = spawnScript("leader.mjs", { data: join(dir, "leader"), nats: nats.url, batches: 1000, rate: 250, "checkpoint-ms": 2000 });
  processes.push(["leader", leader]);
  await leader.waitFor("ready");
  for (const durable of ["follower-1", "follower-2"]) {
    processes.push([durable, spawnScript("follower-main.mjs", { data: join(dir, durable), nats: nats.url, durable })]);
  }
  report = setInterval(() => {
    const parts = processes.map(([name, p]) => {
      const e = p.last("progress");
      return `${name} ${e ? e.sequence.toLocaleString("en") : "-"}`;
    });
    console.log(`sequence: ${parts.join(" | ")}`);
  }, 1000);
  const checkpoint = await leader.waitFor("checkpoint");
  console.log(`leader: checkpoint at sequence ${checkpoint.seq} uploaded (${checkpoint.files} files, ${checkpoint.bytes} bytes)`);
  const late = spawnScript("follower-main.mjs", { data: join(dir, "follower-3"), nats: nats.url, durable: "follower-3", bootstrap: "yes" });
  processes.push(["follower-3", late]);
  const boot = await late.waitFor("bootstrapped");
  console.log(`follower-3: bootstrapped from the checkpoint at sequence ${boot.seq}, tails the stream from message ${boot.streamSeq + 1}`);
  await leader.waitFor("written", () => true, 120_000);
  const l = await stop(leader);
  console.log(`leader: wrote up to sequence ${l.sequence}, JetStream confirmed ${l.confirmed}, cursor at ${l.cursor}`);
  for (const [, p] of processes.slice(1)) await caughtUp(p, l.sequence);
  clearInterval(report);
  let ok = true;
  console.log(`leader      ${l.sha256} (${l.entries} entries)`);
  for (const [name, p] of processes.slice(1)) {
    const s = await stop(p);
    const same = s.sha256 === l.sha256 && s.sequence === l.sequence;
    ok &&= same;
    console.log(`${name.padEnd(11)} ${s.sha256} (${s.entries} entries) ${same ? "= leader" : "DIFFERS"}`);
  }
  console.log(ok ? "converged: every follower holds exactly the leader's data" : "NOT converged");
  process.exitCode = ok ? 0 : 1;
} finally {
  clearInterval(report);
  for (const [, p] of processes) p.kill("SIGKILL");
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}
