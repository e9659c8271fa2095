// The follower's side: a durable JetStream consumer of the change stream, each message applied to
// the follower database with `applyChanges` and acked only after the apply returned.
//
// Ordering: the database refuses a change that does not follow the last one it applied
// (CHANGE_GAP), so messages must arrive in stream order. A durable consumer redelivers messages
// that a dead consumer had received but not acked only after their ack wait, behind newer
// ones; so on every start the follower recreates its consumer at the stream sequence after the
// consumer's ack floor (the last message it acked in order). Messages applied but not acked
// before a crash come again and are skipped (applyChanges is idempotent by sequence:
// `{ applied: false }`). A real gap is never skipped: CHANGE_GAP rejects `done`.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { streamNames } from "./stream.mjs";

/**
 * Where the consumer `durable` starts: after its ack floor if it exists and acked anything,
 * else `startStreamSeq` (from a bootstrap checkpoint, bootstrap.mjs), else the stream's start.
 */
async function startSequence(jsm, stream, durable, startStreamSeq) {
  try {
    const info = await jsm.consumers.info(stream, durable);
    if (info.ack_floor.stream_seq > 0) return info.ack_floor.stream_seq + 1;
    return info.config.opt_start_seq ?? startStreamSeq ?? 1;
  } catch (e) {
    if (!/not found/i.test(String(e?.message))) throw e;
    return startStreamSeq ?? 1;
  }
}

/**
 * Applies the stream to follower database `db` (opened with `{ follower: true }`) until
 * `signal` aborts. `durable` names this follower's consumer (one per follower). Returns
 * `{ done }`: resolves when stopped by `signal`, rejects on any error of the database
 * (CHANGE_GAP, closed) or of JetStream. `onApplied({ applied, lastSeq, streamSeq, message })`
 * is called after each message (`message`: the JetStream message, with its headers);
 * `onMessage(message, { applying, maxApplies })` before its apply (`applying`: applies in flight).
 */
export async function startFollower(db, nc, { name, durable, startStreamSeq, signal, onMessage, onApplied, batch = 512, maxApplies = 32 } = {}) {
  const { stream } = streamNames(name);
  const jsm = await jetstreamManager(nc);
  const start = await startSequence(jsm, stream, durable, startStreamSeq);
  await jsm.consumers.delete(stream, durable).catch(() => {});
  await jsm.consumers.add(stream, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: start,
    max_ack_pending: 4 * batch,
  });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: batch });
  const stop = () => messages.stop();
  signal?.addEventListener("abort", stop, { once: true });
  // Applies are pipelined (up to `maxApplies` requested before the oldest returned: the
  // database applies them in request order, and a batch of requests crosses to its engine
  // thread at once); each message is acked, in order, once its own apply returned. A failed
  // apply stops the consumer; the applies after it fail too (they no longer follow) and
  // nothing after it is acked.
  const inFlight = [];
  let failure;
  const settle = () => {
    while (inFlight.length && inFlight[0].result) {
      const { m, result } = inFlight.shift();
      m.ack();
      onApplied?.({ ...result, streamSeq: m.seq, message: m });
    }
  };
  const done = (async () => {
    try {
      for await (const m of messages) {
        if (failure) break;
        onMessage?.(m, { applying: inFlight.length, maxApplies });
        const entry = { m };
        inFlight.push(entry);
        entry.applied = db.applyChanges(m.data).then(
          (result) => {
            entry.result = result;
            settle();
          },
          (e) => {
            failure ??= e;
            messages.stop();
          },
        );
        while (inFlight.length >= maxApplies && !failure) await inFlight[0].applied;
      }
      await Promise.all(inFlight.map((e) => e.applied));
      if (failure) throw failure;
    } finally {
      signal?.removeEventListener("abort", stop);
      messages.stop();
    }
  })();
  return { done, startedAt: start };
}
