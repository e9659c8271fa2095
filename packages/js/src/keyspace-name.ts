/**
 * The rule for keyspace names, the same for every API.
 *
 * @module
 */
import { describe } from "./codec.js";
import { invalidArgument } from "./errors.js";

/** Checks a keyspace name: a non-empty string other than `"default"` (the database itself). */
export function checkKeyspaceName(name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw invalidArgument(`a keyspace name must be a non-empty string, got ${describe(name)}`);
  }
  if (name === "default") {
    throw invalidArgument('the keyspace name "default" is reserved: use the database itself');
  }
  return name;
}
