/**
 * `transact` of the Promise API: run a body in a transaction, commit, retry on `CONFLICT`.
 *
 * @module
 */
import type { Transaction, WriteOptions } from "./types.js";

/**
 * Runs `body` in a transaction from `begin` and commits it with `options`; on `CONFLICT` (from
 * the body or the commit) rolls back and starts again, up to `options.retries` times (default
 * 10). Any other error rolls back and is rethrown.
 */
export async function runTransaction<T>(
  begin: () => Promise<Transaction<unknown, unknown>>,
  body: (tx: Transaction<unknown, unknown>) => Promise<T>,
  options: WriteOptions & { retries?: number },
): Promise<T> {
  const retries = options.retries ?? 10;
  for (let attempt = 0; ; attempt++) {
    const tx = await begin();
    try {
      const result = await body(tx);
      await tx.commit(options);
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
