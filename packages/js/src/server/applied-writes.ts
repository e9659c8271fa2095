/**
 * Exactly-once writes across a takeover. A page served by another tab's owner may lose the
 * replies of requests that owner carried out (its tab went away right after committing); the
 * page then sends them again to the next owner. Repeating a write whose first run was applied
 * could overwrite a later acknowledged write of another tab, so the owner records, in the same
 * atomic batch as every write of a served page, the number of that page's last applied write
 * (request numbers of a page only grow, and an owner carries out one page's requests in order).
 * A write sent again (`resent`) whose number the record covers is answered "done" and not run.
 *
 * A write rejected before it was committed (an argument error: nothing was written) has a
 * number below a later applied one: the record lists such numbers, for as long as the page may
 * still send them again (from the page's `settled` mark on), so that they run again instead.
 *
 * The records live in keyspace {@link APPLIED_KEYSPACE}, whose name no page can open; a record
 * goes when its page goes (layout in docs/FORMAT.md, "Applied-write records").
 *
 * @module
 */
import { PackedOps } from "../encoding/packed-ops.js";
import { OP_PUT } from "../encoding/wire.js";
import type { StoreImpl } from "../engine/store.js";
import { reservedKeyspace, type SyncDatabaseImpl } from "../engine/sync-database.js";

/** The keyspace of the applied-write records: key = client id (UTF-8), value = a record. */
export const APPLIED_KEYSPACE = "\u0000shaledb:applied-writes";
/** Version of the record layout. */
const RECORD_VERSION = 1;
/** Bytes before the rejected numbers: version u8, last applied u64, count u32. */
const RECORD_HEAD = 13;

/** A page's record: its last applied write, and writes numbered below it that were rejected. */
export interface AppliedRecord {
  applied: number;
  rejected: readonly number[];
}

/** The record's bytes: version `1` u8, `applied` u64 LE, count u32 LE, `rejected` u64 LE each. */
export function encodeAppliedRecord(record: AppliedRecord): Uint8Array {
  const bytes = new Uint8Array(RECORD_HEAD + 8 * record.rejected.length);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, RECORD_VERSION);
  view.setBigUint64(1, BigInt(record.applied), true);
  view.setUint32(9, record.rejected.length, true);
  record.rejected.forEach((id, i) => view.setBigUint64(RECORD_HEAD + 8 * i, BigInt(id), true));
  return bytes;
}

/** The record in `bytes`; `undefined` if they are not one this version knows (treated as none). */
export function decodeAppliedRecord(bytes: Uint8Array): AppliedRecord | undefined {
  if (bytes.length < RECORD_HEAD || bytes[0] !== RECORD_VERSION) {
    return undefined;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(9, true);
  if (bytes.length !== RECORD_HEAD + 8 * count) {
    return undefined;
  }
  const rejected: number[] = [];
  for (let i = 0; i < count; i++) {
    rejected.push(Number(view.getBigUint64(RECORD_HEAD + 8 * i, true)));
  }
  return { applied: Number(view.getBigUint64(1, true)), rejected };
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** The owner's side: writing, reading and removing the records. */
export class AppliedWrites {
  readonly #db: SyncDatabaseImpl;
  #store: StoreImpl | undefined;
  /** Per served page: its rejected writes not yet known to be answered. */
  readonly #rejected = new Map<string, number[]>();

  constructor(db: SyncDatabaseImpl) {
    this.#db = db;
  }

  /** Whether the records' keyspace was opened by this owner. */
  get opened(): boolean {
    return this.#store !== undefined;
  }

  /** The records' keyspace (opened, and created if missing, on first use). */
  #keyspace(): StoreImpl {
    this.#store ??= reservedKeyspace(this.#db, APPLIED_KEYSPACE);
    return this.#store;
  }

  /**
   * The packed operation (`../encoding/packed-ops.ts`, engine keyspace numbers) that records write `id` of
   * page `client` as applied; to commit in the same batch as that write.
   */
  recordOp(client: string, id: number): Uint8Array {
    const store = this.#keyspace();
    const ops = new PackedOps();
    const record = encodeAppliedRecord({ applied: id, rejected: this.#rejected.get(client) ?? [] });
    ops.add(OP_PUT, store.keyspaceId, utf8.encode(client), record);
    return ops.bytes().slice();
  }

  /** Notes that write `id` of page `client` was rejected before anything was written. */
  rejected(client: string, id: number): void {
    const list = this.#rejected.get(client);
    if (list === undefined) {
      this.#rejected.set(client, [id]);
    } else {
      list.push(id);
    }
  }

  /** Page `client` has the answers of every request numbered below `settled`. */
  settled(client: string, settled: number): void {
    const list = this.#rejected.get(client);
    if (list !== undefined) {
      const kept = list.filter((id) => id >= settled);
      if (kept.length === 0) {
        this.#rejected.delete(client);
      } else {
        this.#rejected.set(client, kept);
      }
    }
  }

  /** Whether write `id` of page `client`, sent again, was applied by an owner already. */
  wasApplied(client: string, id: number): boolean {
    const value = this.#keyspace().get(utf8.encode(client)) as Uint8Array | undefined;
    const record = value === undefined ? undefined : decodeAppliedRecord(value);
    return record !== undefined && id <= record.applied && !record.rejected.includes(id);
  }

  /**
   * Removes the record of page `client`, which is gone (it will send nothing again). Only if
   * this owner uses the records (else a later {@link sweep} removes it).
   */
  forget(client: string): void {
    this.#rejected.delete(client);
    if (this.#store !== undefined) {
      this.#store.delete(utf8.encode(client));
    }
  }

  /** Removes the records of every page for which `alive` is false. */
  sweep(alive: (client: string) => boolean): void {
    const store = this.#keyspace();
    const gone: Uint8Array[] = [];
    for (const key of store.keys() as Iterable<Uint8Array>) {
      if (!alive(utf8Decoder.decode(key))) {
        gone.push(key);
      }
    }
    for (const key of gone) {
      store.delete(key);
    }
  }
}
