/**
 * `transact` of the Promise API: run a body in a transaction, commit, retry on `CONFLICT`.
 *
 * @module
 */
import { transactArguments, type TransactArguments } from "../arguments/checks.js";
import { settle } from "./settle.js";
import type { Transaction, WriteOptions } from "../types.js";

/**
 * Runs `body` in a transaction from `begin` and commits it with `options`; on `CONFLICT` (from
 * the body or the commit) rolls back and starts again, up to `options.retries` times (default
 * 10). Any other error rolls back and is rethrown. Bad arguments (`body` not a function,
 * `options` not an object, `retries` not a non-negative integer) reject with `INVALID_ARGUMENT`
 * before anything begins.
 */
export function runTransaction<T>(
  begin: () => Promise<Transaction<unknown, unknown>>,
  body: (tx: Transaction<unknown, unknown>) => Promise<T>,
  options: (WriteOptions & { retries?: number }) | undefined,
): Promise<T> {
  return settle(() => retrying(begin, transactArguments(body, options)));
}

async function retrying<T>(
  begin: () => Promise<Transaction<unknown, unknown>>,
  { body, retries, write }: TransactArguments<(tx: Transaction<unknown, unknown>) => Promise<T>>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const tx = await begin();
    try {
      const result = await body(tx);
      await tx.commit(write);
      return result;
    } catch (error) {
      await tx.rollback();
      const conflict = (error as { code?: unknown }).code === "CONFLICT";
      if (!conflict || attempt >= retries) {
        throw error;
      }
    }
  }
}
