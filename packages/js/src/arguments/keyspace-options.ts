/**
 * The arguments of `keyspace(name, options)`, checked the same way for every API.
 *
 * @module
 */
import { OPTION_NAMES, encodingNames, keyspaceName, optionsObject } from "./checks.js";
import { keyCodec, valueCodec, type Codec } from "../encoding/codec.js";
import type { EncodingOptions, KeyEncoding, ValueEncoding } from "../types.js";

/**
 * Checks a keyspace's name (a non-empty, well-formed string other than `"default"`, which is the
 * database itself, and not starting with NUL, which ShaleDB's own keyspaces do) and options (an object, or absent, naming known encodings); returns the
 * codecs of its encodings. Anything wrong is `INVALID_ARGUMENT`.
 */
export function keyspaceCodecs(
  name: unknown,
  options: EncodingOptions<KeyEncoding, ValueEncoding> | undefined,
): { keys: Codec<unknown>; values: Codec<unknown> } {
  keyspaceName(name);
  const { keyEncoding, valueEncoding } = encodingNames(optionsObject(options, OPTION_NAMES.encodings, "keyspace options"));
  return { keys: keyCodec(keyEncoding), values: valueCodec(valueEncoding) };
}

