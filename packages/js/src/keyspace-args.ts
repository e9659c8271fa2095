/**
 * The arguments of `keyspace(name, options)`, checked the same way for every API.
 *
 * @module
 */
import { describe, keyCodec, valueCodec, type Codec } from "./codec.js";
import { invalidArgument } from "./errors.js";
import type { EncodingOptions, KeyEncoding, ValueEncoding } from "./types.js";

/**
 * Checks a keyspace's name (a non-empty string other than `"default"`, which is the database
 * itself) and options (an object, or absent); returns the codecs of its encodings. Anything
 * wrong is `INVALID_ARGUMENT`.
 */
export function keyspaceCodecs(
  name: unknown,
  options: EncodingOptions<KeyEncoding, ValueEncoding> | undefined,
): { keys: Codec<unknown>; values: Codec<unknown> } {
  if (typeof name !== "string" || name === "") {
    throw invalidArgument(`a keyspace name must be a non-empty string, got ${describe(name)}`);
  }
  if (name === "default") {
    throw invalidArgument('the keyspace name "default" is reserved: use the database itself');
  }
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw invalidArgument(`keyspace options must be an object, got ${describe(options)}`);
  }
  return { keys: keyCodec(options?.keyEncoding), values: valueCodec(options?.valueEncoding) };
}
