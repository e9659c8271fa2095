// WebAssembly memory grows ahead of need (crates/wasm/src/memory_growth.rs): once JavaScript sees
// the memory has grown, the instance keeps an eighth of it (at least 1 MiB) free, so that the
// allocations after a growth do not grow it again page by page (in Node 20, each growth past
// about 32 MiB cost a minor GC at the next ArrayBuffer allocation).
import { describe, expect, it } from "vitest";

import "../src/node.js"; // registers the module's loader (for the src modules)

import { ensureLoadedSync, wasm } from "../src/engine/instance.js";
import { memoryBytes, memorySize } from "../src/engine/scratch.js";

const MiB = 1 << 20;

describe("memory growth", () => {
  it("when JavaScript sees the memory grown, the instance reserves an eighth of it ahead at once", () => {
    ensureLoadedSync();
    memoryBytes();
    // A scratch buffer of 4 MiB: the allocator grows the memory by about that much, no more.
    wasm.scratchReserve(4 * MiB);
    const grown = memorySize();
    // The next look at the memory finds its old buffer detached and reserves ahead.
    memoryBytes();
    const ahead = Math.max(grown / 8, MiB);
    // The allocator's free space after the 4 MiB growth is under a page (64 KiB), so reserving
    // `ahead` grows the memory by at least the rest.
    expect(memorySize() - grown).toBeGreaterThanOrEqual(ahead - 64 * 1024);
  });

  it("reserving ahead twice in a row grows the memory at most once", () => {
    ensureLoadedSync();
    wasm.memoryReserveAhead();
    const once = memorySize();
    wasm.memoryReserveAhead();
    expect(memorySize()).toBe(once);
  });
});
