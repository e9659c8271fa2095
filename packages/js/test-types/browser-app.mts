// A browser project's use of the package's types (moduleResolution bundler, the "browser"
// condition), checked by scripts/pack-smoke.sh with tsc.
import { deleteDatabase, open, openInWorker, type BrowserDatabase } from "shaledb";
// @ts-expect-error browsers have no synchronous API
import { openSync } from "shaledb";

interface Note {
  title: string;
}

/** Whether A and B are the same type (not merely assignable). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

const db: BrowserDatabase<string, Note> = await open<Note>("notes", { valueEncoding: "json" });
const note = await db.get("1");
const noteIsNote: Equal<typeof note, Note | undefined> = true;
const archive: Blob = await db.export();
// @ts-expect-error typed values need the json encoding
await open<Note>("notes");
// The synchronous API in an application's worker, typed the same way.
const inWorker = await openInWorker<Note>("notes", { valueEncoding: "json" });
const workerNote = inWorker.get("1");
const workerNoteIsNote: Equal<typeof workerNote, Note | undefined> = true;
await deleteDatabase("notes");
console.log(noteIsNote, workerNoteIsNote, archive, openSync);
