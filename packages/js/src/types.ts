/**
 * The public types of the `shaledb` API, in one layer (`./types/`, by concept) that every other
 * layer imports and that imports none: the synchronous API (Node: `openSync`), the Promise API
 * (`open`, in Node and browsers) and the options and values both share.
 *
 * @module
 */
export type * from "./types/encodings.js";
export type * from "./types/options.js";
export type * from "./types/keyspace.js";
export type * from "./types/snapshot.js";
export type * from "./types/batch.js";
export type * from "./types/transaction.js";
export type * from "./types/database.js";
export type * from "./types/queue.js";
export type * from "./types/topic.js";
export type * from "./types/changes.js";
export type * from "./types/watch.js";
