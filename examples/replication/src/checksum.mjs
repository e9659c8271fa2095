// A checksum of a database's contents, to byte-compare a follower with its leader: SHA-256 over
// every listed keyspace's entries in key order (each keyspace's name, then each key and value,
// every field length-prefixed so different contents cannot run together into the same bytes).
// WebCrypto only, so the same function runs in Node and in a browser follower.

/** The keyspaces the example writes (workload.mjs); `""` is the database's default keyspace. */
export const exampleKeyspaces = ["", "accounts", "events"];

/**
 * Hex SHA-256 of the entries of `keyspaces` (names; `""` = the default one) of `db`, and their
 * count. `db` must be opened with binary keys and values (`openDatabase` in workload.mjs).
 */
export async function checksum(db, keyspaces = exampleKeyspaces) {
  const parts = [];
  const field = (bytes) => {
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, bytes.length);
    parts.push(len, bytes);
  };
  let entries = 0;
  for (const name of [...keyspaces].sort()) {
    field(new TextEncoder().encode(name));
    const store = name === "" ? db : await db.keyspace(name, { keyEncoding: "binary", valueEncoding: "binary" });
    for await (const [key, value] of store.iterator()) {
      field(key);
      field(value);
      entries += 1;
    }
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return { sha256: [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""), entries };
}
