/**
 * Each keyspace's key and value encodings, recorded in the database (the keyspace's metadata,
 * kept in the manifest like a schema: FORMAT.md, "Keyspace metadata"), so that opening a
 * keyspace with other encodings is a typed error (`ENCODING_MISMATCH`), never values misread.
 *
 * The rules, the same for the synchronous API, the Promise API, Node and browsers (the Promise
 * API's server runs this on its engine):
 * - `"binary"` is a view of the bytes as stored: it is never recorded and always allowed, on any
 *   keyspace.
 * - Any other encoding must equal the one recorded for that part (keys or values), if any: else
 *   the open is `ENCODING_MISMATCH` naming the keyspace, the recorded and the requested
 *   encodings, and nothing changes.
 * - An encoding not recorded yet is recorded while the keyspace holds no key. A keyspace that
 *   already holds keys with nothing recorded (written before encodings were recorded, or only
 *   through `"binary"`) stays unrecorded: what its bytes are cannot be known.
 * - A read-only open and a follower record nothing (they still check). Recording never fails an
 *   open: if it cannot be written, the keyspace stays unrecorded.
 * - Metadata that is not a JSON object is another program's: nothing is checked or recorded.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import type { DatabaseHandle } from "./database-handle.js";
import { wasm } from "./instance.js";

/** The encoding of raw bytes, which is never recorded and reads any keyspace. */
const RAW = "binary";

/** The fields of the metadata record (a UTF-8 JSON object; other fields are kept as they are). */
const FIELDS = { keys: "keyEncoding", values: "valueEncoding" } as const;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The metadata as a JSON object, or `undefined` if it is absent or not one (another program's). */
function parse(bytes: Uint8Array | undefined): Record<string, unknown> | undefined {
  if (bytes === undefined) {
    return {};
  }
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks the encodings `keys` and `values` (their names) requested for keyspace number
 * `keyspace` (named `name`) of `db` against those recorded, and records those not recorded yet
 * if `record` (see the module notes). Throws `ENCODING_MISMATCH` on a mismatch.
 */
export function checkKeyspaceEncodings(
  db: DatabaseHandle,
  keyspace: number,
  name: string,
  keys: string,
  values: string,
  record: boolean,
): void {
  if (keys === RAW && values === RAW) {
    return;
  }
  const stored = parse(db.call(() => wasm.dbKeyspaceMetadata(db.id, keyspace)));
  if (stored === undefined) {
    return;
  }
  const requested = { keys, values };
  const missing: (keyof typeof FIELDS)[] = [];
  for (const part of ["keys", "values"] as const) {
    const want = requested[part];
    if (want === RAW) {
      continue;
    }
    const have = stored[FIELDS[part]];
    if (have === undefined) {
      missing.push(part);
    } else if (have !== want) {
      throw mismatch(name, stored, requested);
    }
  }
  if (!record || missing.length === 0) {
    return;
  }
  try {
    if (!db.call(() => wasm.dbKeyspaceIsEmpty(db.id, keyspace))) {
      return;
    }
    const next = { ...stored };
    for (const part of missing) {
      next[FIELDS[part]] = requested[part];
    }
    const bytes = encoder.encode(JSON.stringify(next));
    db.write(() => wasm.dbSetKeyspaceMetadata(db.id, keyspace, bytes));
  } catch (error) {
    // Recording is a safeguard, not part of the open: a failure leaves the keyspace unrecorded
    // (a database that cannot write reports it at its next write).
    if (!(error instanceof ShaleError)) {
      throw error;
    }
  }
}

/** The `ENCODING_MISMATCH` error of opening keyspace `name` with `requested` over `stored`. */
function mismatch(name: string, stored: Record<string, unknown>, requested: { keys: string; values: string }): ShaleError {
  const shown = (part: keyof typeof FIELDS): string => {
    const have = stored[FIELDS[part]];
    return typeof have === "string" ? JSON.stringify(have) : "none";
  };
  const which = name === "default" ? "the default keyspace (the database's open() encodings)" : `keyspace ${JSON.stringify(name)}`;
  return new ShaleError(
    "ENCODING_MISMATCH",
    `shaledb: ${which} was written with keyEncoding ${shown("keys")} and valueEncoding ${shown("values")}, ` +
      `but is opened with keyEncoding ${JSON.stringify(requested.keys)} and valueEncoding ${JSON.stringify(requested.values)}: ` +
      `open it with the recorded encodings (or "binary" to read the stored bytes)`,
  );
}
