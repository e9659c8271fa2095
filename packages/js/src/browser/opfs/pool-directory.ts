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
  /** Opens `name` for exclusive synchronous access, creating it (empty) if `create`. */
  open(name: string, create: boolean): Promise<SyncAccessHandleLike>;
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

/** A {@link PoolDirectory} on an OPFS directory (usable only in a dedicated worker). */
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
    async open(name, create) {
      const file = await dir.getFileHandle(name, { create });
      return (file as unknown as SyncAccessFileHandle).createSyncAccessHandle();
    },
    remove(name) {
      return dir.removeEntry(name);
    },
  };
}
