/**
 * The byte contract between the package and the WebAssembly bindings, written once on this side:
 * every constant of the layouts that cross (docs/FORMAT.md, "JavaScript ↔ WebAssembly").
 * `crates/wasm/src/wire.rs` is the other side; `test/wire-contract.test.ts` checks that both hold
 * the same names and values (through the bindings' `wireConstants()`).
 *
 * Common to every packed layout: integers little-endian; a *field* is a `u32` length then that
 * many bytes; ids, offsets, sequence numbers and times cross as `f64`.
 *
 * @module
 */

/** Packed batch, per operation: `op u8, number u32` (keyspace, queue or topic handle), then fields. Put: key, value. */
export const OP_PUT = 0;
/** Delete: key. */
export const OP_DELETE = 1;
/** Range deletion: start, end. */
export const OP_DELETE_RANGE = 2;
/** Queue push (queue handle): value, push options ({@link PUSH_OPTIONS_LEN} bytes). */
export const OP_PUSH = 3;
/** Queue ack (queue handle): the lease ({@link LEASE_LEN} bytes). */
export const OP_ACK = 4;
/** Topic append (topic handle): one packed record (`topic-records.ts`). */
export const OP_APPEND = 5;
/** Topic offset commit (topic handle): group name (UTF-8), offset `u64`. */
export const OP_COMMIT_OFFSET = 6;
/**
 * The batch's meta for the change feed (number 0): the meta. Always the first operation (a
 * server commits a write that starts with it alone, never merged with others).
 */
export const OP_META = 7;
/** Push options: delay and ttl in ms, `f64` each, negative for none. */
export const PUSH_OPTIONS_LEN = 16;
/** A lease: the item id `u64`, the delivery `u32`. */
export const LEASE_LEN = 12;

/** `queueRead` modes: a take. */
export const READ_TAKE = 0;
/** A reservation (leased). */
export const READ_RESERVE = 1;
/** A look, nothing changed. */
export const READ_PEEK = 2;
export type ReadMode = typeof READ_TAKE | typeof READ_RESERVE | typeof READ_PEEK;

/**
 * Queue items read back: `id f64, pushedAt f64, leaseUntil f64 (-1: none), deliveries u32,
 * value length u32` (this many bytes), then the value.
 */
export const ITEM_HEADER_LEN = 32;

/** `iterNext` flags: include keys. */
export const ITER_WITH_KEYS = 1;
/** Include values. */
export const ITER_WITH_VALUES = 2;

/** A field length that says "absent": a topic record's key, a change's meta. */
export const NO_FIELD = 0xffff_ffff;

/** Change ops read back: `kind u8`, keyspace name, key (start), and for a put or a range deletion the value (end). A put. */
export const CHANGE_PUT = 0;
/** A deletion. */
export const CHANGE_DELETE = 1;
/** A range deletion. */
export const CHANGE_DELETE_RANGE = 2;
/** Bytes of a change read back before its meta: `seq, lastSeq, time` (`f64` each). */
export const CHANGE_HEAD_LEN = 24;

/** Where a topic read starts (`topicRead`, `topicResolve`: kind, value, group): at offset `value`. */
export const FROM_OFFSET = 0;
/** At the first record held. */
export const FROM_EARLIEST = 1;
/** At the next record appended. */
export const FROM_LATEST = 2;
/** At the first record appended at or after time `value` (ms since the epoch). */
export const FROM_TIME = 3;
/** At the committed offset of consumer group `group`. */
export const FROM_GROUP = 4;
