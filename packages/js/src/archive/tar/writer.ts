/**
 * Writing the export archive (docs/FORMAT.md, "Export archive"): a plain POSIX ustar tar of one
 * database directory, which `tar -xf` extracts into a directory the native engine and Node open
 * as is. {@link TarWriter} writes the directory entry `<dir>/` (mode 0755) and one entry per file
 * `<dir>/<file>` (mode 0644), uid/gid 0, empty user and group names, the given mtime, data
 * padded to 512 bytes, two zero blocks at the end. Paths over 100 bytes use the ustar `prefix`
 * field; what does not fit is refused. Works in browsers and Node alike.
 *
 * @module
 */
import { BLOCK, MAX_OCTAL_11, encoder, tarError, utf8 } from "./fields.js";
import { header } from "./header.js";

/**
 * Builds a tar archive of directory `directory` as a `Blob`, file by file: each file's bytes are
 * copied into a `Blob` when added, so the caller may drop its `Uint8Array` at once.
 */
export class TarWriter {
  readonly #directory: string;
  readonly #mtime: number;
  readonly #parts: Blob[] = [];
  readonly #names = new Set<string>();
  #finished = false;

  /**
   * @param directory The top directory's name: one path component (no `/`, not `.` or `..`),
   *   at most 99 UTF-8 bytes (so that `<directory>/` fits the 100-byte name field).
   * @param mtimeSeconds Modification time of every entry, in seconds since 1970 (an integer in
   *   `[0, 8^11)`).
   */
  constructor(directory: string, mtimeSeconds: number) {
    checkComponent("directory name", directory);
    const entry = utf8Bytes("directory name", `${directory}/`);
    if (entry.length > 100) {
      throw tarError(`directory name ${JSON.stringify(directory)} is longer than 99 bytes`);
    }
    if (!Number.isSafeInteger(mtimeSeconds) || mtimeSeconds < 0 || mtimeSeconds > MAX_OCTAL_11) {
      throw tarError(`bad mtime ${String(mtimeSeconds)}: an integer in [0, 8^11) is needed`);
    }
    this.#directory = directory;
    this.#mtime = mtimeSeconds;
    this.#parts.push(new Blob([header(entry, new Uint8Array(0), "5", 0o755, 0, mtimeSeconds)]));
  }

  /** Adds file `<directory>/<name>` holding `data` (at most 8 GiB - 1 bytes). */
  addFile(name: string, data: Uint8Array): void {
    if (this.#finished) {
      throw tarError("addFile after finish");
    }
    checkComponent("file name", name);
    if (this.#names.has(name)) {
      throw tarError(`file ${JSON.stringify(name)} was added twice`);
    }
    if (data.length > MAX_OCTAL_11) {
      throw tarError(`file ${JSON.stringify(name)} is larger than 8 GiB - 1 bytes`);
    }
    const full = utf8Bytes("file name", `${this.#directory}/${name}`);
    let nameField = full;
    let prefix: Uint8Array = new Uint8Array(0);
    if (full.length > 100) {
      nameField = utf8Bytes("file name", name);
      prefix = utf8Bytes("directory name", this.#directory);
      if (nameField.length > 100) {
        throw tarError(`file name ${JSON.stringify(name)} is longer than 100 bytes`);
      }
    }
    this.#names.add(name);
    const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
    this.#parts.push(
      new Blob([
        header(nameField, prefix, "0", 0o644, data.length, this.#mtime),
        ownBuffer(data),
        new Uint8Array(padding),
      ]),
    );
  }

  /** The archive: everything added, then the two zero blocks. The writer is done afterwards. */
  finish(): Blob {
    if (this.#finished) {
      throw tarError("finish called twice");
    }
    this.#finished = true;
    this.#parts.push(new Blob([new Uint8Array(2 * BLOCK)]));
    const blob = new Blob(this.#parts, { type: "application/x-tar" });
    this.#parts.length = 0;
    return blob;
  }
}

/** A name usable as one path component: not empty, `.` or `..`, no `/` or NUL. */
function checkComponent(what: string, name: string): void {
  if (
    typeof name !== "string" ||
    name === "" ||
    name === "." ||
    name === ".." ||
    /[/\0]/.test(name)
  ) {
    throw tarError(`bad ${what} ${JSON.stringify(name)}: one path component is needed`);
  }
}

/** UTF-8 bytes of `text`, refusing lone surrogates (which UTF-8 cannot carry). */
function utf8Bytes(what: string, text: string): Uint8Array {
  const bytes = encoder.encode(text);
  if (utf8.decode(bytes) !== text) {
    throw tarError(`bad ${what} ${JSON.stringify(text)}: not valid Unicode`);
  }
  return bytes;
}

/** `data` as a `BlobPart` (a view of a `SharedArrayBuffer` is copied). */
function ownBuffer(data: Uint8Array): Uint8Array<ArrayBuffer> {
  return data.buffer instanceof ArrayBuffer ? (data as Uint8Array<ArrayBuffer>) : data.slice();
}
