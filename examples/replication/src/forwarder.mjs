// The forwarder, in the leader's process: the database's change feed, published in order to the
// JetStream stream, each change under message id = its `seq`, many publishes in flight; the
// durable change cursor "nats" advances only over changes JetStream has confirmed. After a crash
// the forwarder starts again from the cursor: changes published but not yet acked are sent again
// and the stream's duplicate window drops them (stream.mjs), so none is lost or stored twice.
import { jetstream } from "@nats-io/jetstream";
import { streamNames } from "./stream.mjs";

/** Options and their defaults. */
const defaults = {
  /** Name of the durable change cursor in the leader's database. */
  cursor: "nats",
  /** Most publishes awaiting JetStream's confirmation at once. */
  maxInFlight: 256,
  /** How often the cursor is acked (one ack is one manifest write and fsync). */
  ackEveryMs: 50,
  /** Pause before the feed is read again after a failed publish (NATS down or slow). */
  retryMs: 250,
};

/**
 * Forwards `db`'s changes to the stream until `signal` aborts; resolves when it has stopped
 * (after a last cursor ack of what was confirmed). A failed publish does not end it: it waits
 * `retryMs` and reads the feed again after the last confirmed change (re-sends are dropped as
 * duplicates). Errors of the database itself (closed, `CHANGES_TRUNCATED`) and a change too
 * large for the server (`TooLarge`) reject.
 *
 * `onConfirmed({ seq, lastSeq, bytes, streamSeq, duplicate })`, if given, is called for each change JetStream
 * confirmed, in order. Returns `{ done, position() }`: `position()` is the last change
 * confirmed in order, `{ lastSeq, streamSeq }` (what bootstrap.mjs records with a checkpoint).
 * `onRetry(error)` is called for each publish failure before the retry. `headers(change)`, if
 * given, returns NATS headers to publish the change with (the benchmark sends its commit time).
 */
export function startForwarder(db, nc, { name, signal, onConfirmed, onRetry, headers, ...options } = {}) {
  const o = { ...defaults, ...options };
  const { subject } = streamNames(name);
  const js = jetstream(nc);
  const state = { lastSeq: 0, streamSeq: 0, acked: 0 };

  // Acks the cursor up to the last confirmed change; one ack at a time.
  let acking = Promise.resolve();
  const ackCursor = () =>
    (acking = acking.catch(() => {}).then(async () => {
      const seq = state.lastSeq;
      if (seq > state.acked) {
        await db.ackChanges(o.cursor, seq);
        state.acked = seq;
      }
    }));

  // One pass over the feed from the last confirmed change; rejects with a PublishFailed when
  // JetStream did not confirm a publish.
  async function pass(controller) {
    /** Publishes in flight, oldest first: { change, ack: Promise<PubAck>, pubAck? }. */
    const inFlight = [];
    // Moves the confirmed position over the oldest publishes JetStream has confirmed.
    const advance = () => {
      while (inFlight.length && inFlight[0].pubAck) {
        const { change, pubAck } = inFlight.shift();
        state.lastSeq = change.lastSeq;
        state.streamSeq = pubAck.seq;
        onConfirmed?.({ seq: change.seq, lastSeq: change.lastSeq, bytes: change.bytes.length, streamSeq: pubAck.seq, duplicate: pubAck.duplicate });
      }
    };
    const waitOldest = async () => {
      try {
        await inFlight[0].ack;
      } catch (e) {
        throw new PublishFailed(inFlight[0].change.seq, e);
      }
      advance();
    };
    try {
      const feed = db.changes({ since: state.lastSeq + 1, follow: true, signal: controller.signal });
      for await (const change of feed) {
        const max = nc.info?.max_payload;
        if (max && change.bytes.length > max) throw new TooLarge(change, max);
        const publishOptions = { msgID: String(change.seq), ...(headers && { headers: headers(change) }) };
        const entry = { change, ack: js.publish(subject, change.bytes, publishOptions) };
        entry.ack.then(
          (pubAck) => {
            entry.pubAck = pubAck;
            advance(); // also while the feed waits for new commits
          },
          () => controller.abort(), // stop reading; waitOldest reports the failure
        );
        inFlight.push(entry);
        while (inFlight.length >= o.maxInFlight) await waitOldest();
      }
    } catch (e) {
      // The feed ends (or throws) when the pass is aborted: by a failed publish or by `signal`.
      if (!controller.signal.aborted) throw e;
    }
    try {
      // Whatever ended the pass, the publishes sent count once confirmed.
      while (inFlight.length) await waitOldest();
    } finally {
      inFlight.length = 0;
    }
  }

  const done = (async () => {
    const cursor = await db.changeCursor(o.cursor);
    state.lastSeq = state.acked = cursor ?? 0;
    // A failed periodic ack is not fatal: the next one retries; the last one below reports.
    const timer = setInterval(() => ackCursor().catch(() => {}), o.ackEveryMs);
    try {
      while (!signal?.aborted) {
        // The pass's own signal, aborted by `signal` and by a failed publish.
        const controller = new AbortController();
        const onAbort = () => controller.abort();
        signal?.addEventListener("abort", onAbort, { once: true });
        try {
          await pass(controller);
        } catch (e) {
          if (signal?.aborted) break;
          if (!(e instanceof PublishFailed)) throw e;
          onRetry?.(e);
          await new Promise((r) => setTimeout(r, o.retryMs));
        } finally {
          signal?.removeEventListener("abort", onAbort);
        }
      }
    } finally {
      clearInterval(timer);
      if (!db.closed) await ackCursor().catch(() => ackCursor());
    }
  })();
  return { done, position: () => ({ lastSeq: state.lastSeq, streamSeq: state.streamSeq }) };
}

/** A change larger than the server's `max_payload`: it can never be published. */
export class TooLarge extends Error {
  constructor(change, max) {
    super(`change ${change.seq} is ${change.bytes.length} bytes, more than the NATS server's max_payload (${max}): raise max_payload in its configuration`);
    this.name = "TooLarge";
  }
}

/** JetStream did not confirm the publish of change `seq` (timeout, no stream, connection lost). */
export class PublishFailed extends Error {
  constructor(seq, cause) {
    super(`JetStream did not confirm change ${seq}: ${cause?.message ?? cause}`, { cause });
    this.name = "PublishFailed";
  }
}
