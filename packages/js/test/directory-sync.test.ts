// Some file systems cannot fsync a directory (EINVAL, EPERM, EISDIR, ...). Node's storage does
// not fail then, but it no longer hides it: `stats().directorySync` turns "unsupported" (files
// created or renamed since may not survive a power loss). Simulated by injecting the directory
// fsync into the storage object; a database is opened on it through the package's own
// open path (src/, as node.ts does).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import "../src/node.js";
import { codedError } from "../src/engine/storage-host.js";
import { NodeFsStorage } from "../src/node/node-storage.js";
import { openDatabaseSync, type Environment } from "../src/engine/sync-database.js";

const created: string[] = [];

afterAll(() => {
  for (const dir of created.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
  }
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "shaledb-dirsync-"));
  created.push(dir);
  return dir;
}

/** A directory fsync that fails with `code`, counting its calls. */
function failingFsync(code: string): { fsync: (fd: number) => void; calls: () => number } {
  let calls = 0;
  return {
    fsync: () => {
      calls += 1;
      throw codedError(code, `fsync: ${code} (simulated)`);
    },
    calls: () => calls,
  };
}

/** Node's environment, with the directory fsync of every storage replaced by `fsync`. */
function environment(fsync?: (fd: number) => void): Environment {
  return {
    resolve: (location) => resolve(location),
    storage: (location, create) =>
      new NodeFsStorage(location, fsync === undefined ? { create } : { create, fsyncDirectory: fsync }),
  };
}

describe("NodeFsStorage.syncDir", () => {
  it("reports directorySync 'ok' while directory fsyncs succeed", () => {
    const storage = new NodeFsStorage(tempDir());
    expect(storage.directorySync).toBe("ok");
    storage.syncDir();
    expect(storage.directorySync).toBe("ok");
  });

  for (const code of ["EINVAL", "EPERM", "EISDIR", "ENOTSUP", "EOPNOTSUPP"]) {
    it.runIf(process.platform !== "win32")(
      `a directory fsync refused with ${code} does not fail, and turns directorySync to 'unsupported' for good`,
      () => {
        const failing = failingFsync(code);
        const storage = new NodeFsStorage(tempDir(), { fsyncDirectory: failing.fsync });
        expect(() => storage.syncDir()).not.toThrow();
        expect(failing.calls()).toBe(1);
        expect(storage.directorySync).toBe("unsupported");
        storage.syncDir();
        expect(storage.directorySync).toBe("unsupported");
      },
    );
  }

  it.runIf(process.platform !== "win32")("any other directory fsync error (EIO) is thrown, not recorded", () => {
    const storage = new NodeFsStorage(tempDir(), { fsyncDirectory: failingFsync("EIO").fsync });
    expect(() => storage.syncDir()).toThrow(expect.objectContaining({ code: "EIO" }));
    expect(storage.directorySync).toBe("ok");
  });
});

describe("stats().directorySync", () => {
  it("is 'ok' for a database on a file system that syncs directories", () => {
    const db = openDatabaseSync(environment(), join(tempDir(), "db"));
    try {
      db.put("k", "v");
      expect(db.stats().directorySync).toBe("ok");
    } finally {
      db.close();
    }
  });

  it.runIf(process.platform !== "win32")(
    "is 'unsupported' where the directory fsync is refused (EINVAL), and the database works on",
    () => {
      const failing = failingFsync("EINVAL");
      const dir = join(tempDir(), "db");
      const db = openDatabaseSync(environment(failing.fsync), dir);
      try {
        db.put("k", "v", { sync: true });
        db.flush();
        expect(failing.calls(), "opening and flushing sync the directory").toBeGreaterThan(0);
        expect(db.stats().directorySync).toBe("unsupported");
        expect(db.get("k")).toBe("v");
      } finally {
        db.close();
      }
      const again = openDatabaseSync(environment(), dir);
      try {
        expect(again.get("k")).toBe("v");
        expect(again.stats().directorySync).toBe("ok");
      } finally {
        again.close();
      }
    },
  );
});
