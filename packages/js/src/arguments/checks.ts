/**
 * The checks of every public argument, in one place: Node's synchronous API, its Promise API and
 * the browser page call these, so a bad argument is the same `INVALID_ARGUMENT` everywhere, and
 * never a `TypeError` or a silent default. Each check returns the argument narrowed to what it
 * accepts, or throws `INVALID_ARGUMENT` naming what was wrong.
 *
 * Rules shared by every method:
 * - An options argument is an object or absent (`undefined`); `null` is INVALID_ARGUMENT, and so
 *   is a name that is not one of the method's options (a typo, `delay` for `delayMs`, would
 *   otherwise be a silent default).
 * - A keyspace argument is absent (the default keyspace) or a keyspace object of the same
 *   database; the identity check belongs to each environment (`storeOf`).
 * - Strings that become bytes (utf8 keys and values, keyspace names, paths) must be well-formed
 *   UTF-16: a lone surrogate would be stored as U+FFFD, so `"\uD800"` and `"\uDC00"` would be
 *   one key, and a value would not read back as written.
 *
 * @module
 */
import { invalidArgument } from "../errors.js";
import type { KeyEncoding, ValueEncoding, WriteOptions } from "../types.js";

/** A short description of a value's type for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Uint8Array) return "a Uint8Array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return typeof value;
}

/**
 * `options` as a record: absent is `{}`; anything but an object is INVALID_ARGUMENT, and so is
 * an own property not named in `known` (the method's options), naming it and the options there
 * are. `what` names the argument in messages.
 */
