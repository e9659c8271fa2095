/**
 * `importDatabase()` in Node.js, with the browser's archive (`../archive/database-archive.ts`;
 * docs/FORMAT.md, "Export archive"; `export()` is `../archive/export-database.ts`): an archive
 * exported in one imports in the other.
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";

import { archiveDatabaseFiles } from "../archive/database-archive.js";
import { option, optionsObject, pathArgument } from "../arguments/checks.js";
import { call, ensureLoadedSync, wasm } from "../engine/instance.js";
import { requirePart } from "../engine/module-parts.js";
import { openDatabaseSync } from "../engine/sync-database.js";
import { ShaleError, invalidArgument } from "../errors.js";
import { nodeEnvironment } from "./environment.js";
import { NodeFsStorage } from "./node-storage.js";

/**
 * How the import opens a database to check it: an existing one, or the archive's files. As raw
 * bytes: binary neither checks nor records the keyspaces' encodings (the importer's `open` does).
 */
const RAW_OPEN = {
  createIfMissing: false,
  autoMaintenance: false,
  keyEncoding: "binary",
  valueEncoding: "binary",
} as const;

/** The bytes of an `importDatabase` archive argument. */
async function archiveBytes(archive: unknown): Promise<Uint8Array> {
  if (archive instanceof Uint8Array) {
    return archive;
  }
  if (archive instanceof ArrayBuffer) {
    return new Uint8Array(archive);
  }
  if (archive instanceof Blob) {
    return new Uint8Array(await archive.arrayBuffer());
  }
  throw invalidArgument("the archive must be a Blob, an ArrayBuffer or a Uint8Array");
}

/** Writes `data` as file `path`, flushed to stable storage. */
function writeDurably(path: string, data: Uint8Array): void {
  const fd = openSync(path, "wx");
  try {
    for (let at = 0; at < data.length; ) {
      at += writeSync(fd, data, at);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether directory `path` exists and holds any file. */
function holdsFiles(path: string): boolean {
  try {
    return readdirSync(path).length > 0;
  } catch {
    return false;
  }
}

/**
 * Makes the database of `archive` the database in directory `location`: the files are written
 * into a new directory beside it, every block verified and the database opened once there; only
 * then is it renamed into place. A damaged archive or a failure leaves `location` as it was.
 * `overwrite: true` replaces a database there (not open: `LOCKED`).
 *
 * @throws {ShaleError} `ALREADY_EXISTS` if `location` holds files (unless `overwrite: true`);
 *   `LOCKED` if the database there is open; `INVALID_ARGUMENT` for an archive that is not a tar
 *   of one database directory; `CORRUPTION` and the other errors of opening it.
 */
export async function importDirectory(
  location: string,
  archive: Blob | ArrayBuffer | Uint8Array,
  options?: { overwrite?: boolean },
): Promise<void> {
  pathArgument(location, "the location");
  const overwrite = option(optionsObject(options, ["overwrite"], "importDatabase options"), "overwrite", "boolean", false);
  const files = archiveDatabaseFiles(await archiveBytes(archive));
  const target = resolve(location);
  const occupied = holdsFiles(target);
  if (occupied && !overwrite) {
    throw new ShaleError(
      "ALREADY_EXISTS",
      `shaledb: ${target} already holds files (pass { overwrite: true } to replace the database there)`,
    );
  }
  ensureLoadedSync();
  if (occupied && existsSync(join(target, "CURRENT"))) {
    // LOCKED if it is open somewhere.
    openDatabaseSync(nodeEnvironment, target, RAW_OPEN).close();
  }
  mkdirSync(dirname(target), { recursive: true });
  const aside = mkdtempSync(`${target}.import-`);
  try {
    for (const file of files) {
      writeDurably(join(aside, file.name), file.data);
    }
    const storage = new NodeFsStorage(aside, { create: false });
    try {
      requirePart("verify");
      const report = call(() => wasm.verifyStorage(storage, true)) as { problems: { code: string; message: string }[] };
      const first = report.problems[0];
      if (first !== undefined) {
        throw new ShaleError(first.code as ShaleError["code"], `shaledb: the archive is damaged: ${first.message}`);
      }
    } finally {
      storage.releaseAll();
    }
    // Opening checks what verification does not, and replays the logs.
    openDatabaseSync(nodeEnvironment, aside, RAW_OPEN).close();
    if (existsSync(target)) {
      const old = `${aside}.replaced`;
      renameSync(target, old);
      renameSync(aside, target);
      rmSync(old, { recursive: true, force: true });
    } else {
      renameSync(aside, target);
    }
  } catch (error) {
    rmSync(aside, { recursive: true, force: true });
    throw error;
  }
}
