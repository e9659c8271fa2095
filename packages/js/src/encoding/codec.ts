/**
 * Key and value encodings: JS values to the bytes the engine stores, and back.
 *
 * Key order is byte order. A `"utf8"` key is stored as its UTF-8 bytes, so keys sort by code
 * point — which differs from JavaScript's `<` on strings (UTF-16 code units) for characters
 * above U+FFFF against those in U+E000–U+FFFF: `"\u{1F600}" > "\uFFFD"` in ShaleDB, but `<` in JS.
 * A `"utf8"` key or value must be well-formed UTF-16 (no lone surrogate), so that it reads back
 * as written and two different strings are never one key.
 *
 * @module
 */
import { bytesArgument, describe, wellFormedString } from "../arguments/checks.js";
import { invalidArgument, ShaleError } from "../errors.js";
import type { KeyEncoding, ValueEncoding } from "../types.js";

export { describe } from "../arguments/checks.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

/** Converts keys or values of one encoding. */
export interface Codec<T> {
  readonly name: string;
  /** The bytes of `value`; a wrong JS type is `INVALID_ARGUMENT` naming `what`. */
  encode(value: T, what: string): Uint8Array;
  decode(bytes: Uint8Array): T;
  /**
   * For the codecs whose bytes are UTF-8 text (`"utf8"`, `"json"`): that text, checked as
   * `encode` checks it, for writers that put it straight into their buffer
   * (`./utf8-into.ts`) instead of taking a fresh array from `encode`.
   */
  text?(value: T, what: string): string;
  /**
   * Whether `decode` keeps no reference to its argument, so it may decode a view of memory that
   * changes right after the call (WebAssembly memory): no copy needed. `"binary"` returns its
   * argument, so it needs a copy of its own.
   */
  readonly transient: boolean;
}

const utf8: Codec<string> = {
  name: "utf8",
  encode: (value, what) => encoder.encode(wellFormedString(value, what, "utf8")),
  text: (value, what) => wellFormedString(value, what, "utf8"),
  decode: (bytes) => decoder.decode(bytes),
  transient: true,
};

const binary: Codec<Uint8Array> = {
  name: "binary",
  encode: (value, what) => bytesArgument(value, what),
  decode: (bytes) => bytes,
  transient: false,
};

/** `value` as JSON text; a value JSON cannot hold is `INVALID_ARGUMENT` naming `what`. */
function jsonText(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw invalidArgument(`${what} cannot be serialised as JSON: ${String(error)}`);
  }
  if (text === undefined) {
    throw invalidArgument(`${what} cannot be serialised as JSON (got ${describe(value)})`);
  }
  return text;
}

/** JSON text escapes lone surrogates (`"\ud800"`), so every string round-trips. */
const json: Codec<unknown> = {
  name: "json",
  encode(value, what) {
    return encoder.encode(jsonText(value, what));
  },
  text: (value, what) => jsonText(value, what),
  decode(bytes) {
    const text = decoder.decode(bytes);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      // Written with another encoding (or by another program): not JSON.
      const shown = text.length > 40 ? `${text.slice(0, 40)}...` : text;
      throw new ShaleError(
        "DECODE",
        `shaledb: a stored value is not JSON (${bytes.length} bytes: ${JSON.stringify(shown)}); ` +
          "was it written with another valueEncoding?",
        { cause: error },
      );
    }
  },
  transient: true,
};

/** Longest text (UTF-16 code units) {@link packedForm} leaves as text: room is reserved for 3 bytes each. */
const PACKED_TEXT_MAX = 16 * 1024;

/**
 * `value` checked and ready to write: its UTF-8 text for a text codec ({@link Codec.text}),
 * written straight into the writer's buffer (`./utf8-into.ts`); else, and for text longer than
 * 16 Ki code units (whose room at 3 bytes each would be too much), its bytes.
 */
export function packedForm(codec: Codec<unknown>, value: unknown, what: string): Uint8Array | string {
  if (codec.text === undefined) {
    return codec.encode(value, what);
  }
  const text = codec.text(value, what);
  return text.length <= PACKED_TEXT_MAX ? text : encoder.encode(text);
}

/** The codec of key encoding `name` (checked by `encodingNames` in `../arguments/checks.ts`). */
export function keyCodec(name: KeyEncoding): Codec<unknown> {
  switch (name) {
    case "utf8":
      return utf8 as Codec<unknown>;
    case "binary":
      return binary as Codec<unknown>;
    default:
      throw invalidArgument(`unknown keyEncoding ${describe(name)} (use "utf8" or "binary")`);
  }
}

/** The codec of value encoding `name` (checked by `encodingNames` in `../arguments/checks.ts`). */
export function valueCodec(name: ValueEncoding): Codec<unknown> {
  switch (name) {
    case "utf8":
      return utf8 as Codec<unknown>;
    case "binary":
      return binary as Codec<unknown>;
    case "json":
      return json;
    default:
      throw invalidArgument(`unknown valueEncoding ${describe(name)} (use "utf8", "binary" or "json")`);
  }
}
