/**
 * The import path `./storage-host.js` of `node-storage.ts`, whose content belongs to the work that
 * moves the lock-file protocol into Rust and is not edited here. The contract itself is
 * `../engine/storage-host.ts`; once that work has merged, point `node-storage.ts` there and delete
 * this file.
 *
 * @module
 */
export { OpenMode, type StorageHost } from "../engine/storage-host.js";
