/**
 * The server of Node's Promise API: the database opened on the synchronous API, serving the
 * requests of one client (the Promise API's transport) — the same server that browsers' owners
 * run (`../server/database-server.ts`), with Node's services.
 *
 * @module
 */
import { basename } from "node:path";

import { checkOpenOptions } from "../arguments/open-options.js";
import { debugPanic } from "../engine/module-functions.js";
import { openDatabaseSync, type Environment } from "../engine/sync-database.js";
import { invalidArgument } from "../errors.js";
import { DatabaseServer } from "../server/database-server.js";
import type { KeyEncoding, OpenOptions, ValueEncoding } from "../types.js";
import { nodeEnvironment } from "./environment.js";
import { NodeFsStorage } from "./node-storage.js";
import type { StorageHost } from "../engine/storage-host.js";
import { exportDatabase } from "../archive/export-database.js";
import type { JobRunner } from "../engine/job-maintenance.js";

/**
 * Opens database `location` (a directory) with `options` and returns its server. Throws as
 * `openSync` does (`LOCKED`, `CORRUPTION`, `INVALID_ARGUMENT`, `IO`, ...). `hooks.environment`:
 * where files live (default Node's file system); `hooks.busy`: told when maintenance starts and
 * ends (`../engine/maintenance.ts`); `hooks.jobs`: where flush and compaction run as jobs
 * (`../engine/job-maintenance.ts`; default: in turns in this thread); `hooks.asyncSync`: the
 * server runs in the caller's thread, so WAL syncs go through libuv's pool (`fs.fdatasync`),
 * deferred and group-committed (`../server/database-server.ts`), instead of `fdatasyncSync` on
 * the event loop.
 */
export function openNodeServer(
  location: string,
  options: OpenOptions<KeyEncoding, ValueEncoding> | undefined,
  hooks: { environment?: Environment; busy?: (busy: boolean) => void; jobs?: JobRunner; asyncSync?: boolean } = {},
): DatabaseServer {
  const checked = checkOpenOptions(options);
  const env = hooks.environment ?? nodeEnvironment;
  // The database's own storage (the first one made: checkpoints make others later).
  let storage: StorageHost | undefined;
  const track: Environment = {
    resolve: (l) => env.resolve(l),
    storage: (l, c) => {
      const made = env.storage(l, c);
      storage ??= made;
      return made;
    },
  };
  const db = openDatabaseSync(track, location, {
    ...options,
    keyEncoding: "binary",
    valueEncoding: "binary",
    autoMaintenance: false,
  });
  const own = storage;
  return new DatabaseServer(
    db,
    {
      checkpoint: (destination) => db.checkpoint(destination).seq,
      exportArchive: () => exportDatabase(db, basename(location)),
      stats: () => db.stats(),
      debugPanic: (message) => debugPanic(message),
      debugLoseReplies: () => {
        throw invalidArgument("debugLoseReplies is a test hook of browsers' tabs");
      },
    },
    {
      autoMaintenance: checked.autoMaintenance,
      idleSeal: false,
      ...(hooks.busy === undefined ? {} : { busy: hooks.busy }),
      ...(hooks.jobs === undefined ? {} : { jobs: hooks.jobs }),
      ...(hooks.asyncSync === true && own instanceof NodeFsStorage
        ? { asyncSync: (file: number) => own.syncAsync(file) }
        : {}),
    },
  );
}