export function optionsObject(
  options: unknown,
  known: readonly string[],
  what = "options",
): Readonly<Record<string, unknown>> {
  if (options === undefined) {
    return {};
  }
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw invalidArgument(`${what} must be an object, got ${describe(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) {
      const which = known.length === 0 ? "none are taken" : `they are ${known.join(", ")}`;
      throw invalidArgument(`unknown option ${JSON.stringify(name)} in ${what} (${which})`);
    }
  }
  return options as Record<string, unknown>;
}

/** The names of the options of each method, for {@link optionsObject}. */
export const OPTION_NAMES = {
  write: ["sync"],
  batch: ["sync", "meta"],
  read: ["snapshot"],
  iterator: ["gt", "gte", "lt", "lte", "prefix", "snapshot", "reverse", "limit"],
  transact: ["retries", "sync"],
  compactRange: ["start", "end"],
  encodings: ["keyEncoding", "valueEncoding"],
} as const;

/** `options[name]`, of type `type` (a finite number for `"number"`), or `fallback` when absent. */
export function option<T>(options: object, name: string, type: "boolean" | "number", fallback: T): T {
  const value = (options as Record<string, unknown>)[name];
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== type || (type === "number" && !Number.isFinite(value))) {
    throw invalidArgument(`options.${name} must be a ${type}, got ${describe(value)}`);
  }
  return value as T;
}

// ---------------------------------------------------------------------------------------------
// Strings and bytes

/** Whether `text` has no lone surrogate (`String.prototype.isWellFormed` where the engine has it). */
export const isWellFormed: (text: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (text) => (text as string & { isWellFormed(): boolean }).isWellFormed()
    : (text) => !/[\uD800-\uDFFF]/u.test(text);

/**
 * `value` as a string that UTF-8 can hold: a non-string, or a string with a lone surrogate (not
 * well-formed UTF-16), is INVALID_ARGUMENT naming `what`. `encoding` names the encoding in the
 * message, if any.
 */
export function wellFormedString(value: unknown, what: string, encoding?: string): string {
  const used = encoding === undefined ? "" : ` (encoding "${encoding}")`;
  if (typeof value !== "string") {
    throw invalidArgument(`${what} must be a string${used}, got ${describe(value)}`);
  }
  if (!isWellFormed(value)) {
    throw invalidArgument(
      `${what} is not well-formed UTF-16 (it has a lone surrogate, which UTF-8 cannot hold)${used}`,
    );
  }
  return value;
}

/** `value` as bytes: anything but a `Uint8Array` (a `Buffer` is one) is INVALID_ARGUMENT. */
export function bytesArgument(value: unknown, what: string, encoding = "binary"): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw invalidArgument(`${what} must be a Uint8Array (encoding "${encoding}"), got ${describe(value)}`);
  }
  return value;
}

/** A directory (Node) or database name: a non-empty, well-formed string. */
export function pathArgument(value: unknown, what: string): string {
  if (value === "") {
    throw invalidArgument(`${what} must be a non-empty string`);
  }
  return wellFormedString(value, what);
}

// ---------------------------------------------------------------------------------------------
// Encodings and keyspaces

/** The encodings named by `options` (defaults `"utf8"`); unknown names, `null` included, are INVALID_ARGUMENT. */
export function encodingNames(options: Readonly<Record<string, unknown>>): {
  keyEncoding: KeyEncoding;
  valueEncoding: ValueEncoding;
} {
  const { keyEncoding = "utf8", valueEncoding = "utf8" } = options;
  if (keyEncoding !== "utf8" && keyEncoding !== "binary") {
    throw invalidArgument(`unknown keyEncoding ${describe(keyEncoding)} (use "utf8" or "binary")`);
  }
  if (valueEncoding !== "utf8" && valueEncoding !== "binary" && valueEncoding !== "json") {
    throw invalidArgument(`unknown valueEncoding ${describe(valueEncoding)} (use "utf8", "binary" or "json")`);
  }
  return { keyEncoding, valueEncoding };
}

/**
 * A keyspace name: a non-empty, well-formed string other than `"default"` (the database itself),
 * not starting with {@link RESERVED_KEYSPACE_PREFIX}.
 */
export function keyspaceName(name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw invalidArgument(`a keyspace name must be a non-empty string, got ${describe(name)}`);
  }
  if (name === "default") {
    throw invalidArgument('the keyspace name "default" is reserved: use the database itself');
  }
  if (name.startsWith(RESERVED_KEYSPACE_PREFIX)) {
    throw invalidArgument("keyspace names starting with a NUL character are reserved for ShaleDB");
  }
  return wellFormedString(name, "a keyspace name");
}

/**
 * Keyspace names starting with this character are ShaleDB's own (the browser's applied-write
 * records; the core refuses them to applications too): {@link keyspaceName} refuses them.
 */
export const RESERVED_KEYSPACE_PREFIX = "\u0000";

/**
 * A keyspace argument: `undefined` (the default keyspace) or an object, which the caller then
 * checks is a keyspace of its database. `null`, a name or anything else is INVALID_ARGUMENT.
 */
export function keyspaceArgument(keyspace: unknown): object | undefined {
  if (keyspace === undefined) {
    return undefined;
  }
  if (typeof keyspace !== "object" || keyspace === null) {
    throw invalidArgument(
      `the keyspace must be a keyspace object of this database (from db.keyspace(name)), got ${describe(keyspace)}`,
    );
  }
  return keyspace;
}

// ---------------------------------------------------------------------------------------------
// Options of reads, writes and iteration

/** `sync` of write options (`{ sync }` only), checked: an object or absent, `sync` a boolean or absent. */
export function syncOption(options: WriteOptions | undefined): boolean {
  return syncOf(optionsObject(options, OPTION_NAMES.write));
}

/** `sync` of a checked options record: a boolean or absent. */
export function syncOf(options: Readonly<Record<string, unknown>>): boolean {
  const sync = options["sync"];
  if (sync !== undefined && typeof sync !== "boolean") {
    throw invalidArgument(`options.sync must be a boolean, got ${describe(sync)}`);
  }
  return sync === true;
}

/** The `snapshot` of read options (the caller checks it is one of its database's), or `undefined`. */
export function readSnapshot(options: unknown): unknown {
  return optionsObject(options, OPTION_NAMES.read)["snapshot"];
}

/** Iterator options as a record (absent: `{}`), with `limit` and `reverse` checked. */
export function iteratorOptions(options: unknown): Readonly<Record<string, unknown>> {
  const o = optionsObject(options, OPTION_NAMES.iterator);
  checkLimit(o["limit"]);
  checkReverse(o["reverse"]);
  return o;
}

/** `options.limit` checked: `Infinity` when absent or negative (level's convention: none). */
export function checkLimit(limit: unknown): number {
  if (limit === undefined || limit === Infinity || (typeof limit === "number" && limit < 0)) {
    return Infinity;
  }
  if (typeof limit !== "number" || !Number.isInteger(limit)) {
    throw invalidArgument(`options.limit must be an integer, got ${describe(limit)}`);
  }
  return limit;
}

/** `options.reverse` checked: a boolean or absent. */
export function checkReverse(reverse: unknown): boolean {
  if (reverse !== undefined && typeof reverse !== "boolean") {
    throw invalidArgument(`options.reverse must be a boolean, got ${describe(reverse)}`);
  }
  return reverse === true;
}

// ---------------------------------------------------------------------------------------------
// Arguments of single methods

/**
 * The range of `deleteRange`: an object; its `gte` and `lt` are checked as keys by the codec. An
 * empty or inverted range (`gte >= lt`, see `isEmptyRange` in `../encoding/bounds.ts`) deletes nothing.
 */
export function deleteRangeArgument(range: unknown): { gte: unknown; lt: unknown } {
  if (typeof range !== "object" || range === null) {
    throw invalidArgument(`deleteRange needs { gte, lt }, got ${describe(range)}`);
  }
  const { gte, lt } = range as Record<string, unknown>;
  return { gte, lt };
}

/** The range of `compact`: an object or absent; absent bounds mean unbounded. */
export function compactRange(range: unknown): { start: unknown; end: unknown } {
  const { start, end } = optionsObject(range, OPTION_NAMES.compactRange, "the compaction range");
  return { start, end };
}

/** The keys of `getMany`: an array. */
export function keysArray(keys: unknown): readonly unknown[] {
  if (!Array.isArray(keys)) {
    throw invalidArgument(`getMany needs an array of keys, got ${describe(keys)}`);
  }
  return keys;
}

/** The budget of `maintain`: a positive number of bytes (`Infinity`: all pending work). */
export function maintainBudget(budget: unknown): number {
  if (typeof budget !== "number" || !(budget > 0)) {
    throw invalidArgument(`maintain needs a positive number of bytes, got ${describe(budget)}`);
  }
  return budget;
}

/** The body and options of `transact`, checked before anything runs. */
export interface TransactArguments<B> {
  body: B;
  /** How many times a `CONFLICT` is retried (default 10). */
  retries: number;
  /** The options of each commit. */
  write: WriteOptions;
}

/**
 * The arguments of `transact(body, options)`: `body` a function; `options` an object or absent,
 * with `retries` a non-negative integer (default 10) and `sync` a boolean or absent.
 */
export function transactArguments<B>(body: B, options: unknown): TransactArguments<B> {
  if (typeof body !== "function") {
    throw invalidArgument(`transact needs a function (the transaction's body), got ${describe(body)}`);
  }
  const o = optionsObject(options, OPTION_NAMES.transact);
  const retries = o["retries"] === undefined ? 10 : o["retries"];
  if (typeof retries !== "number" || !Number.isInteger(retries) || retries < 0) {
    throw invalidArgument(`options.retries must be a non-negative integer, got ${describe(retries)}`);
  }
  return { body, retries, write: { sync: syncOf(o) } };
}

/** One checked operation of an array batch. */
export interface BatchOperationArgument {
  /** Queue operations (`push`, `ack`) are checked further by `queue-options.ts`. */
  type: "put" | "delete" | "push" | "ack" | "append" | "commitOffset";
  key: unknown;
  value: unknown;
  /** `undefined`: the database's default keyspace; else an object for `storeOf` to resolve. */
  keyspace: object | undefined;
  /** The operation object itself. */
  op: Readonly<Record<string, unknown>>;
  /** Its index in the batch (for messages). */
  index: number;
}

/** The properties of each type of batch operation (others are INVALID_ARGUMENT, as options are). */
const OPERATION_FIELDS: Readonly<Record<BatchOperationArgument["type"], readonly string[]>> = {
  put: ["type", "key", "value", "keyspace"],
  delete: ["type", "key", "keyspace"],
  push: ["type", "queue", "value", "delayMs", "ttlMs"],
  ack: ["type", "queue", "lease"],
  append: ["type", "topic", "value", "key", "headers"],
  commitOffset: ["type", "topic", "group", "offset"],
};

/**
 * The operations of an array batch (`db.batch([...])`): an array of `put`, `delete`, `push`,
 * `ack`, `append` and `commitOffset` objects, each with only its type's properties.
 */
export function batchOperations(operations: unknown): BatchOperationArgument[] {
  if (!Array.isArray(operations)) {
    throw invalidArgument(`batch operations must be an array, got ${describe(operations)}`);
  }
  return operations.map((op: unknown, index) => {
    if (typeof op !== "object" || op === null) {
      throw invalidArgument(`batch operation ${index} must be an object, got ${describe(op)}`);
    }
    const record = op as Record<string, unknown>;
    const { type, key, value, keyspace } = record;
    if (typeof type !== "string" || !Object.hasOwn(OPERATION_FIELDS, type)) {
      throw invalidArgument(
        `batch operation ${index}: type must be "put", "delete", "push", "ack", "append" or "commitOffset", got ${describe(type)}`,
      );
    }
    const checked = type as BatchOperationArgument["type"];
    optionsObject(record, OPERATION_FIELDS[checked], `batch operation ${index} (${checked})`);
    if (checked !== "put" && checked !== "delete") {
      return { type: checked, key, value, keyspace: undefined, op: record, index };
    }
    return { type: checked, key, value, keyspace: keyspaceArgument(keyspace), op: record, index };
  });
}

/** The arguments of `recordioRoundTrip`: an array of records and strings naming the codec and format. */
export function recordioArguments(
  records: unknown,
  options: unknown,
): { records: unknown[]; compression: string; format: string } {
  if (!Array.isArray(records)) {
    throw invalidArgument(`records must be an array, got ${describe(records)}`);
  }
  const o = optionsObject(options, ["compression", "format"]);
  const { compression = "none", format = "shale" } = o;
  if (typeof compression !== "string") {
    throw invalidArgument(`options.compression must be a string, got ${describe(compression)}`);
  }
  if (typeof format !== "string") {
    throw invalidArgument(`options.format must be a string, got ${describe(format)}`);
  }
  return { records: [...(records as unknown[])], compression, format };
}
