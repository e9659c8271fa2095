/**
 * The encodings of keys and values, and the JS types they give.
 *
 * @module
 */
/**
 * Encodings of keys: `"utf8"` (JS strings, stored as their UTF-8 bytes; a string with a lone
 * surrogate, which UTF-8 cannot hold, is `INVALID_ARGUMENT`) or `"binary"`.
 */
export type KeyEncoding = "utf8" | "binary";

/**
 * Encodings of values: `"utf8"` (strings, well-formed as for keys), `"binary"`, or `"json"` (any
 * JSON-serialisable value).
 */
export type ValueEncoding = "utf8" | "binary" | "json";

/** A value the `"json"` encoding round-trips. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** The JS type of a key in encoding `E`. */
export type KeyOf<E extends KeyEncoding> = E extends "binary" ? Uint8Array : string;

/** The JS type of a value in encoding `E`. */
export type ValueOf<E extends ValueEncoding> = E extends "binary"
  ? Uint8Array
  : E extends "json"
    ? JsonValue
    : string;

/** How the keys and values of a database or keyspace are encoded (default `"utf8"` both). */
export interface EncodingOptions<KE extends KeyEncoding, VE extends ValueEncoding> {
  keyEncoding?: KE;
  valueEncoding?: VE;
}

/**
 * Options with the `"json"` value encoding named, for values of a type the caller gives:
 * `openSync<User>(location, { valueEncoding: "json" })`, `keyspace<Order>(name, { valueEncoding:
 * "json" })`. The type is the caller's word: values are not checked against it when read.
 */
export type JsonEncoded<O> = O & { valueEncoding: "json" };
