/**
 * The arguments of `keyspace(name, options)`, checked the same way for every API.
 *
 * @module
 */
import { invalidArgument } from "../errors.js";
import { encodingNames, keyspaceName, optionsObject } from "./checks.js";
import { keyCodec, valueCodec, type Codec } from "../encoding/codec.js";
import type { EncodingOptions, KeyEncoding, ValueEncoding } from "../types.js";

/**
 * Checks a keyspace's name (a non-empty, well-formed string other than `"default"`, which is the
 * database itself) and options (an object, or absent, naming known encodings); returns the
 * codecs of its encodings. Anything wrong is `INVALID_ARGUMENT`.
 */
export function keyspaceCodecs(
  name: unknown,
  options: EncodingOptions<KeyEncoding, ValueEncoding> | undefined,
): { keys: Codec<unknown>; values: Codec<unknown> } {
  keyspaceName(name);
  const { keyEncoding, valueEncoding } = encodingNames(optionsObject(options, "keyspace options"));
  return { keys: keyCodec(keyEncoding), values: valueCodec(valueEncoding) };
}

/** Keyspace names starting with this character are ShaleDB's own (the Promise API refuses them). */
export const RESERVED_KEYSPACE_PREFIX = "\u0000";

/** Throws `INVALID_ARGUMENT` for a keyspace name reserved for ShaleDB's own use. */
export function checkUserKeyspaceName(name: string): void {
  if (name.startsWith(RESERVED_KEYSPACE_PREFIX)) {
    throw invalidArgument("keyspace names starting with a NUL character are reserved for ShaleDB");
  }
}
