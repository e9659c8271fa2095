// A checksum of a database's contents, to byte-compare a follower with its leader: SHA-256 over
// every listed keyspace's entries in key order (each keyspace's name, then each key and value,
// every field length-prefixed so different contents cannot run together into the same bytes).
import { createHash } from "node:crypto";

/** The keyspaces the example writes (workload.mjs); `""` is the database's default keyspace. */
export const exampleKeyspaces = ["", "accounts", "events"];

/**
 * Hex SHA-256 of the entries of `keyspaces` (names; `""` = the default one) of `db`, and their
 * count. `db` must be opened with binary keys and values (`openDatabase` in workload.mjs).
 */
export async function checksum(db, keyspaces = exampleKeyspaces) {
  const hash = createHash("sha256");
  const field = (bytes) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(bytes.length);
    hash.update(len);
    hash.update(bytes);
  };
  let entries = 0;
  for (const name of [...keyspaces].sort()) {
    field(Buffer.from(name));
    const store = name === "" ? db : await db.keyspace(name, { keyEncoding: "binary", valueEncoding: "binary" });
    for await (const [key, value] of store.iterator()) {
      field(key);
      field(value);
      entries += 1;
    }
  }
  return { sha256: hash.digest("hex"), entries };
}
