/**
 * Errors across the page/worker boundary: a `ShaleError`'s code and message travel, and become a
 * `ShaleError` again on the other side.
 *
 * @module
 */
import { ShaleError } from "../errors.js";
import type { WireError } from "./requests.js";

/** The wire form of `error` (anything that is not a ShaleError is an `IO` error). */
export function toWire(error: unknown): WireError {
  if (error instanceof ShaleError) {
    return error.details === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, details: error.details };
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { code: "IO", message: `shaledb: ${message}` };
}

/** The ShaleError of a wire error. */
export function fromWire(error: WireError): ShaleError {
  return new ShaleError(error.code, error.message, { details: error.details });
}
