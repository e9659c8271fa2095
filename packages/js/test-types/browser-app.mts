// A browser project's use of the package's types (moduleResolution bundler, the "browser"
// condition), checked by scripts/pack-smoke.sh with tsc.
import { deleteDatabase, open, type BrowserDatabase } from "shaledb";
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
await deleteDatabase("notes");
console.log(noteIsNote, archive, openSync);
