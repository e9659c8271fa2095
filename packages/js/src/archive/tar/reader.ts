/**
 * Reading archives to import: those of `export()` and of `tar -cf` (GNU, ustar or pax formats),
 * regular files all at the top level or all inside one top-level directory. Anything else is
 * refused with an `INVALID_ARGUMENT` error naming the problem and its byte offset. Works in
 * browsers and Node alike.
 *
 * @module
 */
import { BLOCK, tarError, utf8 } from "./fields.js";
import { decodeName, isZero, parseHeader } from "./header.js";

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
