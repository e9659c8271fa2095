// The byte-range tests a watch filters writes with (src/encoding/bounds.ts): a key in a range,
// a range delete meeting a range (never a miss; a needless wake-up at most), prefix ends.
import { describe, expect, it } from "vitest";

import { byteBounds, keyInBounds, prefixEnd, rangeMeetsBounds } from "../src/encoding/bounds.js";

const b = (...bytes: number[]) => new Uint8Array(bytes);
const t = (text: string) => new TextEncoder().encode(text);
const NONE = new Uint8Array(0);

describe("watch ranges", () => {
  it("keyInBounds applies gt/gte/lt/lte and prefix, the inclusive bound winning", () => {
    const range = byteBounds({ gt: t("b"), gte: t("c"), lt: t("m"), prefix: t("c") });
    expect(keyInBounds(t("c"), range)).toBe(true);
    expect(keyInBounds(t("cz"), range)).toBe(true);
    expect(keyInBounds(t("b"), range)).toBe(false);
    expect(keyInBounds(t("d"), range)).toBe(false); // outside the prefix
    const exclusive = byteBounds({ gt: t("a"), lt: t("c") });
    expect([t("a"), t("a\u0000"), t("b"), t("c")].map((k) => keyInBounds(k, exclusive))).toEqual([false, true, true, false]);
    expect(keyInBounds(t("anything"), byteBounds({}))).toBe(true);
  });

  it("prefixEnd is the least key past the prefix; none for all-0xff", () => {
    expect(prefixEnd(t("ab"))).toEqual(t("ac"));
    expect(prefixEnd(b(0x61, 0xff))).toEqual(b(0x62));
    expect(prefixEnd(b(0xff, 0xff))).toBeUndefined();
  });

  it("rangeMeetsBounds: overlapping, touching and disjoint range deletes", () => {
    const watched = byteBounds({ gte: t("m"), lt: t("p") });
    expect(rangeMeetsBounds(t("a"), t("m"), watched)).toBe(false); // ends where the watch starts
    expect(rangeMeetsBounds(t("a"), t("m\u0000"), watched)).toBe(true);
    expect(rangeMeetsBounds(t("p"), t("z"), watched)).toBe(false); // starts at the exclusive end
    expect(rangeMeetsBounds(t("o"), NONE, watched)).toBe(true); // to the keyspace's end
    expect(rangeMeetsBounds(t("a"), t("z"), watched)).toBe(true); // covers it
    const prefixed = byteBounds({ prefix: t("todo:") });
    expect(rangeMeetsBounds(t("todo;"), NONE, prefixed)).toBe(false);
    expect(rangeMeetsBounds(t("todo:5"), t("todo:9"), prefixed)).toBe(true);
    expect(rangeMeetsBounds(t("a"), t("todo:"), prefixed)).toBe(false);
    expect(rangeMeetsBounds(b(0xff, 0xff, 1), NONE, byteBounds({ prefix: b(0xff, 0xff) }))).toBe(true);
    const empty = byteBounds({ gt: t("q"), lt: t("b") });
    expect(rangeMeetsBounds(NONE, NONE, empty)).toBe(false);
  });
});
