/**
 * What `importDatabase` checks before an archive's files replace anything, in Node and in
 * browsers alike: every block of every file ({@link verifyImportedFiles}: `verifyStorage`, the
 * core's `shaledb::verify`), then one open of the database there with {@link IMPORT_CHECK_OPEN}
 * (what verification does not check: options, keyspaces; the logs replayed).
 *
 * @module
 */
import { call, wasm } from "../engine/instance.js";
import { ShaleError } from "../errors.js";

/** What `verifyStorage` reports (crates/wasm/src/verify.rs). */
interface VerifyReport {
  problems: { file: string; offset?: number; code: string; message: string }[];
}

/**
 * Reads every file of the database in `storage` (a storage host of the WebAssembly module) and
 * checks every block; throws the first problem as a typed error naming the file and offset
 * (`CORRUPTION`, `VERSION_UNSUPPORTED`, ...), with how many more there are.
 */
export function verifyImportedFiles(storage: object): void {
  const report = call(() => wasm.verifyStorage(storage)) as VerifyReport;
  const [first, ...more] = report.problems;
  if (first !== undefined) {
    const others = more.length === 0 ? "" : ` (and ${more.length} more problem${more.length === 1 ? "" : "s"})`;
    throw new ShaleError(first.code as ShaleError["code"], `shaledb: the archive is damaged: ${first.message}${others}`);
  }
}

/**
 * The options of the import's check open (and of the check that a database to be replaced is
 * not open): as raw bytes, so that it neither checks nor records the keyspaces' encodings (the
 * importer's own `open` does), and without maintenance.
 */
export const IMPORT_CHECK_OPEN = {
  createIfMissing: false,
  autoMaintenance: false,
  keyEncoding: "binary",
  valueEncoding: "binary",
} as const;
