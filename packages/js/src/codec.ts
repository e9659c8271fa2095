/**
 * Key and value encodings: JS values to the bytes the engine stores, and back.
 *
 * Key order is byte order. A `"utf8"` key is stored as its UTF-8 bytes, so keys sort by code
 * point — which differs from JavaScript's `<` on strings (UTF-16 code units) for characters
 * above U+FFFF against those in U+E000–U+FFFF: `"\u{1F600}" > "\uFFFD"` in ShaleDB, but `<` in JS.
 *
 * @module
 */
import { invalidArgument } from "./errors.js";
import type { KeyEncoding, ValueEncoding } from "./types.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

/** Converts keys or values of one encoding. */
export interface Codec<T> {
  readonly name: string;
  /** The bytes of `value`; a wrong JS type is `INVALID_ARGUMENT` naming `what`. */
  encode(value: T, what: string): Uint8Array;
  decode(bytes: Uint8Array): T;
}

const utf8: Codec<string> = {
  name: "utf8",
  encode(value, what) {
    if (typeof value !== "string") {
      throw invalidArgument(`${what} must be a string (encoding "utf8"), got ${describe(value)}`);
    }
    return encoder.encode(value);
  },
  decode: (bytes) => decoder.decode(bytes),
};

const binary: Codec<Uint8Array> = {
  name: "binary",
  encode(value, what) {
    if (!(value instanceof Uint8Array)) {
      throw invalidArgument(
        `${what} must be a Uint8Array (encoding "binary"), got ${describe(value)}`,
      );
    }
    return value;
  },
  decode: (bytes) => bytes,
};

const json: Codec<unknown> = {
  name: "json",
  encode(value, what) {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw invalidArgument(`${what} cannot be serialised as JSON: ${String(error)}`);
    }
    if (text === undefined) {
      throw invalidArgument(`${what} cannot be serialised as JSON (got ${describe(value)})`);
    }
    return encoder.encode(text);
  },
  decode: (bytes) => JSON.parse(decoder.decode(bytes)) as unknown,
};

/** The codec of key encoding `name`. */
export function keyCodec(name: KeyEncoding | undefined): Codec<unknown> {
  switch (name ?? "utf8") {
    case "utf8":
      return utf8 as Codec<unknown>;
    case "binary":
      return binary as Codec<unknown>;
    default:
      throw invalidArgument(`unknown keyEncoding ${describe(name)} (use "utf8" or "binary")`);
  }
}

/** The codec of value encoding `name`. */
export function valueCodec(name: ValueEncoding | undefined): Codec<unknown> {
  switch (name ?? "utf8") {
    case "utf8":
      return utf8 as Codec<unknown>;
    case "binary":
      return binary as Codec<unknown>;
    case "json":
      return json;
    default:
      throw invalidArgument(
        `unknown valueEncoding ${describe(name)} (use "utf8", "binary" or "json")`,
      );
  }
}

/** A short description of a value's type for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Uint8Array) return "a Uint8Array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return typeof value;
}
