/**
 * The export archive (docs/FORMAT.md, "Export archive"): a plain POSIX ustar tar of one database
 * directory, which `tar -xf` extracts into a directory the native engine and Node open as is.
 * Works in browsers and Node alike (no `Buffer`, no `node:` imports).
 *
 * - {@link TarWriter} writes the directory entry `<dir>/` (mode 0755) and one entry per file
 *   `<dir>/<file>` (mode 0644), uid/gid 0, empty user and group names, the given mtime, data
 *   padded to 512 bytes, two zero blocks at the end. Paths over 100 bytes use the ustar `prefix`
 *   field; what does not fit is refused.
 * - {@link readTar} reads such archives and those of `tar -cf` (GNU, ustar or pax formats):
 *   regular files all at the top level or all inside one top-level directory. Anything else is
 *   refused with an `INVALID_ARGUMENT` error naming the problem and its byte offset.
 *
 * @module
 */
import { invalidArgument } from "../../errors.js";
import type { ShaleError } from "../../errors.js";

const BLOCK = 512;
/** The largest size or mtime an 11-digit octal field holds (8 GiB - 1 for a size). */
const MAX_OCTAL_11 = 8 ** 11 - 1;

const encoder = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

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

/** One regular file of an archive; `data` may be a view into the archive's bytes. */
export interface TarFile {
  readonly name: string;
  readonly data: Uint8Array;
}

/** What {@link readTar} found. */
export interface TarContents {
  /** The one top-level directory holding the files, or `undefined` when they are at the top. */
  readonly directory: string | undefined;
  /** The regular files, in archive order, named without the directory. */
  readonly files: TarFile[];
}

/**
 * Reads a tar archive of one directory of regular files. Directory entries are checked and
 * skipped; pax (`x`) and GNU long-name (`L`) headers give the next entry's path and size; pax
 * global headers (`g`) are skipped. Refused (`INVALID_ARGUMENT`, with the byte offset): a bad
 * checksum or magic, a truncated archive or one without its end blocks, a size running past
 * the end, absolute names or `..`, nested directories, files both at the top and in a directory
 * or in two directories, links, devices and other entry types, duplicate names, no file at all.
 */
export function readTar(bytes: Uint8Array): TarContents {
  const files: { path: string[]; data: Uint8Array; offset: number }[] = [];
  const directories = new Map<string, number>();
  let pending: { path?: string; size?: number; offset: number } | undefined;
  let offset = 0;
  for (;;) {
    if (offset + BLOCK > bytes.length) {
      throw tarError(
        offset >= bytes.length
          ? `truncated archive: it ends at byte ${bytes.length} without the zero blocks ` +
              "that end a tar archive"
          : `truncated archive: a partial header block at byte ${offset}`,
      );
    }
    const block = bytes.subarray(offset, offset + BLOCK);
    if (isZero(block)) {
      if (pending !== undefined) {
        throw tarError(`the extended header at byte ${pending.offset} is not followed by an entry`);
      }
      break;
    }
    const entry = parseHeader(block, offset);
    const meta = entry.type === "x" || entry.type === "L" || entry.type === "g";
    const size = meta ? entry.size : (pending?.size ?? entry.size);
    const dataStart = offset + BLOCK;
    if (dataStart + size > bytes.length) {
      throw tarError(
        `the entry at byte ${offset} has size ${size}, which runs past the end of the archive ` +
          `(${bytes.length} bytes)`,
      );
    }
    const data = bytes.subarray(dataStart, dataStart + size);
    const next = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    switch (entry.type) {
      case "x":
        if (pending !== undefined) {
          throw tarError(`two extended headers in a row at byte ${offset}`);
        }
        pending = { ...parsePax(data, offset), offset };
        offset = next;
        continue;
      case "L":
        if (pending?.path !== undefined) {
          throw tarError(`two long names for one entry at byte ${offset}`);
        }
        pending = { ...pending, path: decodeName(data, offset), offset };
        offset = next;
        continue;
      case "g":
        offset = next;
        continue;
      default:
        break;
    }
    const path = splitPath(pending?.path ?? entry.name, offset);
    pending = undefined;
    if (entry.type === "5") {
      if (path.length > 1) {
        throw tarError(`nested directory ${JSON.stringify(path.join("/"))} at byte ${offset}`);
      }
      if (path.length === 1) {
        directories.set(path[0]!, offset);
      }
    } else if (entry.type === "0" || entry.type === "\0" || entry.type === "7") {
      if (path.length === 0) {
        throw tarError(`a file entry without a name at byte ${offset}`);
      }
      if (path.length > 2) {
        throw tarError(
          `file ${JSON.stringify(path.join("/"))} at byte ${offset} is in a nested directory`,
        );
      }
      files.push({ path, data, offset });
    } else {
      throw tarError(
        `entry ${JSON.stringify(path.join("/"))} at byte ${offset} is ${entryKind(entry.type)}; ` +
          "only regular files and directories can be imported",
      );
    }
    offset = next;
  }
  return collect(files, directories);
}

