/**
 * The directory holding a slot pool's files: OPFS in a dedicated worker, or a stand-in in tests.
 *
 * @module
 */

/** The part of `FileSystemSyncAccessHandle` the pool uses (so tests can supply their own). */
export interface SyncAccessHandleLike {
  read(buffer: Uint8Array, options: { at: number }): number;
  write(buffer: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

/** The directory holding a pool's slot files (the real one is {@link opfsPoolDirectory}). */
export interface PoolDirectory {
  /** The names of the files in the directory (subdirectories excluded). */
  list(): Promise<string[]>;
  /**
   * Opens `name` for exclusive synchronous access. With `create`, creates it if missing, and
   * may write it as `createdSize` zero bytes before opening it (the OPFS one does, where the
   * browser can: see {@link opfsPoolDirectory}); else its content is left as it is.
   */
  open(name: string, create: boolean, createdSize?: number): Promise<SyncAccessHandleLike>;
  /** Removes the (closed) file `name`. */
  remove(name: string): Promise<void>;
}

/** The OPFS side of {@link PoolDirectory}: async iteration is not in TypeScript's DOM lib. */
interface IterableDirectoryHandle {
  entries(): AsyncIterable<[string, FileSystemHandle]>;
}

/** `FileSystemFileHandle.createSyncAccessHandle` exists only in workers' lib. */
interface SyncAccessFileHandle {
  createSyncAccessHandle(): Promise<SyncAccessHandleLike>;
}

/** `FileSystemFileHandle.createWritable`, missing in some browsers' workers. */
interface WritableFileHandle {
  createWritable?: () => Promise<{ write(data: Uint8Array): Promise<void>; close(): Promise<void> }>;
}

/**
 * A {@link PoolDirectory} on an OPFS directory (usable only in a dedicated worker).
 *
 * A new slot file is written as `createdSize` zero bytes through `createWritable()` before its
 * access handle opens, not sized by the handle: Chromium reserves at least 1 MiB of the origin's
 * quota for an access handle on each `truncate()` (even one to the same size) and each write
 * past the file's size at open, held until the handle closes; a pool of 25 slot files sized by
 * their handles held 25 MiB of quota for 100 KiB of files.
 */
export function opfsPoolDirectory(dir: FileSystemDirectoryHandle): PoolDirectory {
  return {
    async list() {
      const names: string[] = [];
      for await (const [name, handle] of (dir as unknown as IterableDirectoryHandle).entries()) {
        if (handle.kind === "file") {
          names.push(name);
        }
      }
      return names;
    },
    async open(name, create, createdSize) {
      const file = await dir.getFileHandle(name, { create });
      const writable = (file as unknown as WritableFileHandle).createWritable;
      if (create && createdSize !== undefined && writable !== undefined) {
        // Best effort: where this fails, the caller sizes the file through the handle.
        try {
          const stream = await writable.call(file);
          await stream.write(new Uint8Array(createdSize));
          await stream.close();
        } catch {
          // e.g. a browser whose createWritable refuses in workers
        }
      }
      return (file as unknown as SyncAccessFileHandle).createSyncAccessHandle();
    },
    remove(name) {
      return dir.removeEntry(name);
    },
  };
}
