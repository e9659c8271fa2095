// The forwarder, in the leader's process: the database's change feed, published in order to the
// JetStream stream, each change under message id = its `seq`, many publishes in flight; the
// durable change cursor "nats" advances only over changes JetStream has confirmed.
//
// The stream stays the feed's exact order, with no change missing between two others, even
// when publishes in flight are lost (a connection drop loses change N while N+1, still in the
// client's buffer, is sent after the reconnect): each publish expects the stream's last message
// id to be the previous change's (`Nats-Expected-Last-Msg-Id`), so N+1 is refused rather than
// stored before N, and the forwarder starts a new pass after the last change JetStream holds.
//
// After a crash the forwarder restarts from its cursor, which is at or behind what the stream
// holds; it asks the stream for its last message and continues after it (a change the stream
// holds is not sent again). Should one be sent again all the same (two forwarders for a while),
// the duplicate window drops it (message id = `seq`, stream.mjs): none is lost or stored twice.
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/nats-core";
import { streamNames } from "./stream.mjs";

/** Headers of each message: its change's `seq` (JetStream's message id) and `lastSeq`. */
const MSG_ID = "Nats-Msg-Id";
const LAST_SEQ = "Shaledb-Last-Seq";

/** Options and their defaults. */
const defaults = {
  /** Name of the durable change cursor in the leader's database. */
  cursor: "nats",
  /** Most publishes awaiting JetStream's confirmation at once. */
  maxInFlight: 256,
  /**
   * How often the cursor is acked. An ack syncs the leader's log and writes its manifest: two
   * fsyncs on the engine's thread, which hold up the commits and feed reads behind them. The
   * cursor only decides which logs the leader keeps (after a crash the forwarder resumes after
   * the stream's last change, not at the cursor), so once a second costs nothing but a
   * second of changes kept.
   */
  ackEveryMs: 1000,
  /** Pause before the feed is read again after a failed publish (NATS down or slow). */
  retryMs: 250,
};

/**
 * Forwards `db`'s changes to the stream until `signal` aborts; resolves when it has stopped
 * (after a last cursor ack of what was confirmed). A failed publish does not end it: it waits
 * `retryMs` and starts a new pass after the last change the stream holds. Errors of the
 * database itself (closed, `CHANGES_TRUNCATED`), a change too large for the server
 * (`TooLarge`) and a stream ahead of the database (`StreamAhead`) reject.
 *
 * `onConfirmed({ seq, lastSeq, bytes, streamSeq, duplicate })`, if given, is called for each change JetStream
 * confirmed, in order. Returns `{ done, position() }`: `position()` is the last change
 * confirmed in order, `{ lastSeq, streamSeq }` (what bootstrap.mjs records with a checkpoint).
 * `onRetry(error)` is called for each publish failure before the retry. `annotate(change, h)`,
 * if given, may add NATS headers to `h`, the message's (the benchmark sends its commit time).
 */
export function startForwarder(db, nc, { name, signal, onConfirmed, onRetry, annotate, ...options } = {}) {
  const o = { ...defaults, ...options };
  const { stream, subject } = streamNames(name);
  const js = jetstream(nc);
  const state = { lastSeq: 0, streamSeq: 0, acked: 0 };

  // Where the pass starts: right after the last change the stream holds (each message carries
  // its change's last sequence number in header Shaledb-Last-Seq), which is normally at or after
  // the confirmed position (further after a crash: those are not sent again). Before it only if
  // the stream lost changes JetStream had confirmed (or was purged): then they are sent again,
  // if the leader still keeps them (else CHANGES_TRUNCATED: followers must bootstrap again).
  // Returns the message id the first publish expects last in the stream.
  async function startOfPass() {
    let last;
    try {
      const jsm = await jetstreamManager(nc);
      last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    } catch (e) {
      throw new PublishFailed(state.lastSeq + 1, e);
    }
    if (!last) return undefined;
    const lastId = last.header?.get(MSG_ID);
    const lastSeq = Number(last.header?.get(LAST_SEQ));
    if (!lastId || !(lastSeq > 0)) throw new Error(`the stream's last message (${last.seq}) is not a change of this forwarder`);
    const sequence = await db.sequence();
    if (lastSeq > sequence) throw new StreamAhead(lastSeq, sequence);
    state.lastSeq = lastSeq;
    state.streamSeq = last.seq;
    return lastId;
  }

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
      let expect = await startOfPass();
      const feed = db.changes({ since: state.lastSeq + 1, follow: true, signal: controller.signal });
      for await (const change of feed) {
        const max = nc.info?.max_payload;
        if (max && change.bytes.length > max) throw new TooLarge(change, max);
        const h = headers();
        h.set(LAST_SEQ, String(change.lastSeq));
        annotate?.(change, h);
        const publishOptions = { msgID: String(change.seq), headers: h, ...(expect && { expect: { lastMsgID: expect } }) };
        expect = String(change.seq);
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

/**
 * The stream holds a change the database does not have: it belongs to another database, or the
 * leader lost unsynced writes it had forwarded (a power loss; docs/SCALING.md). Followers hold
 * changes the leader will reuse sequence numbers for: they must bootstrap again.
 */
export class StreamAhead extends Error {
  constructor(lastSeq, sequence) {
    super(`the stream's last change ends at sequence ${lastSeq}, past this database's (${sequence}): the stream belongs to another database or the leader lost forwarded writes`);
    this.name = "StreamAhead";
  }
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
