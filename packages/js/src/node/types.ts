/**
 * The import path `./types.js` of `node-storage.ts`, whose content belongs to the work that moves
 * the lock-file protocol into Rust and is not edited here. The type lives in
 * `../engine/types.ts`; once that work has merged, point `node-storage.ts` there and delete this
 * file.
 *
 * @module
 */
export type { DirectorySync } from "../engine/types.js";
