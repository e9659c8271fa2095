// The JetStream stream that carries a leader's change feed, and its object store bucket of
// checkpoints: their names and how they are created (idempotently, by the leader and by
// followers alike, whoever comes first).
import { jetstreamManager } from "@nats-io/jetstream";

/** Names of one replicated database's stream, subject and checkpoint bucket. */
export function streamNames(name = "SHALEDB") {
  return { stream: `${name}_CHANGES`, subject: `${name.toLowerCase()}.changes`, bucket: `${name}_CHECKPOINTS` };
}

/**
 * Creates the change stream if missing (or updates it to this configuration): file storage, one
 * subject, and a duplicate window of `duplicateWindowMs` (default 2 minutes). The window is what
 * makes re-sends after a leader crash harmless: a publish whose message id (the change's `seq`)
 * the stream saw within the window is acknowledged as a duplicate and not stored again. A leader
 * down for longer than the window re-sends changes the stream stores twice: followers skip those
 * (applyChanges is idempotent by sequence), the stream just holds them twice.
 */
export async function ensureStream(nc, { name, duplicateWindowMs = 120_000 } = {}) {
  const { stream, subject } = streamNames(name);
  const jsm = await jetstreamManager(nc);
  const config = { name: stream, subjects: [subject], storage: "file", duplicate_window: duplicateWindowMs * 1_000_000 }; // ns
  try {
    await jsm.streams.add(config);
  } catch (e) {
    // Exists with another configuration (for example another duplicate window): update it.
    if (!/already in use|exists/i.test(String(e?.message))) throw e;
    await jsm.streams.update(stream, config);
  }
  return jsm;
}