/** Checks the files' layout and strips the directory from their names. */
function collect(
  files: readonly { path: string[]; data: Uint8Array; offset: number }[],
  directories: Map<string, number>,
): TarContents {
  if (files.length === 0) {
    throw tarError("the archive holds no files");
  }
  for (const { path, offset } of files) {
    if (path.length === 2 && !directories.has(path[0]!)) {
      directories.set(path[0]!, offset);
    }
  }
  if (directories.size > 1) {
    const names = [...directories.keys()].map((n) => JSON.stringify(n)).join(", ");
    throw tarError(`the archive holds more than one top-level directory (${names})`);
  }
  const [directory] = directories.keys();
  const result: TarFile[] = [];
  const seen = new Set<string>();
  for (const { path, data, offset } of files) {
    if (path.length === 1 && directory !== undefined) {
      throw tarError(
        `file ${JSON.stringify(path[0])} at byte ${offset} is at the top level beside directory ` +
          JSON.stringify(directory),
      );
    }
    const name = path[path.length - 1]!;
    if (seen.has(name)) {
      throw tarError(
        `file ${JSON.stringify(path.join("/"))} appears twice (again at byte ${offset})`,
      );
    }
    seen.add(name);
    result.push({ name, data });
  }
  return { directory, files: result };
}

interface Header {
  readonly name: string;
  readonly type: string;
  readonly size: number;
}

/** Checks a header block's checksum and magic and reads its name, type and size. */
function parseHeader(block: Uint8Array, offset: number): Header {
  const stored = parseNumber(block, 148, 8, "checksum", offset);
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += byte;
    signed += byte < 0x80 ? byte : byte - 0x100;
  }
  if (stored !== unsigned && stored !== signed) {
    throw tarError(`bad header checksum at byte ${offset} (not a tar archive, or damaged)`);
  }
  const magic = String.fromCharCode(...block.subarray(257, 265));
  const posix = magic.startsWith("ustar\0");
  if (!posix && magic !== "ustar  \0" && !isZero(block.subarray(257, 265))) {
    throw tarError(`unknown tar magic at byte ${offset + 257}`);
  }
  let name = decodeName(block.subarray(0, 100), offset);
  if (posix && block[345] !== 0) {
    name = `${decodeName(block.subarray(345, 500), offset)}/${name}`;
  }
  return {
    name,
    type: String.fromCharCode(block[156]!),
    size: parseNumber(block, 124, 12, "size", offset),
  };
}

/**
 * A numeric field: octal digits, optionally surrounded by spaces and ended by NUL or space, or
 * GNU's base-256 form (first byte 0x80). Throws for anything else.
 */
function parseNumber(
  block: Uint8Array,
  start: number,
  length: number,
  what: string,
  offset: number,
): number {
  const field = block.subarray(start, start + length);
  if (field[0] === 0x80) {
    let value = 0;
    for (let i = 1; i < field.length; i++) {
      value = value * 256 + field[i]!;
    }
    if (!Number.isSafeInteger(value)) {
      throw tarError(`the ${what} field at byte ${offset + start} is too large`);
    }
    return value;
  }
  let i = 0;
  while (i < field.length && field[i] === 0x20) {
    i++;
  }
  let value = 0;
  let digits = 0;
  while (i < field.length && field[i]! >= 0x30 && field[i]! <= 0x37) {
    value = value * 8 + (field[i]! - 0x30);
    digits++;
    i++;
  }
  while (i < field.length && (field[i] === 0x20 || field[i] === 0)) {
    i++;
  }
  if (i !== field.length || (digits === 0 && what === "checksum")) {
    throw tarError(`bad ${what} field at byte ${offset + start} (not a tar archive, or damaged)`);
  }
  return value;
}

