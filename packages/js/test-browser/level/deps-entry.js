// The third-party modules the Level browser test page imports (abstract-level, which
// shaledb/level builds on, and level-read-stream), bundled into one ES module for the page's
// import map (they are CommonJS): test-browser/level/bundle-deps.mjs writes it.
import * as abstractLevel from "abstract-level";
import * as readStream from "level-read-stream";

export const AbstractLevel = abstractLevel.AbstractLevel;
export const AbstractIterator = abstractLevel.AbstractIterator;
export const AbstractKeyIterator = abstractLevel.AbstractKeyIterator;
export const AbstractValueIterator = abstractLevel.AbstractValueIterator;
export const AbstractSnapshot = abstractLevel.AbstractSnapshot;
export const EntryStream = readStream.EntryStream;
export const KeyStream = readStream.KeyStream;
export const ValueStream = readStream.ValueStream;
