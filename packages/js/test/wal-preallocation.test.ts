// Write-ahead logs in Node are extended ahead of their data (the storage host's `extend`, as
// native ShaleDB preallocates them), so that a synced write does not change the log's size and
// its fdatasync commits no file-system metadata. The zeros past the data are the log's end to
// recovery: a crash image (the files as a running database left them) opens with every write.
import { copyFileSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { openSync } from "shaledb";

import { tempDir } from "./helpers.js";

/** The write-ahead logs of `dir`, newest last. */
function logs(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".log"))
    .sort();
}

describe("write-ahead log preallocation in Node", () => {
  it("synced writes leave the live log's size alone, and a crash image recovers every write", () => {
    const dir = tempDir("wal-prealloc");
    const db = openSync(dir);
    db.put("first", "1", { sync: true });
    const live = logs(dir).at(-1) ?? "";
    const size = statSync(join(dir, live)).size;
    // Extended by a whole step (1 MiB), far beyond the data.
    expect(size).toBeGreaterThanOrEqual(1 << 20);
    for (let i = 0; i < 200; i++) db.put(`k${i}`, `v${i}`, { sync: true });
    expect(statSync(join(dir, live)).size).toBe(size);

    // The files as they are now, the database still open: what a crash leaves.
    const image = join(tempDir("wal-prealloc-image"), "db");
    mkdirSync(image);
    for (const name of readdirSync(dir).filter((n) => n !== "LOCK")) {
      copyFileSync(join(dir, name), join(image, name));
    }
    db.close();
    const recovered = openSync(image);
    expect(recovered.get("first")).toBe("1");
    expect(recovered.get("k199")).toBe("v199");
    expect(recovered.count()).toBe(201);
    recovered.close();
  });
});