/** The `path` and `size` records of a pax extended header (other keys are ignored). */
function parsePax(data: Uint8Array, offset: number): { path?: string; size?: number } {
  const result: { path?: string; size?: number } = {};
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    const length = space < 0 ? NaN : Number(String.fromCharCode(...data.subarray(pos, space)));
    if (
      !Number.isSafeInteger(length) ||
      length <= space - pos ||
      pos + length > data.length ||
      data[pos + length - 1] !== 0x0a
    ) {
      throw tarError(`malformed pax extended header at byte ${offset}`);
    }
    let record: string;
    try {
      record = utf8.decode(data.subarray(space + 1, pos + length - 1));
    } catch {
      throw tarError(`pax extended header at byte ${offset} is not UTF-8`);
    }
    const eq = record.indexOf("=");
    if (eq < 1) {
      throw tarError(`malformed pax extended header at byte ${offset}`);
    }
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === "path") {
      result.path = value;
    } else if (key === "size") {
      if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
        throw tarError(`bad pax size ${JSON.stringify(value)} at byte ${offset}`);
      }
      result.size = Number(value);
    }
    pos += length;
  }
  return result;
}

/** A path's components without empty and `.` ones; refuses absolute paths and `..`. */
function splitPath(path: string, offset: number): string[] {
  if (path.startsWith("/")) {
    throw tarError(`absolute name ${JSON.stringify(path)} at byte ${offset}`);
  }
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) {
    throw tarError(`name ${JSON.stringify(path)} at byte ${offset} leaves the directory ("..")`);
  }
  return parts;
}

/** A NUL-terminated UTF-8 name. */
function decodeName(field: Uint8Array, offset: number): string {
  const end = field.indexOf(0);
  try {
    return utf8.decode(end < 0 ? field : field.subarray(0, end));
  } catch {
    throw tarError(`a name that is not UTF-8 at byte ${offset}`);
  }
}

function entryKind(type: string): string {
  switch (type) {
    case "1":
      return "a hard link";
    case "2":
      return "a symbolic link";
    case "3":
      return "a character device";
    case "4":
      return "a block device";
    case "6":
      return "a FIFO";
    default:
      return `of unsupported type ${JSON.stringify(type)}`;
  }
}

/** A 512-byte ustar header. */
function header(
  name: Uint8Array,
  prefix: Uint8Array,
  type: "0" | "5",
  mode: number,
  size: number,
  mtime: number,
): Uint8Array<ArrayBuffer> {
  const block = new Uint8Array(BLOCK);
  block.set(name, 0);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0); // uid
  writeOctal(block, 116, 8, 0); // gid
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, mtime);
  block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  block[156] = type.charCodeAt(0);
  block.set(encoder.encode("ustar\u000000"), 257); // magic "ustar\0", version "00"
  writeOctal(block, 329, 8, 0); // devmajor
  writeOctal(block, 337, 8, 0); // devminor
  block.set(prefix, 345);
  let sum = 0;
  for (const byte of block) {
    sum += byte;
  }
  writeOctal(block, 148, 7, sum); // six digits and NUL; the eighth byte stays a space
  return block;
}

/** `value` as `length - 1` zero-padded octal digits and a NUL. */
function writeOctal(block: Uint8Array, start: number, length: number, value: number): void {
  const digits = value.toString(8).padStart(length - 1, "0");
  for (let i = 0; i < length - 1; i++) {
    block[start + i] = digits.charCodeAt(i);
  }
  block[start + length - 1] = 0;
}

function isZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0) {
      return false;
    }
  }
  return true;
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

function tarError(message: string): ShaleError {
  return invalidArgument(`tar archive: ${message}`);
}
