// Bootstrap of a new follower from a checkpoint in JetStream's object store.
//
// The leader (`publishCheckpoint`) makes `db.checkpoint(dir)`, uploads its files as objects
// `<seq>/<file>` of the bucket, then object `latest`: a JSON manifest `{ seq, streamSeq, files }`.
// `latest` is written last, so a follower never sees a manifest whose files are not all there;
// the previous checkpoint is kept (one follower may still be downloading it), older ones removed.
//
// Where a bootstrapped follower starts in the stream: the forwarder's confirmed position taken
// just before the checkpoint, `{ lastSeq, streamSeq }`: every change up to `lastSeq` is stored
// at stream sequence `streamSeq` or before, and the checkpoint holds them (its seq >= lastSeq,
// as confirmed changes were committed before it was made). The follower tails the stream from
// `streamSeq + 1`: changes between `lastSeq` and the checkpoint's seq come again there and are
// skipped (`applied: false`), nothing after the checkpoint can be before it. Taking the position
// before the checkpoint rather than looking up the stream sequence of the checkpoint's own seq
// costs a few skipped messages and needs no index from change to stream sequence.
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Objm } from "@nats-io/obj";
import { streamNames } from "./stream.mjs";

const LATEST = "latest";

/** The checkpoint bucket, created if missing. */
export function checkpointBucket(nc, { name } = {}) {
  return new Objm(nc).create(streamNames(name).bucket, { storage: "file" });
}

/** Every file under `dir`, as paths relative to it with "/" separators. */
async function filesUnder(dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)).split(sep).join("/"))
    .sort();
}

/**
 * Checkpoints leader `db` and uploads it. `position()` is the forwarder's confirmed position
 * (forwarder.mjs). Resolves with the manifest `{ seq, streamSeq, lastSeq, files, bytes }`.
 */
export async function publishCheckpoint(db, nc, position, { name } = {}) {
  const { lastSeq, streamSeq } = position();
  const scratch = await mkdtemp(join(tmpdir(), "shaledb-checkpoint-"));
  try {
    const dir = join(scratch, "db");
    const { seq } = await db.checkpoint(dir);
    const bucket = await checkpointBucket(nc, { name });
    const files = [];
    let bytes = 0;
    for (const file of await filesUnder(dir)) {
      const path = join(dir, file);
      const size = (await stat(path)).size;
      await bucket.put({ name: `${seq}/${file}` }, Readable.toWeb(createReadStream(path)));
      files.push({ file, size });
      bytes += size;
    }
    const manifest = { seq, lastSeq, streamSeq, files, bytes, at: Date.now() };
    await bucket.putBlob({ name: LATEST }, new TextEncoder().encode(JSON.stringify(manifest)));
    // Keep this checkpoint and the one before; remove older ones.
    const kept = new Set([String(seq)]);
    const others = (await bucket.list()).filter((o) => o.name !== LATEST && !o.deleted);
    const seqs = [...new Set(others.map((o) => o.name.split("/")[0]))].map(Number).sort((a, b) => b - a);
    const previous = seqs.find((s) => s < seq);
    if (previous !== undefined) kept.add(String(previous));
    for (const o of others) if (!kept.has(o.name.split("/")[0])) await bucket.delete(o.name);
    return manifest;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Downloads the newest checkpoint into `dir` (missing or empty). Resolves with its manifest
 * `{ seq, streamSeq, ... }`, or `undefined` when the bucket holds none (then the follower
 * starts empty, from the stream's start). The leader keeps two checkpoints: one replaced twice
 * during a slow download is missing files, and the download starts again with the newest.
 */
export async function downloadCheckpoint(nc, dir, { name, attempts = 5 } = {}) {
  const bucket = await checkpointBucket(nc, { name });
  for (let attempt = 1; ; attempt++) {
    const blob = await bucket.getBlob(LATEST);
    if (!blob) return undefined;
    const manifest = JSON.parse(new TextDecoder().decode(blob));
    if (await downloadFiles(bucket, manifest, dir)) return manifest;
    await rm(dir, { recursive: true, force: true });
    if (attempt === attempts) throw new Error(`checkpoint download: files replaced during each of ${attempts} attempts`);
  }
}

/** Downloads the files of checkpoint `manifest` into `dir`; `false` if one is gone or unreadable. */
async function downloadFiles(bucket, manifest, dir) {
  for (const { file } of manifest.files) {
    const path = join(dir, ...file.split("/"));
    await mkdir(dirname(path), { recursive: true });
    const object = await bucket.get(`${manifest.seq}/${file}`);
    if (!object) return false;
    try {
      await pipeline(Readable.fromWeb(object.data), createWriteStream(path));
      if (await object.error) return false; // removed while read, or damaged: try again
    } catch {
      return false;
    }
  }
  return true;
}
