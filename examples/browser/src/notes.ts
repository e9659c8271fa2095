// The notes store: every ShaleDB call of the app is in this file (main.ts is the page around it).
//
// Database "notes" lives in the browser's Origin Private File System and has two keyspaces:
//
//   default keyspace   note:<created, ISO 8601>:<id>  →  { title, body, created }   (JSON)
//   "by-title"         <title, lower case>\0<note key> →  ""                         (the index)
//
// Keys sort by their UTF-8 bytes, and ISO 8601 timestamps sort like the times they name, so a
// reverse scan of the prefix "note:" lists the newest notes first. The index turns "titles
// starting with …" into a prefix scan too. A note and its index entry are always written (and
// deleted) in one atomic batch: both keyspaces share one write-ahead log, so after a crash or a
// closed tab either both are there or neither is.
import {
  importDatabase,
  open,
  type BrowserDatabase,
  type JsonValue,
  type Keyspace,
} from "shaledb";

/** One note, as stored (a type alias rather than an interface, so that it is a `JsonValue`). */
export type Note = { title: string; body: string; created: string };

/** A note and its key (which `remove` takes). */
export type StoredNote = Note & { key: string };

const DB_NAME = "notes";
const NOTE_PREFIX = "note:";
/** Separates the title from the note key in an index key; sorts before every other character. */
const SEP = "\u0000";

/** What the search matches: titles compared without case (and without the separator). */
function titleKey(title: string): string {
  return title.normalize("NFC").toLowerCase().replaceAll(SEP, "");
}

/** Opens the database and its index keyspace. */
async function connect() {
  // If another tab has the database open already, this tab is served by that tab's worker: same
  // API, same data. `open` also asks the browser to keep the storage persistent the first time
  // (`stats().persisted` tells whether it agreed).
  const db = await open(DB_NAME, { valueEncoding: "json" });
  try {
    const titles = await db.keyspace("by-title"); // utf8 keys and values (the defaults)
    return { db, titles };
  } catch (error) {
    await db.close();
    throw error;
  }
}

export class NotesStore {
  private constructor(
    private db: BrowserDatabase<string, JsonValue>,
    private titles: Keyspace<string, string>,
  ) {}

  /** Opens (creating it the first time) the notes database. */
  static async open(): Promise<NotesStore> {
    const { db, titles } = await connect();
    return new NotesStore(db, titles);
  }

  /** Adds a note and its index entry in one atomic batch. */
  async add(title: string, body: string): Promise<StoredNote> {
    const created = new Date().toISOString();
    const key = `${NOTE_PREFIX}${created}:${crypto.randomUUID().slice(0, 8)}`;
    const note: Note = { title, body, created };
    await this.db
      .batch()
      .put(key, note) // the default keyspace (JSON values)
      .put(titleKey(title) + SEP + key, "", this.titles) // the index keyspace
      .write();
    return { key, ...note };
  }

  /** Deletes a note and its index entry, again in one batch. */
  async remove(key: string): Promise<void> {
    const note = (await this.db.get(key)) as Note | undefined;
    if (note === undefined) return; // already gone (deleted in another tab, say)
    await this.db.batch().delete(key).delete(titleKey(note.title) + SEP + key, this.titles).write();
  }

  /** Puts a deleted note back, under its old key (so in its old place), with its index entry. */
  async restore(note: StoredNote): Promise<void> {
    const { key, ...stored } = note;
    await this.db
      .batch()
      .put(key, stored satisfies Note)
      .put(titleKey(note.title) + SEP + key, "", this.titles)
      .write();
  }

  /** The newest notes first: a reverse scan of the "note:" prefix. */
  async newest(limit: number): Promise<StoredNote[]> {
    const notes: StoredNote[] = [];
    for await (const [key, value] of this.db.iterator({ prefix: NOTE_PREFIX, reverse: true, limit })) {
      notes.push({ key, ...(value as Note) });
    }
    return notes;
  }

  /** Notes whose title starts with `query` (ignoring case), by title: a prefix scan of the index. */
  async searchByTitle(query: string, limit: number): Promise<StoredNote[]> {
    const indexKeys = await this.titles.keys({ prefix: titleKey(query), limit }).all();
    const noteKeys = indexKeys.map((k) => k.slice(k.lastIndexOf(SEP) + 1));
    const values = await this.db.getMany(noteKeys); // one round trip for all of them
    return noteKeys.flatMap((key, i) => (values[i] === undefined ? [] : [{ key, ...(values[i] as Note) }]));
  }

  /** How many notes there are (counted over the key range, without reading the values). */
  count(): Promise<number> {
    return this.db.count({ prefix: NOTE_PREFIX });
  }

  /** Engine statistics, plus `persisted` (persistent storage granted) and the OPFS slots. */
  stats() {
    return this.db.stats();
  }

  /** The whole database as a plain tar archive (what `importDatabase` reads). */
  export(): Promise<Blob> {
    return this.db.export();
  }

  /**
   * Calls `onChange` after commits to the notes, made in this tab or in another one — at most
   * once per animation frame: `db.watch()` on the notes' keys (the index changes with them, in
   * the same batches). A write elsewhere wakes nothing here. Runs until `signal` aborts. An
   * import closes and reopens the database: the watch ends with the old handle and starts
   * again on the new one.
   */
  async watch(onChange: () => void, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const _event of this.db.watch({ prefix: NOTE_PREFIX }, { coalesce: "frame", signal })) {
          onChange();
        }
      } catch {
        // Watched on a closed handle (an import under way), or failed: start again below.
      }
      // A watch ends only with its database (or an error): wait a moment before starting
      // again, so that one that keeps failing never spins.
      if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /**
   * Replaces the notes with those of an archive from `export()`. The database must be closed
   * for that: an import into an open database fails with LOCKED, also when another tab has it
   * open (closing here hands it over to that tab). The archive is verified before it replaces
   * anything, so a damaged one fails (CORRUPTION, INVALID_ARGUMENT) and leaves the notes as they
   * were. The database is reopened whatever happens.
   */
  async importArchive(archive: Blob): Promise<void> {
    await this.db.close();
    try {
      await importDatabase(DB_NAME, archive, { overwrite: true });
    } finally {
      ({ db: this.db, titles: this.titles } = await connect());
    }
  }
}
