// The follower's side: a durable JetStream consumer of the change stream, each message applied to
// the follower database with `applyChanges` and acked only after the apply returned.
//
// Ordering: the database refuses a change that does not follow the last one it applied
// (CHANGE_GAP), so messages must arrive in stream order. A durable consumer redelivers messages
// that a dead consumer had received but not acked only after their ack wait, behind newer
// ones; so on every start the follower recreates its consumer at the stream sequence after the
// consumer's ack floor (the last message it acked in order). Messages applied but not acked
// before a crash come again and are skipped (applyChanges is idempotent by sequence:
// `{ applied: false }`). The same holds while it runs: messages delivered just before a NATS
// server restart and lost on the way come again only after their ack wait, so a change that does
// not follow makes the follower recreate its consumer after the last message it applied. A real
// gap is never skipped: CHANGE_GAP rejects `done`.
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
 * `{ done, startedAt }`: `done` resolves when stopped by `signal`, rejects on any error of the
 * database (CHANGE_GAP, closed) or of JetStream. `onApplied({ applied, lastSeq, streamSeq, message })`
 * is called after each message (`message`: the JetStream message, with its headers);
 * `onMessage(message, { applying, maxApplies })` before its apply (`applying`: applies in flight).
 *
 * A change that does not follow the last one applied is taken first for a delivery out of
 * order, not a hole in the stream (messages delivered just before the NATS server restarted,
 * lost on the way, are redelivered only after their ack wait, behind newer ones): the consumer
 * is recreated right after the last message applied. A change that still does not follow as
 * the first message of the recreated consumer (delivered in stream order) is a real hole:
 * CHANGE_GAP rejects `done`.
 */
export async function startFollower(db, nc, { name, durable, startStreamSeq, signal, onMessage, onApplied, batch = 512, maxApplies = 32 } = {}) {
  const { stream } = streamNames(name);
  const jsm = await jetstreamManager(nc);
  const startedAt = await startSequence(jsm, stream, durable, startStreamSeq);
  const session = { db, nc, jsm, stream, durable, signal, onMessage, onApplied, batch, maxApplies };
  let start = startedAt;
  let messages = await consumeFrom(session, start);
  const done = (async () => {
    let recreatedAt;
    for (;;) {
      const { failure, lastStreamSeq } = await applyAll(session, messages);
      if (!failure) return;
      if (failure.code !== "CHANGE_GAP" || signal?.aborted) throw failure;
      if (lastStreamSeq !== undefined) start = lastStreamSeq + 1;
      else if (recreatedAt === start) throw failure; // in order from `start`, and still a gap
      recreatedAt = start;
      messages = await consumeFrom(session, start);
    }
  })();
  return { done, startedAt };
}

/** (Re)creates the durable consumer at stream sequence `start` and starts consuming it. */
async function consumeFrom({ nc, jsm, stream, durable, batch }, start) {
  await jsm.consumers.delete(stream, durable).catch(() => {});
  await jsm.consumers.add(stream, {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: start,
    max_ack_pending: 4 * batch,
  });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  return consumer.consume({ max_messages: batch });
}

/**
 * Applies `messages` until they stop (by `signal`) or an apply fails. Resolves to `{ failure,
 * lastStreamSeq }`: the first failed apply, if any, and the stream sequence of the last
 * message applied and acked in order (undefined if none). JetStream errors reject.
 */
async function applyAll({ db, signal, onMessage, onApplied, maxApplies }, messages) {
  const stop = () => messages.stop();
  signal?.addEventListener("abort", stop, { once: true });
  // Applies are pipelined (up to `maxApplies` requested before the oldest returned: the
  // database applies them in request order, and a batch of requests crosses to its engine
  // thread at once); each message is acked, in order, once its own apply returned. A failed
  // apply stops the consumer; the applies after it fail too (they no longer follow) and
  // nothing after it is acked.
  const inFlight = [];
  let failure;
  let lastStreamSeq;
  const settle = () => {
    while (inFlight.length && inFlight[0].result) {
      const { m, result } = inFlight.shift();
      m.ack();
      lastStreamSeq = m.seq;
      onApplied?.({ ...result, streamSeq: m.seq, message: m });
    }
  };
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
    return { failure, lastStreamSeq };
  } finally {
    signal?.removeEventListener("abort", stop);
    messages.stop();
  }
}
