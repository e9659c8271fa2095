import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { ShaleError } from "../src/errors.js";
import { readTar } from "../src/archive/tar/reader.js";
import { TarWriter } from "../src/archive/tar/writer.js";

const encoder = new TextEncoder();

const temps: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "shaledb-tar-"));
  temps.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of temps.splice(0)) {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Files of a small database directory: empty, unaligned, block-sized and larger ones. */
function sampleFiles(): { name: string; data: Uint8Array }[] {
  const big = new Uint8Array(70_000);
  for (let i = 0; i < big.length; i++) {
    big[i] = (i * 31 + 7) & 0xff;
  }
  return [
    { name: "CURRENT", data: encoder.encode("MANIFEST-000002\n") },
    { name: "MANIFEST-000002", data: new Uint8Array(512).fill(3) },
    { name: "wal-000003.log", data: new Uint8Array(0) },
    { name: "000004.sst", data: big },
  ];
}

async function archive(directory: string, files: { name: string; data: Uint8Array }[]): Promise<Uint8Array> {
  const writer = new TarWriter(directory, 1_700_000_000);
  for (const { name, data } of files) {
    writer.addFile(name, data);
  }
  const blob = writer.finish();
  expect(blob.type).toBe("application/x-tar");
  return new Uint8Array(await blob.arrayBuffer());
}

/** The code and message of what `readTar` throws for `bytes`. */
function refusal(bytes: Uint8Array): ShaleError {
  try {
    readTar(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(ShaleError);
    expect((error as ShaleError).code).toBe("INVALID_ARGUMENT");
    return error as ShaleError;
  }
  throw new Error("readTar accepted the archive");
}

/** A ustar header block built by hand (checksum fixed up), for malformed archives. */
function headerBlock(name: string, type: string, size: number, prefix = ""): Uint8Array {
  const block = new Uint8Array(512);
  block.set(encoder.encode(name), 0);
  block.set(encoder.encode("0000644\0"), 100);
  block.set(encoder.encode(size.toString(8).padStart(11, "0") + "\0"), 124);
  block.set(encoder.encode("00000000000\0"), 136);
  block[156] = type.charCodeAt(0);
  block.set(encoder.encode("ustar\u000000"), 257);
  block.set(encoder.encode(prefix), 345);
  fixChecksum(block);
  return block;
}

function fixChecksum(block: Uint8Array): void {
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) {
    sum += byte;
  }
  block.set(encoder.encode(sum.toString(8).padStart(6, "0") + "\0 "), 148);
}

/** Entries (header, data padded) and the two end blocks. */
function tarOf(...entries: { header: Uint8Array; data?: Uint8Array }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const { header, data } of entries) {
    parts.push(header);
    if (data !== undefined) {
      const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
      padded.set(data);
      parts.push(padded);
    }
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function file(name: string, text: string): { header: Uint8Array; data: Uint8Array } {
  const data = encoder.encode(text);
  return { header: headerBlock(name, "0", data.length), data };
}

describe("TarWriter and readTar", () => {
  it("round-trip a directory of files", async () => {
    const files = sampleFiles();
    const bytes = await archive("mydb", files);
    expect(bytes.length % 512).toBe(0);
    const read = readTar(bytes);
    expect(read.directory).toBe("mydb");
    expect(read.files.map((f) => f.name)).toEqual(files.map((f) => f.name));
    for (const [i, { data }] of files.entries()) {
      expect(read.files[i]!.data).toEqual(data);
    }
  });

  it("write an archive that tar -xf extracts into exactly the files", async () => {
    const files = sampleFiles();
    const bytes = await archive("shaledb db", files);
    const dir = tempDir();
    writeFileSync(join(dir, "x.tar"), bytes);
    execFileSync("tar", ["-xf", "x.tar"], { cwd: dir });
    expect(readdirSync(join(dir, "shaledb db")).sort()).toEqual(files.map((f) => f.name).sort());
    for (const { name, data } of files) {
      expect(new Uint8Array(readFileSync(join(dir, "shaledb db", name)))).toEqual(data);
    }
    const listing = execFileSync("tar", ["-tvf", "x.tar"], { cwd: dir, encoding: "utf8" });
    expect(listing).toMatch(/^drwxr-xr-x 0\/0 .* shaledb db\/$/m);
    expect(listing).toMatch(/^-rw-r--r-- 0\/0 +16 2023-11-1\d \d\d:\d\d shaledb db\/CURRENT$/m);
  });

  it("use the prefix field for paths longer than 100 bytes", async () => {
    const directory = "d".repeat(60);
    const name = "f".repeat(90);
    const bytes = await archive(directory, [{ name, data: encoder.encode("long") }]);
    const dir = tempDir();
    writeFileSync(join(dir, "x.tar"), bytes);
    execFileSync("tar", ["-xf", "x.tar"], { cwd: dir });
    expect(readFileSync(join(dir, directory, name), "utf8")).toBe("long");
    expect(readTar(bytes).files[0]!.name).toBe(name);
  });

  it("refuse names and values that do not fit", () => {
    const codeOf = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (error) {
        return (error as ShaleError).code;
      }
      return undefined;
    };
    expect(codeOf(() => new TarWriter("d".repeat(100), 0))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => new TarWriter("a/b", 0))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => new TarWriter("..", 0))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => new TarWriter("ok", -1))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => new TarWriter("ok", 8 ** 11))).toBe("INVALID_ARGUMENT");
    const writer = new TarWriter("ok", 0);
    expect(codeOf(() => writer.addFile("f".repeat(101), new Uint8Array(0)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => writer.addFile("a/b", new Uint8Array(0)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => writer.addFile("\ud800", new Uint8Array(0)))).toBe("INVALID_ARGUMENT");
    writer.addFile("x", new Uint8Array(1));
    expect(codeOf(() => writer.addFile("x", new Uint8Array(1)))).toBe("INVALID_ARGUMENT");
    writer.finish();
    expect(codeOf(() => writer.addFile("y", new Uint8Array(1)))).toBe("INVALID_ARGUMENT");
  });

  for (const format of ["gnu", "ustar", "posix", "v7"]) {
    it(`read what tar -cf --format=${format} makes of a directory`, () => {
      const dir = tempDir();
      const db = join(dir, "db");
      mkdirSync(db);
      const files = sampleFiles();
      const longName = format === "ustar" || format === "v7" ? "short.log" : `${"l".repeat(120)}.log`;
      files.push({ name: longName, data: encoder.encode("long name") });
      for (const { name, data } of files) {
        writeFileSync(join(db, name), data);
      }
      execFileSync("tar", [`--format=${format}`, "-cf", "x.tar", "db"], { cwd: dir });
      const read = readTar(new Uint8Array(readFileSync(join(dir, "x.tar"))));
      expect(read.directory).toBe("db");
      const byName = new Map(read.files.map((f) => [f.name, f.data]));
      expect([...byName.keys()].sort()).toEqual(files.map((f) => f.name).sort());
      for (const { name, data } of files) {
        expect(byName.get(name)).toEqual(data);
      }
    });
  }

  it("read files at the top level, as tar -C dir . makes them", () => {
    const dir = tempDir();
    const db = join(dir, "db");
    mkdirSync(db);
    writeFileSync(join(db, "CURRENT"), "MANIFEST-000001\n");
    writeFileSync(join(db, "MANIFEST-000001"), "m");
    execFileSync("tar", ["-cf", join(dir, "x.tar"), "-C", db, "."]);
    const read = readTar(new Uint8Array(readFileSync(join(dir, "x.tar"))));
    expect(read.directory).toBeUndefined();
    expect(read.files.map((f) => f.name).sort()).toEqual(["CURRENT", "MANIFEST-000001"]);
    const plain = readTar(tarOf(file("CURRENT", "x")));
    expect(plain).toEqual({ directory: undefined, files: [{ name: "CURRENT", data: encoder.encode("x") }] });
  });

  it("return views into the archive's bytes", async () => {
    const bytes = await archive("db", sampleFiles());
    const read = readTar(bytes);
    expect(read.files[0]!.data.buffer).toBe(bytes.buffer);
  });

  describe("refuse", () => {
    it("a bad checksum", async () => {
      const bytes = await archive("db", sampleFiles());
      bytes[512 + 10]! ^= 1; // the second header's name
      expect(refusal(bytes).message).toMatch(/bad header checksum at byte 512/);
    });

    it("a truncated archive, and one without its end blocks", async () => {
      const bytes = await archive("db", sampleFiles());
      expect(refusal(bytes.subarray(0, 1030)).message).toMatch(/entry at byte 512 has size 16, which runs past the end/);
      expect(refusal(bytes.subarray(0, 1000)).message).toMatch(/partial header block at byte 512/);
      expect(refusal(bytes.subarray(0, bytes.length - 1024)).message).toMatch(/without the zero blocks/);
      expect(refusal(new Uint8Array(0)).message).toMatch(/ends at byte 0/);
    });

    it("a size field that runs past the end", () => {
      const bytes = tarOf({ header: headerBlock("CURRENT", "0", 1_000_000) });
      expect(refusal(bytes).message).toMatch(/entry at byte 0 has size 1000000, which runs past the end/);
    });

    it("nested directories", () => {
      expect(refusal(tarOf(file("db/sub/x", "1"))).message).toMatch(/nested directory/);
      expect(refusal(tarOf({ header: headerBlock("db/sub/", "5", 0) })).message).toMatch(/nested directory/);
    });

    it("files in two directories, or both at the top and in a directory", () => {
      expect(refusal(tarOf(file("a/x", "1"), file("b/y", "2"))).message).toMatch(/more than one top-level directory/);
      expect(refusal(tarOf(file("x", "1"), file("a/y", "2"))).message).toMatch(/top level beside directory "a"/);
      expect(refusal(tarOf({ header: headerBlock("a/", "5", 0) }, file("x", "1"))).message).toMatch(/top level/);
    });

    it("names with .. and absolute names", () => {
      expect(refusal(tarOf(file("../x", "1"))).message).toMatch(/leaves the directory/);
      expect(refusal(tarOf(file("db/../x", "1"))).message).toMatch(/leaves the directory/);
      expect(refusal(tarOf(file("/etc/passwd", "1"))).message).toMatch(/absolute name/);
      expect(refusal(tarOf({ header: headerBlock("x", "0", 1, "/abs") , data: encoder.encode("1") })).message)
        .toMatch(/absolute name/);
    });

    it("links, devices and other entry types", () => {
      const dir = tempDir();
      mkdirSync(join(dir, "db"));
      writeFileSync(join(dir, "db", "CURRENT"), "x");
      symlinkSync("CURRENT", join(dir, "db", "link"));
      execFileSync("tar", ["-cf", "x.tar", "db"], { cwd: dir });
      expect(refusal(new Uint8Array(readFileSync(join(dir, "x.tar")))).message).toMatch(/symbolic link/);
      expect(refusal(tarOf({ header: headerBlock("db/h", "1", 0) })).message).toMatch(/hard link/);
      expect(refusal(tarOf({ header: headerBlock("db/c", "3", 0) })).message).toMatch(/character device/);
      expect(refusal(tarOf({ header: headerBlock("db/b", "4", 0) })).message).toMatch(/block device/);
      expect(refusal(tarOf({ header: headerBlock("db/f", "6", 0) })).message).toMatch(/FIFO/);
      expect(refusal(tarOf({ header: headerBlock("db/s", "S", 0) })).message).toMatch(/unsupported type "S"/);
    });

    it("duplicate names", () => {
      expect(refusal(tarOf(file("db/x", "1"), file("db/x", "2"))).message).toMatch(/appears twice/);
    });

    it("an archive without files", async () => {
      expect(refusal(new Uint8Array(1024)).message).toMatch(/holds no files/);
      expect(refusal(await archive("db", [])).message).toMatch(/holds no files/);
    });

    it("bytes that are not a tar archive", () => {
      const junk = new Uint8Array(2048).fill(0x41);
      expect(refusal(junk).message).toMatch(/byte 148|checksum/);
      const badMagic = headerBlock("x", "0", 0);
      badMagic.set(encoder.encode("zip!"), 257);
      fixChecksum(badMagic);
      expect(refusal(tarOf({ header: badMagic })).message).toMatch(/unknown tar magic at byte 257/);
    });
  });
});
